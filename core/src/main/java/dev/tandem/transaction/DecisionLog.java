package dev.tandem.transaction;

import java.time.Duration;
import java.util.List;

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
	 * Closes the log (for an embedded log, its local peer). Idempotent.
	 */
	@Override
	void close();

}
