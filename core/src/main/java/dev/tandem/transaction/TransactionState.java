package dev.tandem.transaction;

import java.util.EnumSet;
import java.util.Set;

/**
 * Lifecycle of one {@link CrossClusterTransaction}. Legal transitions are checked in one place,
 * {@link #canTransitionTo(TransactionState)}.
 *
 * @since 0.1.0
 */
public enum TransactionState {

	/** Accepting sends and offsets. */
	ACTIVE,

	/** Flushing every participant and writing markers (phase one). */
	PREPARING,

	/** Every participant's sends are acknowledged; the decision is being written. */
	PREPARED,

	/** The commit decision is durable: the transaction will commit everywhere, eventually. */
	DECIDED,

	/** Every participant committed. Terminal. */
	COMMITTED,

	/** Aborting every participant. */
	ABORTING,

	/** Every participant aborted; nothing is visible. Terminal. */
	ABORTED,

	/**
	 * The outcome is not final yet: decided, but some participant could not commit yet (recovery
	 * commits it), or the decision write's outcome is unknown, or a one-phase commit (one
	 * participant) did not answer in time (the broker may still complete it; Tandem retries the
	 * commit until it knows). Left by resolution in the background, which moves the transaction to
	 * COMMITTED, ABORTED or HEURISTIC_MIXED once the outcome is known; the caller learns it through
	 * {@link InDoubtTransactionException#outcome()}.
	 */
	IN_DOUBT,

	/**
	 * Decided, but a participant's broker aborted its part (for example its
	 * {@code transaction.timeout.ms} expired): the outcome is mixed. Terminal.
	 */
	HEURISTIC_MIXED;

	/**
	 * Whether a transaction in this state may move to the given one.
	 * @param next the next state
	 * @return whether the move is legal
	 */
	public boolean canTransitionTo(TransactionState next) {
		return allowedNext().contains(next);
	}

	private Set<TransactionState> allowedNext() {
		return switch (this) {
			case ACTIVE -> EnumSet.of(PREPARING, ABORTING);
			case PREPARING -> EnumSet.of(PREPARED, ABORTING, COMMITTED, IN_DOUBT);
			case PREPARED -> EnumSet.of(DECIDED, ABORTING, IN_DOUBT);
			case DECIDED -> EnumSet.of(COMMITTED, IN_DOUBT, HEURISTIC_MIXED);
			case ABORTING -> EnumSet.of(ABORTED);
			case IN_DOUBT -> EnumSet.of(COMMITTED, ABORTED, HEURISTIC_MIXED);
			case COMMITTED, ABORTED, HEURISTIC_MIXED -> EnumSet.noneOf(TransactionState.class);
		};
	}

	/**
	 * Whether this state is final for the transaction object.
	 * @return whether no further transition is legal
	 */
	public boolean isTerminal() {
		return allowedNext().isEmpty();
	}

}
