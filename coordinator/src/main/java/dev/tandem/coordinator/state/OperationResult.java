package dev.tandem.coordinator.state;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;

/**
 * The result of one {@link Operation}, in the order of the command's operations.
 *
 * @since 0.1.0
 */
public sealed interface OperationResult {

	/**
	 * A {@link Operation.Decide} succeeded.
	 *
	 * @param decision the decision stored for the transaction id, equal to the one given (a
	 *     different one is refused)
	 * @param created whether this operation created the record
	 * @since 0.1.0
	 */
	record Decided(Decision decision, boolean created) implements OperationResult {

		public Decided {
			Objects.requireNonNull(decision, "decision");
		}

	}

	/**
	 * A {@link Operation.Decide} was refused because the transaction id is recorded as aborted.
	 *
	 * @param transactionId the transaction id
	 * @since 0.1.0
	 */
	record AbortConflict(String transactionId) implements OperationResult {

		public AbortConflict {
			Objects.requireNonNull(transactionId, "transactionId");
		}

	}

	/**
	 * The state of the transaction id after a {@link Operation.Complete} or
	 * {@link Operation.Abort}.
	 *
	 * @param state the state after the operation ({@link DecisionState#UNKNOWN} after completing
	 *     an unknown id)
	 * @since 0.1.0
	 */
	record StateAfter(DecisionState state) implements OperationResult {

		public StateAfter {
			Objects.requireNonNull(state, "state");
		}

	}

	/**
	 * The number of records a {@link Operation.Purge} removed.
	 *
	 * @param count the number of removed records, zero or more
	 * @since 0.1.0
	 */
	record Purged(int count) implements OperationResult {

	}

	/**
	 * A {@link Operation.Decide} was refused because another instance claimed the owner's lease.
	 *
	 * @param transactionId the transaction id
	 * @param claimedBy the claimant's owner id
	 * @since 0.1.0
	 */
	record OwnerClaimed(String transactionId, String claimedBy) implements OperationResult {

		public OwnerClaimed {
			Objects.requireNonNull(transactionId, "transactionId");
			Objects.requireNonNull(claimedBy, "claimedBy");
		}

	}

	/**
	 * The lease after a {@link Operation.RenewLease}, {@link Operation.ClaimLease} or
	 * {@link Operation.ReleaseLease}.
	 *
	 * @param lease the lease as stored after the operation, or null when there is none
	 * @since 0.1.0
	 */
	record LeaseAfter(@Nullable InstanceLease lease) implements OperationResult {

	}

	/**
	 * An operation was refused when applied, the same way on every replica: a logged entry that
	 * breaks the {@link CommandLimits} (logged by a version that did not check them), a transaction
	 * id logged for another owner, or a failure of the coordinator's own apply (logged at ERROR).
	 * The table is unchanged by it.
	 *
	 * @param reason why, for the caller's error message
	 * @since 0.1.0
	 */
	record Refused(String reason) implements OperationResult {

		public Refused {
			Objects.requireNonNull(reason, "reason");
		}

	}

}
