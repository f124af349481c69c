package dev.tandem.transaction;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

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

	private final transient Function<String, HeuristicOutcomeException.@Nullable HeuristicOutcome> heuristics;

	public InDoubtTransactionException(String transactionId, String message, @Nullable Throwable cause) {
		this(transactionId, message, cause, null);
	}

	public InDoubtTransactionException(String transactionId, String message, @Nullable Throwable cause,
			@Nullable CompletableFuture<TransactionState> outcome) {
		this(transactionId, message, cause, outcome, (id) -> null);
	}

	InDoubtTransactionException(String transactionId, String message, @Nullable Throwable cause,
			@Nullable CompletableFuture<TransactionState> outcome,
			Function<String, HeuristicOutcomeException.@Nullable HeuristicOutcome> heuristics) {
		super(message, cause);
		this.transactionId = transactionId;
		this.outcome = outcome;
		this.heuristics = heuristics;
	}

	/**
	 * Waits for the outcome and turns it into the commit's result, as {@code commit()} would have
	 * ended had it been known at once.
	 * @param timeout the longest wait, or {@code null} to wait as long as it takes
	 * @throws TransactionAbortedException if it was resolved as aborted (nothing visible anywhere:
	 *     the work may run again)
	 * @throws HeuristicOutcomeException if it was resolved with a mixed outcome
	 * @throws InDoubtTransactionException this exception if no outcome is tracked, or another if
	 *     the instance closed before resolving it (its next start or a takeover does) or the
	 *     outcome's future was cancelled
	 * @throws TimeoutException if the outcome is not known within the timeout
	 * @throws InterruptedException if the waiting thread is interrupted
	 */
	public void awaitCommitted(@Nullable Duration timeout) throws TimeoutException, InterruptedException {
		CompletableFuture<TransactionState> eventual = this.outcome;
		if (eventual == null) {
			throw this;
		}
		TransactionState resolved;
		try {
			// a timeout of a year or more waits as long as it takes (Duration.toMillis could overflow)
			boolean bounded = timeout != null && timeout.compareTo(Duration.ofDays(365)) < 0;
			resolved = bounded ? eventual.get(timeout.toMillis(), TimeUnit.MILLISECONDS) : eventual.get();
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException runtime) ? runtime
					: new TandemException("Resolution of " + this.transactionId + " failed", ex.getCause());
		}
		catch (CancellationException ex) {
			// someone cancelled the public future: the outcome is still not known here
			throw new InDoubtTransactionException(this.transactionId, "The outcome of " + this.transactionId
					+ " was cancelled before it was known; the transaction stays in-doubt", ex);
		}
		requireCommitted(this.transactionId, resolved, this, "it was resolved as aborted", this.heuristics);
	}

	/**
	 * The one mapping of a resolved in-doubt outcome to a commit's result.
	 * @param resolved COMMITTED, ABORTED or HEURISTIC_MIXED
	 * @throws TransactionAbortedException if ABORTED, with {@code whyAborted}
	 * @throws HeuristicOutcomeException otherwise, if not COMMITTED
	 */
	static void requireCommitted(String transactionId, TransactionState resolved, Throwable cause, String whyAborted,
			Function<String, HeuristicOutcomeException.@Nullable HeuristicOutcome> heuristics) {
		switch (resolved) {
			case COMMITTED -> {
				// committed everywhere
			}
			case ABORTED -> throw new TransactionAbortedException("Transaction " + transactionId
					+ " aborted everywhere: " + whyAborted, cause);
			default -> {
				HeuristicOutcomeException.HeuristicOutcome heuristic = heuristics.apply(transactionId);
				throw new HeuristicOutcomeException((heuristic != null) ? heuristic
						: new HeuristicOutcomeException.HeuristicOutcome(transactionId, List.of(), List.of(),
								System.currentTimeMillis()));
			}
		}
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
	 * {@link TransactionState#HEURISTIC_MIXED}; it fails with an {@link InDoubtTransactionException}
	 * if the instance closes first (its next start, or a takeover, resolves the transaction).
	 * @return the outcome, or null when none is tracked
	 */
	public @Nullable CompletableFuture<TransactionState> outcome() {
		return this.outcome;
	}

}
