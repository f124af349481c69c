package dev.tandem.coordinator.state;

import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;

import dev.tandem.transaction.InstanceLease;
import org.jspecify.annotations.Nullable;

/**
 * The instance leases of a {@link DecisionTable}, one per owner, sorted by owner id so that one
 * app's owners are a range. Rules:
 * <ul>
 * <li>renew: granted (expiry = command time + duration) when the owner has no lease, or holds it
 * with the same incarnation unclaimed, or holds it with another incarnation that has expired at
 * the command's time (a restart after the previous run died); a new incarnation also gets a
 * fresh lease in place of a claimed one that was taken over, or whose claimant is no longer live.
 * The claimed incarnation itself never gets its lease back. A renewal by a run that held the lease
 * already ({@code held}) is granted only while that run still holds it unclaimed: once the lease
 * left a run (claimed, released, purged, or taken by another run after it expired), that run never
 * gets it back, so it never decides again (issue 26 item 1: whoever fences a run's transactional ids
 * after the lease left it can abort no transaction that run may still decide).</li>
 * <li>claim: granted when the claimant holds a live, unclaimed lease of the same id prefix, and the
 * lease has expired unclaimed, or is claimed, not taken over, by an instance whose own lease is
 * gone, claimed or expired.</li>
 * <li>release: when asked by its holder's incarnation (unclaimed), marks the lease released and
 * keeps it, with its run history ({@code keepRuns}, what clients since issue 26 item 1 send), or
 * removes it (the older operation); marks it taken over when asked by its claimant. A taken-over
 * or released lease stays until a new run of the instance renews, or a purge finds it expired for
 * longer than the retention period. A released lease is never claimed, and its holder never
 * renews it as held.</li>
 * <li>run history: whenever a run other than the holder takes the lease (after it expired, was
 * taken over, or was released), the holder joins the lease's past runs with the time it left
 * (its expiry, or when it released); runs that left more than {@link InstanceLease#RUN_HISTORY_MS}
 * before the command's time are pruned then, and only the newest {@link InstanceLease#MAX_PAST_RUNS}
 * kept. Renewals, claims and releases keep the history as it is. A next run and a claimant fence
 * every run of the history (issue 26 item 1).</li>
 * </ul>
 * The table applies what concerns both leases and records (a decide while the owner's lease is
 * claimed, the purge of an abandoned owner's decisions). Like the table, reads no clock of its
 * own: every time is the command's.
 * <p>
 * Not thread-safe: the table serialises access.
 *
 * @since 0.1.0
 */
final class InstanceLeases {

	private final NavigableMap<String, InstanceLease> leases = new TreeMap<>();

	/**
	 * Returns the lease of an owner.
	 * @param owner the owner id
	 * @return the lease, claimed or not, or {@code null} when it holds none
	 */
	@Nullable InstanceLease get(String owner) {
		return this.leases.get(owner);
	}

	/**
	 * Takes or renews a lease (rules in the class javadoc).
	 * @param renew the renewal
	 * @param atMs the command's time, epoch milliseconds
	 * @return the lease after the call, or null when a renewal of a held lease finds none
	 */
	@Nullable InstanceLease renew(Operation.RenewLease renew, long atMs) {
		String owner = renew.owner();
		InstanceLease existing = this.leases.get(owner);
		boolean sameRun = existing != null && existing.incarnation().equals(renew.incarnation());
		boolean granted;
		if (renew.held()) {
			granted = sameRun && !existing.isClaimed() && !existing.released();
		}
		else if (existing == null || existing.released()) {
			granted = true;
		}
		else if (existing.isClaimed()) {
			granted = !sameRun && (existing.takenOver() || !isLive(this.leases.get(existing.claimedBy()), atMs));
		}
		else {
			granted = sameRun || existing.isExpiredAt(atMs);
		}
		if (!granted) {
			return existing;
		}
		long expiresAtMs = atMs + renew.durationMs();
		InstanceLease renewed;
		if (existing == null) {
			renewed = new InstanceLease(owner, renew.idPrefix(), renew.instanceId(), renew.incarnation(), expiresAtMs, null,
					false);
		}
		else if (sameRun && !existing.isClaimed() && !existing.released()) {
			renewed = new InstanceLease(owner, existing.idPrefix(), existing.instanceId(), existing.incarnation(),
					Math.max(existing.expiresAtMs(), expiresAtMs), null, false, existing.pastRuns(), false);
		}
		else {
			// another run takes it (or the released run again): the run that held it joins the history
			renewed = existing.takenBy(renew.incarnation(), expiresAtMs, Math.min(existing.expiresAtMs(), atMs),
					atMs - InstanceLease.RUN_HISTORY_MS);
		}
		this.leases.put(owner, renewed);
		return renewed;
	}

	/**
	 * Claims an expired lease (rules in the class javadoc).
	 * @param owner the owner id whose lease to claim
	 * @param claimant the claimant's owner id
	 * @param atMs the command's time, epoch milliseconds
	 * @return the lease after the call, or null if the owner has none
	 */
	@Nullable InstanceLease claim(String owner, String claimant, long atMs) {
		InstanceLease existing = this.leases.get(owner);
		InstanceLease claimer = this.leases.get(claimant);
		if (existing == null || existing.released() || owner.equals(claimant) || !isLive(claimer, atMs)
				|| !existing.idPrefix().equals(claimer.idPrefix())) {
			return existing;
		}
		String previous = existing.claimedBy();
		boolean claimable = (previous == null) ? existing.isExpiredAt(atMs)
				: !existing.takenOver() && !previous.equals(claimant) && !isLive(this.leases.get(previous), atMs);
		if (!claimable) {
			return existing;
		}
		InstanceLease claimed = existing.claimedBy(claimant);
		this.leases.put(owner, claimed);
		return claimed;
	}

	private static boolean isLive(@Nullable InstanceLease lease, long atMs) {
		return lease != null && !lease.isClaimed() && !lease.released() && !lease.isExpiredAt(atMs);
	}

	/**
	 * Releases a lease when asked by its holder's incarnation (unclaimed): removes it, or with
	 * {@code keepRuns} marks it released and keeps it with its run history; marks it taken over
	 * when asked by its claimant.
	 * @param release the release
	 * @param atMs the command's time, epoch milliseconds
	 * @return the lease after the call, null when removed or absent
	 */
	@Nullable InstanceLease release(Operation.ReleaseLease release, long atMs) {
		String owner = release.owner();
		String by = release.by();
		InstanceLease existing = this.leases.get(owner);
		if (existing == null) {
			return null;
		}
		if (existing.isHeldBy(by)) {
			if (!release.keepRuns()) {
				this.leases.remove(owner);
				return null;
			}
			InstanceLease released = existing.releasedAt(atMs);
			this.leases.put(owner, released);
			return released;
		}
		if (existing.isClaimed() && by.equals(existing.claimedBy()) && !existing.takenOver()) {
			InstanceLease done = existing.takenOverByClaimant();
			this.leases.put(owner, done);
			return done;
		}
		return existing;
	}

	/**
	 * Removes the leases that expired before a time.
	 * @param goneBefore the time, epoch milliseconds
	 * @return the number of removed leases
	 */
	int removeExpiredBefore(long goneBefore) {
		int count = 0;
		Iterator<InstanceLease> leases = this.leases.values().iterator();
		while (leases.hasNext()) {
			if (leases.next().expiresAtMs() < goneBefore) {
				leases.remove();
				count++;
			}
		}
		return count;
	}

	/**
	 * Returns the number of leases of the owners a grant covers; 0 for a grant of every owner.
	 * @param grant the grant
	 * @return the count, zero or more
	 */
	int countCovered(Grant grant) {
		int count = 0;
		for (String prefix : grant.ownerPrefixes()) {
			count += Grant.ownersBelow(this.leases, prefix).size() + (this.leases.containsKey(prefix) ? 1 : 0);
		}
		return count;
	}

	/**
	 * Returns every lease, by owner id.
	 * @return an unmodifiable view; do not keep it across mutations
	 */
	Collection<InstanceLease> all() {
		return Collections.unmodifiableCollection(this.leases.values());
	}

	/**
	 * Returns the leases of one app's instances, by owner id.
	 * @param idPrefix the app's id prefix
	 * @return the leases, possibly empty
	 */
	List<InstanceLease> ofApp(String idPrefix) {
		return this.leases.values().stream().filter((lease) -> lease.idPrefix().equals(idPrefix)).toList();
	}

	/**
	 * Adds a lease (loading a snapshot).
	 * @param lease the lease
	 * @return false, and nothing added, when its owner holds a lease already
	 */
	boolean add(InstanceLease lease) {
		return this.leases.putIfAbsent(lease.owner(), lease) == null;
	}

	/**
	 * Removes every lease.
	 */
	void clear() {
		this.leases.clear();
	}

}
