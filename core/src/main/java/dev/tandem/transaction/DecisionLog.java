package dev.tandem.transaction;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The durable, linearizable log of commit decisions that makes a cross-cluster transaction
 * atomic (two-phase commit with presumed abort; {@code docs/architecture.md}): a transaction whose
 * {@link Decision} is in the log commits on every participant, eventually; any other
 * transaction aborts.
 * <p>
 * Implementations must be thread-safe. Tandem ships one on Apache Ratis
 * ({@code tandem-coordinator}); the seam exists so tests and other stores can plug in.
 *
 * @since 0.1.0
 */
public interface DecisionLog extends AutoCloseable {

	/**
	 * Durably records a commit decision. Idempotent: writing the same transaction id again
	 * returns the decision already stored and never changes it.
	 * @param decision the decision to record
	 * @param timeout how long to wait for the write to be durable (majority-acknowledged)
	 * @return the decision stored for that transaction id (the given one, or the earlier one)
	 * @throws DecisionLogException if the write failed or its outcome is unknown after the
	 *     timeout; the caller must then ask {@link #state(String, Duration)} until it knows
	 * @throws IllegalStateException if the transaction id was already recorded as aborted
	 */
	Decision decide(Decision decision, Duration timeout) throws DecisionLogException;

	/**
	 * Durably records a commit decision of one run of its owner: as {@link #decide(Decision, Duration)},
	 * and refused unless that run holds the owner's {@link InstanceLease}, so that a run that paused
	 * past its lease cannot decide once the lease moved on (to a claimant or to a new run of the
	 * instance, which may have fenced participants already). A log that keeps no leases ignores the
	 * incarnation.
	 * @param decision the decision to record
	 * @param incarnation the deciding run's incarnation, or null when it holds no lease
	 * @param timeout how long to wait for the write to be durable
	 * @return the decision stored for that transaction id
	 * @throws LeaseClaimedException if the run does not hold the owner's lease
	 * @throws DecisionLogException if the write failed or its outcome is unknown after the timeout
	 * @throws IllegalStateException if the transaction id was already recorded as aborted
	 */
	default Decision decide(Decision decision, @Nullable String incarnation, Duration timeout)
			throws DecisionLogException {
		return decide(decision, timeout);
	}

	/**
	 * Records that every participant of a decided transaction committed, so that its record
	 * can be purged. May be batched and applied asynchronously; losing a completion only
	 * makes recovery commit the transaction again, which is harmless.
	 * @param transactionId the transaction id
	 * @throws DecisionLogException if the log refused the write at once
	 */
	void complete(String transactionId) throws DecisionLogException;

	/**
	 * Durably records that a transaction aborted, so that a later {@link #decide} for it fails.
	 * @param transactionId the transaction id
	 * @param owner the owning app instance
	 * @param timeout how long to wait
	 * @throws DecisionLogException if the write failed or timed out
	 */
	void abort(String transactionId, String owner, Duration timeout) throws DecisionLogException;

	/**
	 * Reads the state of one transaction (a linearizable read: it reflects every write
	 * acknowledged before the call).
	 * @param transactionId the transaction id
	 * @param timeout how long to wait
	 * @return the state, {@link DecisionState#UNKNOWN} when the log has no record
	 * @throws DecisionLogException if the read failed or timed out
	 */
	DecisionState state(String transactionId, Duration timeout) throws DecisionLogException;

	/**
	 * Lists the decided but not completed transactions of one owner (a linearizable read),
	 * oldest decision first: the in-doubt transactions that owner's recovery must commit.
	 * @param owner the owning app instance
	 * @param timeout how long to wait
	 * @return the in-doubt decisions, possibly empty
	 * @throws DecisionLogException if the read failed or timed out
	 */
	List<Decision> inDoubt(String owner, Duration timeout) throws DecisionLogException;

	/**
	 * Whether every instance of the app uses this same log (a remote coordinator service), so that
	 * its {@link InstanceLease leases} see a second running instance with the same instance id. A
	 * log of one instance's own (the embedded coordinator: each instance has its own log) returns
	 * false, and the transaction manager then checks for a duplicate instance through Kafka by itself
	 * ({@link CrossClusterTransactionManagerBuilder#duplicateCheckThroughKafka(boolean)}): two
	 * running instances with one id fence each other's producers, and logs that cannot see each
	 * other's decisions then leave transactions committed on some clusters only.
	 * @return false unless the implementation knows that every instance of the app shares it (a log
	 *     that does not say is taken for private, the safe side)
	 * @since 0.1.0
	 */
	default boolean sharedByInstances() {
		return false;
	}

	/**
	 * Whether this log keeps {@link InstanceLease instance leases}; when false, the lease methods
	 * throw {@link UnsupportedOperationException} and Tandem runs without takeover.
	 * @return false unless the implementation supports leases
	 */
	default boolean supportsLeases() {
		return false;
	}

	/**
	 * Takes or renews an instance's lease: granted when the owner has no lease, holds it with the
	 * same incarnation (and it is not claimed), or holds it with another incarnation that has
	 * expired (a restart after the previous run died). A claimed lease is never renewed.
	 * @param idPrefix the app's id prefix
	 * @param instanceId the instance id
	 * @param incarnation this run's incarnation
	 * @param duration how long the lease lasts from now, positive
	 * @param timeout how long to wait for the write
	 * @return the lease as stored after the call; granted if {@link InstanceLease#isHeldBy} this
	 *     incarnation
	 * @throws DecisionLogException if the write failed or timed out
	 * @throws UnsupportedOperationException if {@link #supportsLeases()} is false
	 */
	default InstanceLease renewLease(String idPrefix, String instanceId, String incarnation, Duration duration,
			Duration timeout) throws DecisionLogException {
		throw new UnsupportedOperationException(getClass().getName() + " keeps no leases");
	}

	/**
	 * Renews the lease this run holds already: granted only while this run still holds it unclaimed
	 * (expired or not). Once the lease left the run (claimed, released, purged, or taken by another
	 * run after it expired), the run never gets it back, and the log refuses its decisions for good:
	 * whoever fences the run's transactional ids after that aborts nothing the run may still decide
	 * (issue 26 item 1). {@link #renewLease} is the first take, this every renewal after it.
	 * @param idPrefix the app's id prefix
	 * @param instanceId the instance id
	 * @param incarnation this run's incarnation
	 * @param duration how long the lease lasts from now, positive
	 * @param timeout how long to wait for the write
	 * @return the lease as stored after the call, granted if {@link InstanceLease#isHeldBy} this
	 *     incarnation; null when the owner holds no lease any more
	 * @throws DecisionLogException if the write failed or timed out
	 * @throws UnsupportedOperationException if {@link #supportsLeases()} is false
	 * @since 0.1.0
	 */
	default @Nullable InstanceLease renewHeldLease(String idPrefix, String instanceId, String incarnation,
			Duration duration, Duration timeout) throws DecisionLogException {
		throw new UnsupportedOperationException(getClass().getName() + " keeps no leases");
	}

	/**
	 * Claims an expired lease of another instance of the same app, for the claimant to take over
	 * its in-doubt transactions; from then on the log refuses the claimed owner's decisions.
	 * Granted only if the claimant holds a live lease itself and the lease has expired unclaimed,
	 * or its claimant's own lease has expired.
	 * @param owner the owner id whose lease to claim
	 * @param claimant the claiming instance's owner id
	 * @param timeout how long to wait for the write
	 * @return the lease after the call (claimed by {@code claimant} when granted), or null if the
	 *     owner has no lease
	 * @throws DecisionLogException if the write failed or timed out
	 * @throws UnsupportedOperationException if {@link #supportsLeases()} is false
	 */
	default @Nullable InstanceLease claimLease(String owner, String claimant, Duration timeout)
			throws DecisionLogException {
		throw new UnsupportedOperationException(getClass().getName() + " keeps no leases");
	}

	/**
	 * Releases a lease: by its holder (its incarnation) at a clean shutdown or a failed start-up, or
	 * by its claimant (its owner id) once the takeover is done. A no-op for anyone else. A log that
	 * keeps run histories keeps a lease its holder released, marked {@link InstanceLease#released()},
	 * so that the instance's next run still learns of every run before it and fences their
	 * transactional ids (issue 26 item 1); the holder never gets it back.
	 * @param owner the owner id of the lease
	 * @param by the holder's incarnation or the claimant's owner id
	 * @param timeout how long to wait for the write
	 * @throws DecisionLogException if the write failed or timed out
	 * @throws UnsupportedOperationException if {@link #supportsLeases()} is false
	 */
	default void releaseLease(String owner, String by, Duration timeout) throws DecisionLogException {
		throw new UnsupportedOperationException(getClass().getName() + " keeps no leases");
	}

	/**
	 * Lists the leases of one app's instances (a linearizable read), by owner id, each with its run
	 * history ({@link InstanceLease#pastRuns()}, {@link InstanceLease#released()}) where the log
	 * keeps one.
	 * @param idPrefix the app's id prefix
	 * @param timeout how long to wait
	 * @return the leases, possibly empty
	 * @throws DecisionLogException if the read failed or timed out
	 * @throws UnsupportedOperationException if {@link #supportsLeases()} is false
	 */
	default List<InstanceLease> leases(String idPrefix, Duration timeout) throws DecisionLogException {
		throw new UnsupportedOperationException(getClass().getName() + " keeps no leases");
	}

	/**
	 * Lists the decided but not completed transactions of every instance of one app (owners
	 * {@code <id-prefix>.*}; a linearizable read), oldest decision first: what stale-decision
	 * reporting watches.
	 * @param idPrefix the app's id prefix
	 * @param timeout how long to wait
	 * @return the in-doubt decisions of the app's instances, possibly empty
	 * @throws DecisionLogException if the read failed or timed out
	 * @throws UnsupportedOperationException if {@link #supportsLeases()} is false
	 */
	default List<Decision> appInDoubt(String idPrefix, Duration timeout) throws DecisionLogException {
		throw new UnsupportedOperationException(getClass().getName() + " lists no decisions across owners");
	}

	/**
	 * Closes the log (for an embedded log, its local peer). Idempotent.
	 */
	@Override
	void close();

}
