package dev.tandem.coordinator.state;

import java.util.Objects;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import org.jspecify.annotations.Nullable;

/**
 * What the {@link DecisionTable} holds for one transaction id.
 * <p>
 * Immutable and thread-safe.
 *
 * @param transactionId the transaction id
 * @param owner the app instance that owns the transaction
 * @param state {@link DecisionState#DECIDED}, {@link DecisionState#COMPLETED} or
 *     {@link DecisionState#ABORTED}; never {@link DecisionState#UNKNOWN}
 * @param decision the stored decision; present when decided or completed, {@code null} when
 *     aborted
 * @param finishedAtMs when the record was completed or aborted (epoch milliseconds, the
 *     time carried by the command that did it); {@code -1} while decided
 * @since 0.1.0
 */
public record TransactionRecord(String transactionId, String owner, DecisionState state,
		@Nullable Decision decision, long finishedAtMs) {

	public TransactionRecord {
		Objects.requireNonNull(transactionId, "transactionId");
		Objects.requireNonNull(owner, "owner");
		Objects.requireNonNull(state, "state");
		if (state == DecisionState.UNKNOWN) {
			throw new IllegalArgumentException("A record is never UNKNOWN: " + transactionId);
		}
		if ((state == DecisionState.ABORTED) != (decision == null)) {
			throw new IllegalArgumentException(
					"A " + state + " record " + ((decision != null) ? "has no" : "needs a") + " decision: " + transactionId);
		}
	}

	/**
	 * Creates the record of a new decision.
	 * @param decision the decision
	 * @return a {@link DecisionState#DECIDED} record
	 */
	static TransactionRecord decided(Decision decision) {
		return new TransactionRecord(decision.transactionId(), decision.owner(), DecisionState.DECIDED, decision, -1);
	}

	/**
	 * Creates the record of an abort.
	 * @param transactionId the transaction id
	 * @param owner the owner
	 * @param atMs when it aborted, epoch milliseconds
	 * @return an {@link DecisionState#ABORTED} record
	 */
	static TransactionRecord aborted(String transactionId, String owner, long atMs) {
		return new TransactionRecord(transactionId, owner, DecisionState.ABORTED, null, atMs);
	}

	/**
	 * Returns this decided record as completed.
	 * @param atMs when it completed, epoch milliseconds
	 * @return a {@link DecisionState#COMPLETED} record
	 */
	TransactionRecord completed(long atMs) {
		return new TransactionRecord(this.transactionId, this.owner, DecisionState.COMPLETED, this.decision, atMs);
	}

}
