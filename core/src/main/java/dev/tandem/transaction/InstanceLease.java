package dev.tandem.transaction;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The lease one running app instance holds in the {@link DecisionLog}, renewed while it runs. When
 * it expires, a live instance of the same app (same id prefix, so it has the clusters'
 * configuration) may claim it and take over the instance's in-doubt transactions. A claimed lease
 * stays in the log (marked {@link #takenOver()} once the claimant is done) until a new run of the
 * instance takes a fresh one: meanwhile the log refuses decisions of the claimed owner, so a
 * paused run that wakes up cannot decide a transaction whose participants its claimant aborted. The idea is the lease of the Chubby paper (Burrows, OSDI 2006),
 * with the log's order, not clocks, deciding between a decision and a claim.
 * <p>
 * The lease also keeps the instance's <b>run history</b> (issue 26 item 1): the runs that held it
 * before the current one ({@link #pastRuns()}), and whether the current run released it
 * ({@link #released()}: a clean close or a failed start-up keeps the record instead of removing
 * it). None of those runs ever gets the lease back, so none decides again: a restart or a claimant
 * fences the transactional ids of every run in {@link #runsToFence()}, not only of the last
 * holder. The decision log prunes runs that left more than {@link #RUN_HISTORY_MS} ago, and keeps
 * at most {@link #MAX_PAST_RUNS}.
 * <p>
 * Immutable and thread-safe.
 *
 * @param owner the owner id, {@code <id-prefix>.<instance-id>}
 * @param idPrefix the app's id prefix: instances of one app may take over each other
 * @param instanceId the instance id
 * @param incarnation a random id of one run of the instance: a restart gets a new one
 * @param expiresAtMs when the lease expires unless renewed, epoch milliseconds of the renewing
 *     instance's clock
 * @param claimedBy the owner id of the live instance that claimed the lease, or null
 * @param takenOver whether the claimant finished the takeover (decided transactions committed,
 *     open ones aborted); only when claimed
 * @param pastRuns the runs that held the lease before {@code incarnation}, oldest first, never
 *     containing it; empty from a decision log (or a query) that keeps no run history
 * @param released whether {@code incarnation} released the lease (a clean close, or a start-up that
 *     failed after taking it): the lease is free for the next run, which fences every run here
 * @since 0.1.0
 */
public record InstanceLease(String owner, String idPrefix, String instanceId, String incarnation, long expiresAtMs,
		@Nullable String claimedBy, boolean takenOver, List<PastRun> pastRuns, boolean released) {

	/**
	 * How long a run stays in the history after it left the lease, milliseconds (one hour): longer
	 * than any Kafka transaction may stay open (the brokers' {@code transaction.max.timeout.ms} is
	 * 15 minutes by default), so every run whose transaction may still be open is fenced.
	 */
	public static final long RUN_HISTORY_MS = 60L * 60 * 1000;

	/**
	 * Most runs kept in the history (the newest ones): 512, so that at the default lease timeout
	 * (10 s) the hour of {@link #RUN_HISTORY_MS}, not the count, prunes a crash loop's runs. A run
	 * that took the lease from a dead run and failed before fencing it leaves the lease to expire,
	 * so such a loop adds at most one run per lease timeout; only lease timeouts below about 7 s
	 * let the count prune a run that may still have an open transaction. A full history is about
	 * 25 KB.
	 */
	public static final int MAX_PAST_RUNS = 512;

	/**
	 * A lease without run history (as read from a decision log that keeps none).
	 * @param owner the owner id, {@code <id-prefix>.<instance-id>}
	 * @param idPrefix the app's id prefix
	 * @param instanceId the instance id
	 * @param incarnation the holding run
	 * @param expiresAtMs when the lease expires unless renewed, epoch milliseconds
	 * @param claimedBy the claimant's owner id, or null
	 * @param takenOver whether the claimant finished the takeover
	 */
	public InstanceLease(String owner, String idPrefix, String instanceId, String incarnation, long expiresAtMs,
			@Nullable String claimedBy, boolean takenOver) {
		this(owner, idPrefix, instanceId, incarnation, expiresAtMs, claimedBy, takenOver, List.of(), false);
	}

	public InstanceLease {
		Objects.requireNonNull(owner, "owner");
		Objects.requireNonNull(idPrefix, "idPrefix");
		Objects.requireNonNull(instanceId, "instanceId");
		Objects.requireNonNull(incarnation, "incarnation");
		if (!owner.equals(idPrefix + "." + instanceId)) {
			throw new IllegalArgumentException("Owner '" + owner + "' is not <id-prefix>.<instance-id> of '" + idPrefix
					+ "' and '" + instanceId + "'");
		}
		if (takenOver && claimedBy == null) {
			throw new IllegalArgumentException("Lease of " + owner + " is taken over but not claimed");
		}
		pastRuns = List.copyOf(pastRuns);
		for (PastRun run : pastRuns) {
			if (run.incarnation().equals(incarnation)) {
				throw new IllegalArgumentException("Lease of " + owner + " lists its own run " + incarnation
						+ " among its past runs");
			}
		}
	}

	/**
	 * One run of the instance that held its lease before the current run.
	 *
	 * @param incarnation the run's incarnation (its run id)
	 * @param leftAtMs when it stopped holding the lease: its last expiry, or when it released the
	 *     lease, epoch milliseconds of the decision log's clock
	 * @since 0.1.0
	 */
	public record PastRun(String incarnation, long leftAtMs) {

		public PastRun {
			Objects.requireNonNull(incarnation, "incarnation");
		}

	}

	/**
	 * Returns the runs whose transactional ids a next run or a claimant fences: every past run,
	 * and the current one (the holder, dead or released, when the caller may fence it).
	 * @return the incarnations, oldest first, the current run last
	 */
	public Set<String> runsToFence() {
		Set<String> runs = new LinkedHashSet<>();
		this.pastRuns.forEach((run) -> runs.add(run.incarnation()));
		runs.add(this.incarnation);
		return runs;
	}

	/**
	 * Returns whether a run is in this lease's history, or is its holder that released it: a run
	 * that holds the lease no more and never gets it back.
	 * @param runId the run's incarnation
	 * @return whether the run left the lease
	 */
	public boolean isLeftBy(String runId) {
		return (this.released && this.incarnation.equals(runId))
				|| this.pastRuns.stream().anyMatch((run) -> run.incarnation().equals(runId));
	}

	/**
	 * Returns this lease taken by another run: the current run joins the history (unless it is
	 * the new run), which keeps the runs that left at or after {@code prunedBeforeMs}, at most
	 * {@link #MAX_PAST_RUNS} of them.
	 * @param newIncarnation the run that takes the lease
	 * @param expiresAtMs the new expiry, epoch milliseconds
	 * @param leftAtMs when the current run left (its expiry, or when it released), epoch milliseconds
	 * @param prunedBeforeMs runs that left before this time are dropped, epoch milliseconds
	 * @return the lease held by the new run, unclaimed and not released
	 */
	public InstanceLease takenBy(String newIncarnation, long expiresAtMs, long leftAtMs, long prunedBeforeMs) {
		List<PastRun> runs = new ArrayList<>();
		for (PastRun run : this.pastRuns) {
			if (run.leftAtMs() >= prunedBeforeMs && !run.incarnation().equals(newIncarnation)) {
				runs.add(run);
			}
		}
		if (!this.incarnation.equals(newIncarnation)) {
			runs.add(new PastRun(this.incarnation, leftAtMs));
		}
		if (runs.size() > MAX_PAST_RUNS) {
			runs = runs.subList(runs.size() - MAX_PAST_RUNS, runs.size());
		}
		return new InstanceLease(this.owner, this.idPrefix, this.instanceId, newIncarnation, expiresAtMs, null, false,
				runs, false);
	}

	/**
	 * Returns this lease released by its holder: kept, with the history, so that the next run
	 * fences the holder and every past run.
	 * @param atMs when it was released, epoch milliseconds: the lease expires then at the latest
	 * @return the released lease
	 */
	public InstanceLease releasedAt(long atMs) {
		return new InstanceLease(this.owner, this.idPrefix, this.instanceId, this.incarnation,
				Math.min(this.expiresAtMs, atMs), this.claimedBy, this.takenOver, this.pastRuns, true);
	}

	/**
	 * Returns this lease with another run history (a lease read without it, completed by a read
	 * that has it).
	 * @param runs the past runs
	 * @param isReleased whether the holder released it
	 * @return the lease with that history
	 */
	public InstanceLease withHistory(List<PastRun> runs, boolean isReleased) {
		return new InstanceLease(this.owner, this.idPrefix, this.instanceId, this.incarnation, this.expiresAtMs,
				this.claimedBy, this.takenOver, runs, isReleased);
	}

	/**
	 * Whether a live instance has claimed this lease.
	 * @return whether {@link #claimedBy()} is set
	 */
	public boolean isClaimed() {
		return this.claimedBy != null;
	}

	/**
	 * Whether the lease has expired at a time.
	 * @param nowMs epoch milliseconds
	 * @return whether {@code nowMs} is past {@link #expiresAtMs()}
	 */
	public boolean isExpiredAt(long nowMs) {
		return nowMs > this.expiresAtMs;
	}

	/**
	 * Whether this lease is held by the given run of its instance, not claimed and not released.
	 * @param incarnation the run's incarnation
	 * @return whether the run holds it
	 */
	public boolean isHeldBy(String incarnation) {
		return !isClaimed() && !this.released && this.incarnation.equals(incarnation);
	}

	/**
	 * Returns this lease claimed by another instance.
	 * @param claimant the claimant's owner id
	 * @return the claimed lease
	 */
	public InstanceLease claimedBy(String claimant) {
		return new InstanceLease(this.owner, this.idPrefix, this.instanceId, this.incarnation, this.expiresAtMs,
				claimant, false, this.pastRuns, this.released);
	}

	/**
	 * Returns this claimed lease with the takeover finished.
	 * @return the taken-over lease
	 * @throws IllegalStateException if the lease is not claimed
	 */
	public InstanceLease takenOverByClaimant() {
		if (this.claimedBy == null) {
			throw new IllegalStateException("Lease of " + this.owner + " is not claimed");
		}
		return new InstanceLease(this.owner, this.idPrefix, this.instanceId, this.incarnation, this.expiresAtMs,
				this.claimedBy, true, this.pastRuns, this.released);
	}

}
