package dev.tandem.transaction;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The retry queue of in-doubt transactions: each is attempted at once, then in the background
 * ({@link BackgroundRetries}) until its outcome is known; its future then completes with it, and
 * the participant slot it holds is released. An outcome this instance cannot resolve any more
 * (it closed) fails its future with {@link InDoubtTransactionException}, so that nobody waits for
 * it forever; the next start, or a takeover, resolves the transaction.
 * <p>
 * Thread-safe.
 */
final class InDoubtQueue implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(InDoubtQueue.class);

	private final String owner;

	private final ParticipantPool pool;

	private final BackgroundRetries retries;

	private final Map<String, PendingOutcome> pending = new ConcurrentHashMap<>();

	InDoubtQueue(String owner, ParticipantPool pool, BackgroundRetries retries) {
		this.owner = owner;
		this.pool = pool;
		this.retries = retries;
	}

	/**
	 * Attempts to resolve a transaction now and, while that throws, in the background.
	 * @param transactionId the transaction
	 * @param slot the slot it holds until resolved, or null (one recovered at start-up)
	 * @param resolution one attempt: the outcome (COMMITTED, ABORTED or HEURISTIC_MIXED), or throws
	 *     to be tried again
	 * @return the outcome, complete already if the first attempt resolved it
	 */
	CompletableFuture<TransactionState> resolve(String transactionId, @Nullable ParticipantSlot slot,
			Supplier<TransactionState> resolution) {
		PendingOutcome outcome = new PendingOutcome(transactionId);
		this.pending.put(transactionId, outcome);
		this.retries.nowAndUntilDone("Resolving in-doubt transaction " + transactionId, () -> {
			TransactionState result = resolution.get();
			this.pending.remove(transactionId);
			if (slot != null) {
				this.pool.release(slot);
			}
			outcome.future.complete(result);
			logger.info("In-doubt transaction {} resolved: {}", transactionId, result);
		}, () -> stayInDoubt(outcome));
		return outcome.future;
	}

	/** Whether the manager closed: an attempt still running should give up. */
	boolean isClosed() {
		return this.retries.isClosed();
	}

	/** Returns the eventual outcome of a transaction being resolved here, or null. */
	@Nullable CompletableFuture<TransactionState> outcome(String transactionId) {
		PendingOutcome outcome = this.pending.get(transactionId);
		return (outcome != null) ? outcome.future : null;
	}

	/** Returns the ids of the transactions still being resolved. */
	List<String> pendingIds() {
		return List.copyOf(this.pending.keySet());
	}

	/** Returns how many transactions are still being resolved. */
	int pendingCount() {
		return this.pending.size();
	}

	private void stayInDoubt(PendingOutcome outcome) {
		logger.warn("Transaction {} stays in-doubt; it is resolved at the next start of {}", outcome.transactionId,
				this.owner);
		outcome.future.completeExceptionally(new InDoubtTransactionException(outcome.transactionId, "Transaction "
				+ outcome.transactionId + " stays in-doubt: " + this.owner + " was closed before resolving "
				+ "it; its next start (or a takeover) resolves it", null));
	}

	/**
	 * Stops background attempts and fails the outcomes still pending (their futures complete
	 * exceptionally); what is unresolved is resolved at the next start.
	 */
	@Override
	public void close() {
		this.retries.close();
		this.pending.values().forEach((outcome) -> {
			if (!outcome.future.isDone()) {
				stayInDoubt(outcome);
			}
		});
	}

	private static final class PendingOutcome {

		final String transactionId;

		final CompletableFuture<TransactionState> future = new CompletableFuture<>();

		PendingOutcome(String transactionId) {
			this.transactionId = transactionId;
		}

	}

}
