package dev.tandem.transaction;

import java.util.Objects;

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
 * @since 0.1.0
 */
public record InstanceLease(String owner, String idPrefix, String instanceId, String incarnation, long expiresAtMs,
		@Nullable String claimedBy, boolean takenOver) {

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
	 * Whether this lease is held by the given run of its instance and not claimed.
	 * @param incarnation the run's incarnation
	 * @return whether the run holds it
	 */
	public boolean isHeldBy(String incarnation) {
		return !isClaimed() && this.incarnation.equals(incarnation);
	}

	/**
	 * Returns this lease claimed by another instance.
	 * @param claimant the claimant's owner id
	 * @return the claimed lease
	 */
	public InstanceLease claimedBy(String claimant) {
		return new InstanceLease(this.owner, this.idPrefix, this.instanceId, this.incarnation, this.expiresAtMs,
				claimant, false);
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
				this.claimedBy, true);
	}

}
