package dev.tandem.transaction;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.text.DurationText;

/**
 * Keeps this instance's {@link InstanceLease} in the decision log, takes over the instances of the
 * same app whose lease expired, and watches for stale decisions of the app's instances.
 * <ul>
 * <li>At start-up, {@link #acquire()} takes the lease. If another run of this instance id holds it,
 * it waits: a lease that expires unrenewed belonged to a run that died (a restart after a crash
 * waits at most one lease timeout); a lease renewed meanwhile belongs to a running instance, and
 * start-up fails with {@link DuplicateInstanceException}. The runs before this one
 * ({@link #previousRuns()}: the holders seen, and the lease's run history, read before and right
 * after the take) never get it back: their open transactions are fenced at start-up.</li>
 * <li>While running, every third of the lease timeout: renews the lease with
 * {@link DecisionLog#renewHeldLease}, so that a lease that left this run (claimed, or taken by
 * another run after it expired) never returns to it (a lost lease: the instance stops beginning
 * transactions and logs an ERROR), claims the expired leases
 * of other instances of the app and has the {@link TransactionRecovery} take them over, and lists the
 * decided-not-completed transactions of every instance of the app, logging a WARN once for each older than the
 * stale-decision age.</li>
 * <li>At a clean close, releases the lease, so a restart does not wait; a log with run histories
 * keeps it, marked released, so the next run still fences every run before it. A released lease is
 * never claimed, so two closes leave it to expire instead: a start-up that failed after taking the
 * lease from a run that died, before fencing it ({@link #closeAfterFailedStart()}), and a close
 * with transactions still unresolved, such as a decided one that a cluster could not commit yet
 * ({@link #closeLeavingUnresolved(List)}): a live instance of the app then claims the lease and
 * completes them from the decision log.</li>
 * </ul>
 * Thread-safe: two daemon threads do the periodic work, one renewing, one taking over and
 * watching, so that a long takeover never delays a renewal.
 */
final class InstanceLeaseKeeper implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(InstanceLeaseKeeper.class);

	private final DecisionLog log;

	private final String idPrefix;

	private final String instanceId;

	private final String owner;

	private final String incarnation;

	private final Duration leaseTimeout;

	private final Duration staleAge;

	private final Duration decisionTimeout;

	private final TransactionRecovery recovery;

	private final LongSupplier clock;

	/** The decision log's clock minus this instance's, as of the last renewal, milliseconds. */
	private volatile long leaderOffsetMs;

	private final ScheduledExecutorService scheduler;

	private final Set<String> reportedStale = ConcurrentHashMap.newKeySet();

	private volatile List<StaleDecision> stale = List.of();

	private volatile @Nullable String lostTo;

	private volatile boolean acquired;

	/** The incarnations seen holding this instance's lease before this run took it; guarded by acquire. */
	private final Set<String> previousRuns = ConcurrentHashMap.newKeySet();

	/**
	 * Whether this run found its lease held by another run that neither released it nor was taken
	 * over (a run that died, whose open transactions nobody fenced yet).
	 */
	private volatile boolean tookFromDeadRun;

	/** This run's lease as last renewed (its expiry, by the renewal's command time). */
	private volatile @Nullable InstanceLease lastRenewed;

	InstanceLeaseKeeper(DecisionLog log, String idPrefix, String instanceId, String incarnation, Duration leaseTimeout,
			Duration staleAge, Duration decisionTimeout, TransactionRecovery recovery, LongSupplier clock) {
		this.log = log;
		this.incarnation = incarnation;
		this.idPrefix = idPrefix;
		this.instanceId = instanceId;
		this.owner = idPrefix + "." + instanceId;
		this.leaseTimeout = leaseTimeout;
		this.staleAge = staleAge;
		this.decisionTimeout = decisionTimeout;
		this.recovery = recovery;
		this.clock = clock;
		// Two threads: a long takeover must never delay the renewal of this instance's own lease.
		this.scheduler = Executors.newScheduledThreadPool(2, (runnable) -> {
			Thread thread = new Thread(runnable, "tandem-lease-" + this.owner);
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Returns the incarnations that held this instance's lease before this run took it (the holders
	 * seen during {@link #acquire()} and the lease's run history): runs that never get the lease
	 * back, hence never decide again.
	 * @return an unmodifiable copy, empty before {@link #acquire()}
	 */
	Set<String> previousRuns() {
		return Set.copyOf(this.previousRuns);
	}

	/** Returns this run's incarnation, the one its decisions and its transactional ids name. */
	String incarnation() {
		return this.incarnation;
	}

	private Duration renewInterval() {
		return this.leaseTimeout.dividedBy(3);
	}

	/**
	 * Takes this instance's lease, waiting for a previous run's lease to expire.
	 * @throws DuplicateInstanceException if a running instance renews the lease meanwhile
	 * @throws TandemException if the lease stays claimed by a claimant longer than two lease
	 *     timeouts and the decision timeout (the message names the claimant), or the wait is
	 *     interrupted
	 * @throws DecisionLogException if the decision log cannot be reached
	 */
	void acquire() {
		long deadline = this.clock.getAsLong() + 2 * this.leaseTimeout.toMillis() + this.decisionTimeout.toMillis();
		InstanceLease first = null;
		// the runs this one replaces: the holder and its run history; none gets the lease back, so their
		// open transactions may be fenced
		rememberPreviousRuns();
		while (true) {
			long sentAt = this.clock.getAsLong();
			InstanceLease lease = this.log.renewLease(this.idPrefix, this.instanceId, this.incarnation,
					this.leaseTimeout, this.decisionTimeout);
			if (lease.isHeldBy(this.incarnation)) {
				this.acquired = true;
				renewed(lease, sentAt);
				// the lease as taken: its history names every run before this one, also a run that took and
				// released it between the first read and the take (the take's answer carries no history)
				rememberPreviousRuns();
				logger.info("Instance {} holds its lease (timeout {}, incarnation {})", this.owner,
						DurationText.of(this.leaseTimeout),
						this.incarnation);
				// Renewed from now on: the rest of the start-up (marker topics, recovery) may take longer than the lease.
				long period = renewInterval().toMillis();
				this.scheduler.scheduleWithFixedDelay(this::renewQuietly, period, period, TimeUnit.MILLISECONDS);
				return;
			}
			if (!lease.incarnation().equals(this.incarnation)) {
				this.previousRuns.add(lease.incarnation());
				if (!lease.isClaimed()) {
					this.tookFromDeadRun = true; // held by another run: live (refused below) or dead
				}
			}
			if (lease.isClaimed()) {
				logger.info("The lease of {} is claimed by {}, which is taking over its transactions; waiting for it to "
						+ "finish", this.owner, lease.claimedBy());
			}
			else if (first == null) {
				first = lease;
				logger.info("The lease of {} is held by another run (incarnation {}) until {}; waiting to see whether it "
						+ "is renewed (a running instance) or expires (a run that died)", this.owner, lease.incarnation(),
						Instant.ofEpochMilli(lease.expiresAtMs()));
			}
			else if (!lease.incarnation().equals(first.incarnation()) || lease.expiresAtMs() > first.expiresAtMs()) {
				throw new DuplicateInstanceException(this.owner, "Instance id '" + this.instanceId + "' (owner "
						+ this.owner + ") is in use by a running instance: its lease was renewed while this one waited "
						+ "(incarnation " + lease.incarnation() + ", now until " + Instant.ofEpochMilli(lease.expiresAtMs())
						+ "). Every running instance needs its own instance id.");
			}
			if (this.clock.getAsLong() > deadline) {
				String why = lease.isClaimed() ? "it is claimed by " + lease.claimedBy() + ", a live instance of the app "
						+ "that has not finished taking over the transactions of the run before this one; start again once "
						+ "it has (" + lease + ")" : lease.toString();
				throw new TandemException("The lease of " + this.owner + " was not free within "
						+ DurationText.of(this.leaseTimeout.multipliedBy(2).plus(this.decisionTimeout)) + ": " + why);
			}
			long untilExpiry = lease.isClaimed() ? Long.MAX_VALUE : lease.expiresAtMs() - leaderNow() + 50;
			sleep(Math.max(50, Math.min(renewInterval().toMillis(), untilExpiry)));
		}
	}

	/** Adds the holder and the run history of this instance's lease, as the log has it now, to the previous runs. */
	private void rememberPreviousRuns() {
		for (InstanceLease lease : this.log.leases(this.idPrefix, this.decisionTimeout)) {
			if (lease.owner().equals(this.owner)) {
				if (!lease.incarnation().equals(this.incarnation) && !lease.released() && !lease.takenOver()) {
					this.tookFromDeadRun = true;
				}
				for (String run : lease.runsToFence()) {
					if (!run.equals(this.incarnation)) {
						this.previousRuns.add(run);
					}
				}
			}
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted while waiting for the instance lease", ex);
		}
	}

	/**
	 * Starts taking over expired instances and watching stale decisions, every third of the lease
	 * timeout (the lease itself is renewed since {@link #acquire()}).
	 */
	void start() {
		long period = renewInterval().toMillis();
		this.scheduler.scheduleWithFixedDelay(this::watch, period, period, TimeUnit.MILLISECONDS);
	}

	private void renewQuietly() {
		try {
			renew();
		}
		catch (RuntimeException ex) {
			logger.warn("Could not renew the lease of {}, retrying in {}: {}", this.owner, DurationText.of(renewInterval()),
					ex.toString());
		}
	}

	private void watch() {
		try {
			if (this.lostTo == null) {
				takeOverExpired();
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Takeover of an expired instance by {} failed, retrying in {}: {}", this.owner,
					DurationText.of(renewInterval()),
					ex.toString());
		}
		try {
			// on its own: a takeover that keeps failing must not hide the stale decisions it leaves
			watchStaleDecisions();
		}
		catch (RuntimeException ex) {
			logger.warn("Stale-decision check of {} failed, retrying in {}: {}", this.owner, DurationText.of(renewInterval()),
					ex.toString());
		}
	}

	private void renew() {
		if (this.lostTo != null) {
			return;
		}
		long sentAt = this.clock.getAsLong();
		// a renewal, never a take: once the lease left this run the log never hands it back
		InstanceLease lease = this.log.renewHeldLease(this.idPrefix, this.instanceId, this.incarnation,
				this.leaseTimeout, this.decisionTimeout);
		if (lease != null && lease.isHeldBy(this.incarnation)) {
			renewed(lease, sentAt);
		}
		else {
			this.lostTo = (lease == null) ? "nobody (the lease is gone from the decision log)"
					: lease.isClaimed() ? lease.claimedBy() : "run " + lease.incarnation();
			logger.error("Instance {} lost its lease to {}: it was taken for dead (its lease expired unrenewed). It begins "
					+ "no transaction any more; restart it", this.owner, this.lostTo);
		}
	}

	/**
	 * Keeps a renewed lease and learns how far the decision log's clock is ahead of this one: a
	 * log stamps leases with its leader's clock, so this instance compares lease times with
	 * {@link #leaderNow()}, never with its own clock. The estimate errs late by the renewal's
	 * one-way delay: this instance believes its own lease ends, and others' expire, a little
	 * earlier than the log does.
	 */
	private void renewed(InstanceLease lease, long sentAt) {
		this.lastRenewed = lease;
		this.leaderOffsetMs = lease.expiresAtMs() - this.leaseTimeout.toMillis() - sentAt;
	}

	/** Returns the decision log's time as this instance estimates it, epoch milliseconds. */
	private long leaderNow() {
		return this.clock.getAsLong() + this.leaderOffsetMs;
	}

	private void takeOverExpired() {
		long now = leaderNow();
		List<InstanceLease> leases = this.log.leases(this.idPrefix, this.decisionTimeout);
		for (InstanceLease lease : leases) {
			if (!lease.idPrefix().equals(this.idPrefix) || lease.owner().equals(this.owner)
					|| !isTakeOverCandidate(lease, leases, now)) {
				continue;
			}
			InstanceLease claimed = this.log.claimLease(lease.owner(), this.owner, this.decisionTimeout);
			if (claimed != null && this.owner.equals(claimed.claimedBy())) {
				InstanceLease withHistory = withHistory(claimed);
				this.recovery.takeOver(withHistory, () -> stillEntitled(claimed));
			}
		}
	}

	/**
	 * Returns the claimed lease with its run history as the log has it now (a claim's answer
	 * carries none): the claimant fences every run in it, not only the claimed one. The history
	 * read is the claimed run's only while the lease is still claimed by this instance for that run.
	 */
	private InstanceLease withHistory(InstanceLease claimed) {
		for (InstanceLease lease : this.log.leases(this.idPrefix, this.decisionTimeout)) {
			if (lease.owner().equals(claimed.owner()) && this.owner.equals(lease.claimedBy())
					&& lease.incarnation().equals(claimed.incarnation())) {
				return claimed.withHistory(lease.pastRuns(), false);
			}
		}
		return claimed;
	}

	/**
	 * Whether this instance may still fence the claimed instance's transactional ids, checked right
	 * before it does: the claim is still its own and not finished (a new run of the claimed instance
	 * may have taken a fresh lease while this one paused, and would own those ids now), and this
	 * instance's own lease, as last renewed, still has a third of its timeout to run.
	 */
	private boolean stillEntitled(InstanceLease claimed) {
		long now = leaderNow();
		InstanceLease mine = this.lastRenewed;
		if (this.lostTo != null || mine == null || mine.expiresAtMs() - now < renewInterval().toMillis()) {
			return false;
		}
		return this.log.leases(this.idPrefix, this.decisionTimeout).stream()
			.anyMatch((lease) -> lease.owner().equals(claimed.owner()) && this.owner.equals(lease.claimedBy())
					&& !lease.takenOver() && lease.incarnation().equals(claimed.incarnation()));
	}

	private boolean isTakeOverCandidate(InstanceLease lease, List<InstanceLease> leases, long now) {
		if (lease.released()) {
			return false; // never claimable: its next run fences it (a run that never comes back: a known gap)
		}
		String claimant = lease.claimedBy();
		if (claimant == null) {
			return lease.isExpiredAt(now);
		}
		if (lease.takenOver()) {
			return false;
		}
		if (claimant.equals(this.owner)) {
			return true; // claimed earlier, not finished (for example this instance restarted meanwhile)
		}
		return leases.stream()
			.noneMatch((other) -> other.owner().equals(claimant) && !other.isClaimed() && !other.isExpiredAt(now));
	}

	private void watchStaleDecisions() {
		long now = this.clock.getAsLong();
		List<StaleDecision> found = new ArrayList<>();
		for (Decision decision : this.log.appInDoubt(this.idPrefix, this.decisionTimeout)) {
			long age = now - decision.decidedAtMs();
			if (age > this.staleAge.toMillis()) {
				found.add(new StaleDecision(decision.transactionId(), decision.owner(), decision.decidedAtMs(), age));
				if (this.reportedStale.add(decision.transactionId())) {
					logger.warn("Decided transaction {} of {} has not completed for {}: its owner is down or cannot reach "
							+ "a cluster; if the owner never returns and no instance of its app takes it over, its brokers "
							+ "abort it at transaction.timeout.ms (a heuristic outcome)", decision.transactionId(),
							decision.owner(), DurationText.of(Duration.ofSeconds(age / 1000)));
				}
			}
		}
		this.reportedStale.retainAll(found.stream().map(StaleDecision::transactionId).toList());
		this.stale = List.copyOf(found);
	}

	/** Returns the stale decisions of the app's instances seen by the last check. */
	List<StaleDecision> staleDecisions() {
		return this.stale;
	}

	/** Returns who took this instance's lease, or null while it holds it. */
	@Nullable String lostTo() {
		return this.lostTo;
	}

	/** Stops the periodic work without releasing the lease (as a crashed process would). */
	void abandon() {
		this.scheduler.shutdownNow();
	}

	/**
	 * After a start-up that failed before it fenced the runs before it: when this run took the lease
	 * from a run that died (neither released nor taken over), stops renewing without releasing, so
	 * that the lease expires as the dead run's did: a live instance of the app claims it and fences
	 * every run in its history (this one, the dead run and the runs before it), or the instance's
	 * next run does after waiting for the expiry. A released lease is never claimed, so releasing it
	 * would leave the dead run's open transactions (and the last stable offset of their partitions)
	 * to the brokers' {@code transaction.timeout.ms} if the instance never came back. Otherwise (the
	 * lease was free, released or taken over: nothing left to fence) releases it, so that a retry
	 * need not wait.
	 */
	void closeAfterFailedStart() {
		if (this.acquired && this.lostTo == null && this.tookFromDeadRun) {
			this.scheduler.shutdownNow();
			logger.warn("Instance {} keeps its lease to expire (in {}) instead of releasing it: its start-up failed before "
					+ "fencing the open transactions of the runs before it ({}); a live instance of the app claims it and "
					+ "fences them, or the next run does", this.owner, DurationText.of(this.leaseTimeout),
					this.previousRuns);
			return;
		}
		close();
	}

	/**
	 * A clean close with transactions still being resolved (decided ones a cluster or database could
	 * not commit yet, or ones whose decision could not be read): stops renewing without releasing, so
	 * that the lease expires as a crashed run's would and a live instance of the app claims it and
	 * completes them from the decision log (their producers are closed, but their Kafka transactions
	 * stay open until then). Released, the lease would never be claimed: a decided transaction
	 * committed on one cluster would stay open on another until the instance came back, or until
	 * the brokers' {@code transaction.timeout.ms} aborted it there, a heuristic outcome. With nothing
	 * unresolved, releases it ({@link #close()}).
	 * @param unresolved the ids of the transactions still being resolved at the close
	 */
	void closeLeavingUnresolved(List<String> unresolved) {
		if (!unresolved.isEmpty() && this.acquired && this.lostTo == null) {
			this.scheduler.shutdownNow();
			logger.warn("Instance {} closes with {} transaction(s) unresolved ({}): it keeps its lease to expire (in {}) "
					+ "instead of releasing it, so that a live instance of the app claims it and completes them, or "
					+ "its next run does", this.owner, unresolved.size(), unresolved, DurationText.of(this.leaseTimeout));
			return;
		}
		close();
	}

	/** Stops the periodic work and releases the lease, so that a restart need not wait. */
	@Override
	public void close() {
		this.scheduler.shutdownNow();
		if (this.acquired && this.lostTo == null) {
			try {
				this.log.releaseLease(this.owner, this.incarnation, this.decisionTimeout);
			}
			catch (RuntimeException ex) {
				logger.warn("Could not release the lease of {} (a restart waits for it to expire): {}", this.owner,
						ex.toString());
			}
		}
	}

}
