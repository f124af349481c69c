package dev.tandem.transaction;

/**
 * The commit decision is durable, but not every participant has committed yet (for example a
 * cluster is unreachable). The transaction WILL commit everywhere: Tandem's recovery resumes the
 * missing participants (periodically, and at the next start of the owning instance). Callers must
 * not retry the unit of work (that would duplicate it) and must not report it as aborted.
 *
 * @since 0.1.0
 */
public class InDoubtTransactionException extends TandemException {

	private static final long serialVersionUID = 1L;

	private final String transactionId;

	public InDoubtTransactionException(String transactionId, String message, Throwable cause) {
		super(message, cause);
		this.transactionId = transactionId;
	}

	/**
	 * Returns the in-doubt transaction's id.
	 * @return the Tandem transaction id
	 */
	public String getTransactionId() {
		return this.transactionId;
	}

}
