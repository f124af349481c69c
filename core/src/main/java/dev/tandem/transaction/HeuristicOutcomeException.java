package dev.tandem.transaction;

import java.util.List;

/**
 * A decided transaction could not commit on every participant because a broker had already
 * aborted its part (its {@code transaction.timeout.ms} expired while the owner was down): the
 * outcome is mixed, some clusters show the records and some do not. Fatal for that transaction;
 * an operator must repair the data. Tandem reports it as an ERROR log, a
 * {@link TransactionListener#onHeuristicOutcome} event and never as success.
 *
 * @since 0.1.0
 */
public class HeuristicOutcomeException extends TandemException {

	private static final long serialVersionUID = 1L;

	private final transient HeuristicOutcome outcome;

	public HeuristicOutcomeException(HeuristicOutcome outcome) {
		super("Heuristic mixed outcome for transaction " + outcome.transactionId() + ": committed on "
				+ outcome.committedClusters() + ", aborted by the broker on " + outcome.abortedClusters());
		this.outcome = outcome;
	}

	/**
	 * Returns which clusters committed and which aborted.
	 * @return the outcome
	 */
	public HeuristicOutcome getOutcome() {
		return this.outcome;
	}

	/**
	 * A mixed outcome of one decided transaction.
	 *
	 * @param transactionId the transaction id
	 * @param committedClusters clusters whose marker record is visible to {@code read_committed},
	 *     and databases ({@code database:<name>}) whose branch committed
	 * @param abortedClusters clusters whose broker aborted the participant's transaction, and
	 *     databases ({@code database:<name>}) that rolled back the prepared branch (its marker row
	 *     is missing)
	 * @param detectedAtMs when Tandem detected it, epoch milliseconds
	 * @since 0.1.0
	 */
	public record HeuristicOutcome(String transactionId, List<String> committedClusters,
			List<String> abortedClusters, long detectedAtMs) {
	}

}
