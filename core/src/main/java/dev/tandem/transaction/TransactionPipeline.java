package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.text.DurationText;

/**
 * Pipelined cross-cluster transactions: transaction N+1 executes (its caller polls, sends and
 * adds offsets) and prepares while transaction N is decided and commits, each on its own
 * participant slot. Up to {@link #depth()} transactions are open, preparing or committing at once.
 * <p>
 * Order is kept. A transaction's record sends are held ({@link HeldSends}), in the order they
 * were made, until every record of the transaction begun before it is acknowledged, so its
 * records are appended after the previous transaction's (records of consecutive transactions keep
 * their order in each partition, as one producer's would) although each transaction sends through
 * its own slot's producer. The caller's thread never waits for that: {@link #commitAsync} returns
 * without flushing, and the caller polls and sends (queued) while the previous transaction's
 * records are acknowledged. The commit runs in three stages, transactions in the order they were
 * handed over:
 * <ol>
 * <li>the preparing thread sends the transaction's deferred consumer offsets
 * ({@code TxnOffsetCommit}) and flushes and checks every participant (prepare; the marker
 * records went out when each participant was enlisted); this makes nothing visible, so it
 * overlaps the previous transactions' decisions and commits. Offsets of one partition are
 * committed in order: the group coordinator keeps, of two transactional offset commits, the one
 * appended later to {@code __consumer_offsets}, whatever order their transactions' commit markers
 * come in (Kafka's {@code OffsetMetadataManager}), and this thread appends N's before N+1's;</li>
 * <li>the deciding thread writes the decision, so N+1 is decided only after N's decision is
 * durable (or, with one participant, after N's plain Kafka commit). A decision whose outcome is
 * unknown holds back its successors until the outcome is known: it may still end aborted;</li>
 * <li>the commits of a decided transaction run on a thread of their own, several transactions at
 * once (each on its own slot's producers): a decided transaction can only commit, a
 * {@code read_committed} reader still sees each partition in offset order (the last stable
 * offset waits for the earlier transaction), and the offsets kept are still the ones appended
 * last. A round trip to a remote cluster's commit thus no longer paces the pipeline
 * (issue 25).</li>
 * </ol>
 * <p>
 * A failure stops the line: when a transaction does not commit, every transaction committed
 * asynchronously after it and not decided yet, up to the next {@link #drain()}, is aborted
 * undecided (its future fails with {@link PredecessorFailedException}); nothing of them is
 * visible. The records of the transactions behind a handed-over transaction that fails, if they
 * are still held, are never sent (their futures fail; each of those transactions aborts, also
 * one begun before the next {@link #drain()} and handed over after it), and a transaction's
 * prepare waits for its clusters' acknowledgements at most the commit timeout, so a cluster that
 * does not answer fails the line within a bound of the commit timeout (issue 25). (Only a decided transaction's commits can fail while its successor is decided; such a
 * transaction ends committed through recovery or with a heuristic outcome, never aborted.) The caller then
 * drains and rewinds its consumer to the first offsets not committed, as
 * {@link CrossClusterProcessor} does. This is the Flink checkpoint idea (barriers in order,
 * a failed one discards the later ones) at the scale of one thread's transactions.
 * <p>
 * Confined to one thread (the one that begins and commits), except the returned futures,
 * which complete on the pipeline's deciding or committing threads.
 *
 * @since 0.1.0
 */
public final class TransactionPipeline implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(TransactionPipeline.class);

	private static final AtomicInteger threads = new AtomicInteger();

	private final CrossClusterTransactionManager manager;

	private final int depth;

	private final Duration slotTimeout;

	private final Semaphore permits;

	private final ExecutorService preparer;

	private final ExecutorService decider;

	/** Runs the commits of decided transactions, several at once. */
	private final ExecutorService committers;

	/** Passes a transaction's held sends on once the previous transaction's records are acknowledged. */
	private final ExecutorService releaser;

	/**
	 * The gate of the next transaction begun: the last one's records all acknowledged;
	 * exceptionally if it or one before it failed since the last {@link #drain()}.
	 */
	private CompletableFuture<Void> lastAcknowledged = CompletableFuture.completedFuture(null);

	/** The sends of the newest transaction begun, for {@link #heldBytes()}. */
	private volatile @Nullable HeldSends newest;

	private final Deque<CompletableFuture<Void>> submitted = new ArrayDeque<>();

	/** Handed over, prepare not finished. */
	private final AtomicInteger unprepared = new AtomicInteger();

	/** How often a thread waiting for an in-doubt outcome looks whether the pipeline closes. */
	private static final Duration IN_DOUBT_POLL = Duration.ofMillis(200);

	/** Set by {@link #close()}: in-doubt outcomes are no longer waited for. */
	private volatile boolean closing;

	/** The first failure since the last drain: set on the deciding and committing threads, read on all. */
	private final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();

	private boolean closed;

	TransactionPipeline(CrossClusterTransactionManager manager, int depth, Duration slotTimeout) {
		this.manager = manager;
		this.depth = depth;
		this.slotTimeout = slotTimeout;
		this.permits = new Semaphore(depth);
		int number = threads.incrementAndGet();
		this.preparer = singleThread("tandem-pipeline-" + number + "-prepare");
		this.decider = singleThread("tandem-pipeline-" + number + "-decide");
		this.releaser = singleThread("tandem-pipeline-" + number + "-release");
		AtomicInteger committing = new AtomicInteger();
		this.committers = Executors.newCachedThreadPool((runnable) -> {
			Thread thread = new Thread(runnable, "tandem-pipeline-" + number + "-commit-" + committing.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
	}

	private static ExecutorService singleThread(String name) {
		return Executors.newSingleThreadExecutor((runnable) -> {
			Thread thread = new Thread(runnable, name);
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Returns how many transactions may be open or committing at once.
	 * @return 1 or more
	 */
	public int depth() {
		return this.depth;
	}

	/**
	 * Returns how many transactions are open or committing now.
	 * @return 0 to {@link #depth()}
	 */
	public int inFlight() {
		return this.depth - this.permits.availablePermits();
	}

	/**
	 * Returns how many transactions handed over by {@link #commitAsync} have not finished their
	 * prepare yet (their offsets are not committed yet). A caller that sizes its transactions by
	 * the round trip closes the next one when this is 0: a transaction closed earlier would only
	 * wait behind it (issue 25).
	 * @return 0 to {@link #depth()}
	 */
	public int preparing() {
		return this.unprepared.get();
	}

	/**
	 * Returns how many bytes the newest transaction begun holds in memory: the keys, values and
	 * headers of its sends queued behind the previous transaction's unacknowledged records
	 * ({@link HeldSends}); 0 once they reached their producers. While a transaction's sends are
	 * held, the pipeline waits for the acknowledgement of records already sent, and a transaction
	 * that grows only holds more records in memory ({@link TransactionSizing#due(long, long,
	 * TransactionPipeline)}).
	 * @return 0 or more bytes; read without a lock, so possibly a moment old
	 * @since 0.2.0
	 */
	public long heldBytes() {
		HeldSends sends = this.newest;
		return (sends != null) ? sends.heldBytes() : 0;
	}

	/**
	 * Begins a transaction, waiting while {@link #depth()} transactions of this pipeline are
	 * open or committing (at most the manager's commit timeout). Its records reach their producers
	 * once every record of the transaction begun before it is acknowledged; until then its sends
	 * are queued in order and their futures complete later, so a caller that waits for a send's
	 * future must have handed the previous transaction over (or aborted it) first.
	 * @return the transaction; end it with {@link #commitAsync} or its own {@code abort()}
	 * @throws TandemException if no transaction ended in time
	 * @throws IllegalStateException if the pipeline is closed
	 */
	public CrossClusterTransaction begin() {
		if (this.closed) {
			throw new IllegalStateException("Pipeline is closed");
		}
		try {
			if (!this.permits.tryAcquire(this.slotTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
				throw new TandemException("No transaction of the pipeline ended within " + DurationText.of(this.slotTimeout) + " ("
						+ this.depth + " in flight)");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted while waiting for a pipelined transaction to end", ex);
		}
		try {
			CrossClusterTransaction transaction = this.manager.begin();
			transaction.onEnd(this.permits::release);
			transaction.deferOffsetsToCommit();
			HeldSends sends = new HeldSends(this.lastAcknowledged, this.releaser);
			this.newest = sends;
			transaction.holdSends(sends);
			this.lastAcknowledged = sends.acknowledged();
			return transaction;
		}
		catch (RuntimeException ex) {
			this.permits.release();
			throw ex;
		}
	}

	/**
	 * Commits a transaction of this pipeline after every transaction committed before it. Returns
	 * at once, without waiting for its records' acknowledgements, the decision or the commits
	 * (its records may still be held behind the previous transaction's). The caller must not use
	 * the transaction any more. Hand transactions over in the order they were begun.
	 * @param transaction an active transaction from {@link #begin()}
	 * @return completes normally once the transaction committed on every cluster; exceptionally
	 *     with {@link TransactionAbortedException} (nothing visible; a
	 *     {@link PredecessorFailedException} if an earlier transaction failed), with
	 *     {@link HeuristicOutcomeException}, or with another {@link TandemException}
	 * @throws IllegalStateException if the transaction is not active or the pipeline is closed
	 */
	public CompletableFuture<Void> commitAsync(CrossClusterTransaction transaction) {
		if (this.closed) {
			throw new IllegalStateException("Pipeline is closed");
		}
		if (transaction.state() != TransactionState.ACTIVE) {
			throw new IllegalStateException("Transaction " + transaction.transactionId() + " is " + transaction.state()
					+ ", not ACTIVE");
		}
		transaction.handToPipeline();
		forgetCompleted();
		CompletableFuture<Void> outcome = new CompletableFuture<>();
		this.submitted.add(outcome);
		this.unprepared.incrementAndGet();
		CompletableFuture<@Nullable PreparedCommit> prepared;
		try {
			prepared = CompletableFuture.supplyAsync(() -> {
				try {
					return prepareInOrder(transaction);
				}
				finally {
					this.unprepared.decrementAndGet();
				}
			}, this.preparer);
		}
		catch (RuntimeException ex) {
			this.unprepared.decrementAndGet();
			throw ex;
		}
		this.decider.execute(() -> commitInOrder(transaction, prepared, outcome));
		return outcome;
	}

	/** On the preparing thread; null if an earlier transaction failed (the deciding thread aborts it). */
	private @Nullable PreparedCommit prepareInOrder(CrossClusterTransaction transaction) {
		if (this.failure.get() != null) {
			return null;
		}
		return transaction.prepareToCommit();
	}

	private void commitInOrder(CrossClusterTransaction transaction,
			CompletableFuture<@Nullable PreparedCommit> preparing, CompletableFuture<Void> outcome) {
		@Nullable PreparedCommit prepared = null;
		Throwable prepareFailure = null;
		try {
			prepared = preparing.join();
		}
		catch (CompletionException ex) {
			prepareFailure = (ex.getCause() != null) ? ex.getCause() : ex;
		}
		Throwable earlier = this.failure.get();
		if (earlier != null) {
			try {
				transaction.abortInPipeline();
			}
			catch (RuntimeException ex) {
				logger.warn("Abort of pipelined transaction {} after an earlier failure failed", transaction.transactionId(),
						ex);
			}
			outcome.completeExceptionally(new PredecessorFailedException("Transaction " + transaction.transactionId()
					+ " was aborted undecided: an earlier transaction of its pipeline failed (" + earlier + ")", earlier));
			return;
		}
		if (prepareFailure != null || prepared == null) {
			Throwable failed = (prepareFailure != null) ? prepareFailure
					: new IllegalStateException("Transaction " + transaction.transactionId() + " was not prepared");
			failed(failed, outcome);
			return;
		}
		PreparedCommit ready = prepared;
		@Nullable Decision decision;
		try {
			decision = awaitInDoubt(() -> transaction.decideStage(ready));
		}
		catch (Throwable ex) {
			failed(ex, outcome);
			return;
		}
		if (decision == null) {
			outcome.complete(null);
			return;
		}
		// Decided: the outcome can only be a commit now, so the next transaction may be decided
		// while this one's commits run.
		this.committers.execute(() -> {
			try {
				awaitInDoubt(() -> {
					transaction.commitDecidedStage(decision, ready);
					return null;
				});
				outcome.complete(null);
			}
			catch (Throwable ex) {
				failed(ex, outcome);
			}
		});
	}

	private void failed(Throwable failure, CompletableFuture<Void> outcome) {
		this.failure.compareAndSet(null, failure);
		outcome.completeExceptionally(failure);
	}

	/**
	 * Runs a stage; one that ends in doubt is waited for while the pipeline runs. On the
	 * deciding thread this holds the successors back: a decision whose outcome is unknown may
	 * still end aborted, and N+1 must not be decided before N's outcome is known.
	 */
	private <T> @Nullable T awaitInDoubt(Callable<@Nullable T> stage) throws Throwable {
		try {
			return stage.call();
		}
		catch (InDoubtTransactionException ex) {
			// Wait while the pipeline runs; once it closes, leave the outcome to recovery (the
			// manager's retry queue, or the next start) instead of holding close() for it.
			while (!this.closing) {
				try {
					ex.awaitCommitted(IN_DOUBT_POLL);
					return null;
				}
				catch (java.util.concurrent.TimeoutException notYet) {
					// still in-doubt: look at closing again
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					throw ex;
				}
			}
			throw ex;
		}
	}

	/**
	 * Waits until every transaction committed asynchronously so far has its outcome, then makes
	 * the pipeline commit again after a failure.
	 * @throws TandemException (or a subclass: the failure itself) the first failure since the
	 *     last drain, after which later transactions were aborted
	 */
	public void drain() {
		Throwable first = null;
		while (!this.submitted.isEmpty()) {
			CompletableFuture<Void> outcome = this.submitted.poll();
			try {
				outcome.join();
			}
			catch (CompletionException ex) {
				if (first == null) {
					first = ex.getCause();
				}
			}
		}
		// Every task ran: the deciding and committing threads wrote their failures before completing.
		this.failure.set(null);
		// A transaction begun from now on waits for the records before it, but no failure before
		// the drain discards its sends (the ones begun before it still abort).
		this.lastAcknowledged = this.lastAcknowledged.handle((ok, ex) -> null);
		if (first instanceof RuntimeException runtime) {
			throw runtime;
		}
		if (first != null) {
			throw new TandemException("Pipelined transaction failed: " + first, first);
		}
	}

	/** Forgets the commits already known to have succeeded, so that the queue stays short. */
	private void forgetCompleted() {
		while (!this.submitted.isEmpty() && this.submitted.peek().isDone()
				&& !this.submitted.peek().isCompletedExceptionally()) {
			this.submitted.poll();
		}
	}

	/**
	 * Drains (a failure is logged, not thrown), then stops the pipeline's threads. Commits under
	 * way end as usual (each within its own timeouts); a transaction waiting for an in-doubt
	 * outcome is no longer waited for: it fails with its {@link InDoubtTransactionException} and
	 * stays with the manager's recovery (resolved in the background while the manager runs, or at
	 * its next start), so closing never waits for a decision log or cluster that does not answer.
	 * The manager stays open. Idempotent.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closing = true;
		try {
			drain();
		}
		catch (RuntimeException ex) {
			logger.warn("A pipelined transaction failed before the pipeline closed: {}", ex.toString());
		}
		finally {
			this.closed = true;
			this.preparer.shutdown();
			this.decider.shutdown();
			this.committers.shutdown();
			this.releaser.shutdown();
		}
	}

}
