package dev.tandem.transaction;

import java.time.Duration;

import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;

/**
 * Callbacks on transaction outcomes, for metrics and status endpoints. Called on the thread that
 * completed the transaction; implementations must be fast, thread-safe and must not throw.
 *
 * @since 0.1.0
 */
public interface TransactionListener {

	/**
	 * A transaction committed on every participant.
	 * @param transactionId the transaction id
	 * @param participants number of clusters and databases enlisted (1 means the one-phase path, except for a
	 *     database alone, which goes through the decision)
	 * @param commitLatency time from {@code commit()} call to the last participant's commit
	 */
	default void onCommitted(String transactionId, int participants, Duration commitLatency) {
	}

	/**
	 * A transaction was aborted everywhere.
	 * @param transactionId the transaction id
	 * @param cause why, or the user's abort
	 */
	default void onAborted(String transactionId, Throwable cause) {
	}

	/**
	 * A transaction's outcome is not final yet and was left to background resolution: decided
	 * but not yet committed everywhere, or its decision write's outcome is unknown, or its
	 * one-phase commit (one cluster) got no answer in time.
	 * @param transactionId the transaction id
	 * @param cause the commit failure
	 */
	default void onInDoubt(String transactionId, Throwable cause) {
	}

	/**
	 * Recovery committed a decided transaction left in-doubt by a crash or a failed commit, or
	 * confirmed a one-phase commit that had got no answer in time.
	 * @param transactionId the transaction id
	 */
	default void onRecovered(String transactionId) {
	}

	/**
	 * A decided transaction ended with a mixed outcome.
	 * @param outcome the clusters that committed and those whose broker aborted
	 */
	default void onHeuristicOutcome(HeuristicOutcome outcome) {
	}

	/**
	 * An operator settled a stuck transaction by hand ({@link CrossClusterTransactionManager#settle}).
	 * @param transactionId the transaction id
	 * @param action what was asked
	 * @param outcome the outcome: COMMITTED, HEURISTIC_MIXED or ABORTED
	 */
	default void onSettled(String transactionId, Settlement action, TransactionState outcome) {
	}

}
