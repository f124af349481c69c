package dev.tandem.transaction;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ordered-outcome ledger of a consumer's pipelined transactions: each transaction is entered
 * in begin order with the consumer's first offsets it holds and the caller's attachment (also a
 * transaction aborted while still open, which never reached the pipeline), its outcome is handed
 * to the {@link OutcomeListener} exactly once and in begin order, and after a failure
 * {@link #rewind(Map)} says where the consumer goes back to: the first offset, per partition, of
 * every transaction that did not commit, so that nothing is ever committed past a record that did
 * not commit. This is the one copy of that bookkeeping; {@link CrossClusterProcessor} (and through
 * it the mirror) and the Spring listener pipelines use it.
 * <p>
 * <b>The rewind policy.</b> A transaction that aborted (whatever the reason: its own failure, a
 * {@link PredecessorFailedException}, an in-doubt transaction resolved as aborted) is delivered
 * again. A transaction with a {@link HeuristicOutcomeException heuristic outcome} (some clusters
 * committed, others aborted) is not: delivering it again would duplicate what the clusters that
 * committed show, and a heuristic outcome is final and needs an operator (the JTA convention for
 * heuristic decisions); it is logged at ERROR, and the transactions aborted after it are
 * delivered again. This is the Flink checkpoint idea (barriers in order, a failed one discards the
 * later ones) at the scale of one consumer's transactions.
 * <p>
 * Thread-safety: entries are added and rewinds taken on the consumer's thread; outcomes complete
 * on the pipeline's deciding or committing threads. Every method is thread-safe; the listener is
 * called under the ledger's lock, one outcome at a time, on the thread that completed the outcome
 * (or the one that found it complete), and must not call back into the ledger.
 *
 * @param <A> what the caller attaches to each transaction
 * @since 0.1.0
 */
public final class PipelinedOutcomes<A> {

	private static final Logger logger = LoggerFactory.getLogger(PipelinedOutcomes.class);

	/** How many later Errors of the listener the first one carries as suppressed, at most. */
	private static final int MAX_SUPPRESSED = 8;

	private final OutcomeListener<A> listener;

	/** Entries whose outcome the listener has not been told yet, in begin order. */
	private final Deque<Entry<A>> undelivered = new ArrayDeque<>();

	/** Entries told as failed since the last rewind, in begin order. */
	private final List<Entry<A>> failed = new ArrayList<>();

	/** The first Error the listener threw since the last rewind (later ones suppressed in it). */
	private @Nullable Error listenerError;

	/**
	 * Creates a ledger.
	 * @param listener told each outcome in begin order
	 */
	public PipelinedOutcomes(OutcomeListener<A> listener) {
		this.listener = Objects.requireNonNull(listener, "listener");
	}

	/**
	 * Enters a transaction handed to the pipeline ({@link TransactionPipeline#commitAsync}).
	 * @param attachment what the listener gets back with its outcome
	 * @param firstOffsets the consumer's first offset of each partition the transaction holds
	 *     records of (where the consumer goes back to if it does not commit); copied
	 * @param outcome the pipeline's future of its outcome
	 */
	public void submitted(A attachment, Map<TopicPartition, Long> firstOffsets, CompletableFuture<Void> outcome) {
		synchronized (this) {
			this.undelivered.add(new Entry<>(attachment, Map.copyOf(firstOffsets), outcome));
		}
		outcome.whenComplete((ok, failure) -> deliverDone());
	}

	/**
	 * Enters a transaction aborted while still open (its handler or its closing failed, or the
	 * pipeline failed under it): it failed with {@code cause}, after every transaction entered
	 * before it.
	 * @param attachment what the listener gets back
	 * @param firstOffsets the consumer's first offset of each partition it holds records of
	 * @param cause why it aborted
	 */
	public void abortedOpen(A attachment, Map<TopicPartition, Long> firstOffsets, Throwable cause) {
		submitted(attachment, firstOffsets, CompletableFuture.failedFuture(cause));
	}

	/**
	 * Returns the first failure not rewound yet, telling the listener every outcome already
	 * known. Cheap; call it before each delivery. Never throws what the listener threw.
	 * @return the earliest failed transaction's failure; else an {@link Error} the listener threw
	 *     (see {@link OutcomeListener}); {@code null} while every outcome known so far is a commit
	 *     and the listener threw no Error
	 */
	public synchronized @Nullable Throwable failure() {
		deliverDone();
		return this.failed.isEmpty() ? this.listenerError : this.failed.get(0).cause();
	}

	/**
	 * Returns how many transactions are entered and not yet known to have committed.
	 * @return 0 or more
	 */
	public synchronized int size() {
		deliverDone();
		return this.undelivered.size() + this.failed.size();
	}

	/**
	 * Ends a failure: computes where the consumer goes back to, forgets every entry, and logs the
	 * heuristic outcomes it skips. Call it once every entered outcome is complete (after
	 * {@link TransactionPipeline#drain()}).
	 * @param alsoRewind first offsets of records that must be delivered again too (the delivery at
	 *     hand, a transaction's records that were never entered); may be empty
	 * @return the offsets to seek to, per partition in begin order, and the earliest failure (else
	 *     the listener's Error, which is forgotten too)
	 * @throws IllegalStateException if an entered outcome is still pending
	 */
	public Rewind rewind(Map<TopicPartition, Long> alsoRewind) {
		List<Entry<A>> ended;
		Throwable first;
		synchronized (this) {
			deliverDone();
			if (!this.undelivered.isEmpty()) {
				throw new IllegalStateException(this.undelivered.size() + " pipelined outcome(s) still pending: drain "
						+ "the pipeline before rewinding");
			}
			ended = List.copyOf(this.failed);
			this.failed.clear();
			first = (ended.isEmpty()) ? this.listenerError : null;
			this.listenerError = null;
		}
		Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
		for (Entry<A> entry : ended) {
			Throwable cause = entry.cause();
			if (first == null) {
				first = cause;
			}
			if (cause instanceof HeuristicOutcomeException) {
				logger.error("A pipelined transaction ended with a HEURISTIC outcome (some clusters committed, others "
						+ "aborted); its records are not delivered again: {}", cause.getMessage());
				continue;
			}
			entry.firstOffsets().forEach(offsets::putIfAbsent);
		}
		alsoRewind.forEach(offsets::putIfAbsent);
		return new Rewind(offsets, first);
	}

	/**
	 * Tells the listener every outcome complete at the head, in begin order. Whatever the listener
	 * throws, the outcomes after it are told too: a RuntimeException is logged, an Error is logged
	 * and kept as the ledger's failure ({@link #failure()}), never thrown from here (the thread is
	 * the committing one, where a CompletableFuture would swallow it, or the consumer's in the
	 * middle of the ledger's bookkeeping).
	 */
	private synchronized void deliverDone() {
		while (!this.undelivered.isEmpty() && this.undelivered.peek().outcome().isDone()) {
			Entry<A> entry = this.undelivered.poll();
			Throwable cause = entry.cause();
			if (cause != null) {
				this.failed.add(entry);
			}
			try {
				this.listener.onOutcome(entry.attachment(), cause);
			}
			catch (RuntimeException ex) {
				logger.warn("Outcome listener failed", ex);
			}
			catch (Error ex) {
				listenerError(ex);
			}
		}
	}

	private void listenerError(Error error) {
		Error first = this.listenerError;
		if (first == null) {
			this.listenerError = error;
		}
		else if (first != error && first.getSuppressed().length < MAX_SUPPRESSED) {
			first.addSuppressed(error);
		}
		try {
			logger.error("Outcome listener threw an Error; the outcomes after it are told still, and it is the "
					+ "ledger's failure until the next rewind", error);
		}
		catch (Throwable ex) {
			// logging may fail as the listener did (out of memory): the Error is kept all the same
		}
	}

	/**
	 * Where a consumer goes back to after a failure.
	 * @param offsets first offset to deliver again, per partition; seek only the partitions
	 *     still assigned
	 * @param firstFailure the earliest failed transaction's failure, or {@code null} if only
	 *     {@code alsoRewind} was given
	 */
	public record Rewind(Map<TopicPartition, Long> offsets, @Nullable Throwable firstFailure) {
	}

	/**
	 * Told each entered transaction's outcome, once, in begin order. Called under the ledger's
	 * lock; must not call back into the ledger. What it throws never stops the outcomes after it
	 * from being told: a RuntimeException is logged at WARN and forgotten; an {@link Error} (an
	 * assertion of a test listener, a {@code NoClassDefFoundError}, an {@code OutOfMemoryError})
	 * is logged at ERROR and kept as the ledger's {@link PipelinedOutcomes#failure() failure} until
	 * the next {@link PipelinedOutcomes#rewind rewind}, so that the consumer's thread fails (and
	 * rewinds what did not commit) instead of it being lost on the committing thread.
	 * @param <A> the attachment type
	 */
	@FunctionalInterface
	public interface OutcomeListener<A> {

		/**
		 * A transaction's outcome is known.
		 * @param attachment what was entered with it
		 * @param failure {@code null} if it committed on every cluster; otherwise why not (a
		 *     {@link TransactionAbortedException}, a {@link HeuristicOutcomeException} or another
		 *     {@link TandemException})
		 */
		void onOutcome(A attachment, @Nullable Throwable failure);

	}

	private record Entry<A>(A attachment, Map<TopicPartition, Long> firstOffsets, CompletableFuture<Void> outcome) {

		/** Null if committed; the failure otherwise. Only for a completed outcome. */
		@Nullable Throwable cause() {
			if (!this.outcome.isCompletedExceptionally()) {
				return null;
			}
			try {
				this.outcome.join();
				return new IllegalStateException("not failed");
			}
			catch (CompletionException ex) {
				return (ex.getCause() != null) ? ex.getCause() : ex;
			}
			catch (java.util.concurrent.CancellationException ex) {
				return ex;
			}
		}

	}

}
