package dev.tandem.transaction;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * The transaction's outcome is not final yet: either its commit decision is durable but some
 * participant could not commit (for example a cluster is unreachable), or the decision write's
 * outcome is unknown (the decision log is unreachable). Tandem resolves it in the background
 * (retrying with backoff while the instance runs, and at its next start): a decided transaction is
 * committed everywhere, an undecided one is aborted everywhere. Callers must not retry the unit of
 * work before {@link #outcome()} says ABORTED (that could duplicate it) and must not report it as
 * committed before it says COMMITTED.
 *
 * @since 0.1.0
 */
public class InDoubtTransactionException extends TandemException {

	private static final long serialVersionUID = 1L;

	private final String transactionId;

	private final transient @Nullable CompletableFuture<TransactionState> outcome;

	public InDoubtTransactionException(String transactionId, String message, @Nullable Throwable cause) {
		this(transactionId, message, cause, null);
	}

	public InDoubtTransactionException(String transactionId, String message, @Nullable Throwable cause,
			@Nullable CompletableFuture<TransactionState> outcome) {
		super(message, cause);
		this.transactionId = transactionId;
		this.outcome = outcome;
	}

	/**
	 * Returns the in-doubt transaction's id.
	 * @return the Tandem transaction id
	 */
	public String getTransactionId() {
		return this.transactionId;
	}

	/**
	 * Returns the eventual outcome, completed by background resolution with
	 * {@link TransactionState#COMMITTED}, {@link TransactionState#ABORTED} or
	 * {@link TransactionState#HEURISTIC_MIXED}; it never completes if the instance stops first.
	 * @return the outcome, or null when none is tracked
	 */
	public @Nullable CompletableFuture<TransactionState> outcome() {
		return this.outcome;
	}

}
