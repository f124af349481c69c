package dev.tandem.transaction;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.text.DurationText;

/**
 * A consume-transform-produce loop over pipelined cross-cluster transactions: records polled
 * from one cluster are handed to a {@link BatchHandler} inside a transaction, which may send to
 * any cluster; the consumer's offsets are committed on its own cluster in the same transaction.
 * A transaction spans polls until it holds {@code maxRecords} records or is {@code maxInterval}
 * old (the Flink checkpoint idea at millisecond scale), then commits on a
 * {@link TransactionPipeline} while the next one already executes.
 * <p>
 * Exactly once: a record's effects and its offset commit together. After any failure (the
 * handler threw, a commit failed, a pipelined successor was aborted) the open transaction and
 * every undecided later one are aborted, the consumer is rewound to the first offset of each
 * partition that was not committed, the failure is thrown from {@link #poll(Duration)} once,
 * and the next poll delivers those records again; the records of a transaction with a heuristic
 * outcome are not delivered again ({@link PipelinedOutcomes}, the one rewind policy). On a
 * rebalance the processor commits what it has and drains the pipeline before partitions are
 * revoked.
 * <p>
 * Confined to one thread, the one that calls {@link #poll(Duration)}; the
 * {@link ProcessorListener} is called on one of the pipeline's deciding or committing threads,
 * one outcome at a time and in begin order.
 *
 * @param <K> key type
 * @param <V> value type
 * @since 0.1.0
 */
public final class CrossClusterProcessor<K, V> implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(CrossClusterProcessor.class);

	/**
	 * Default {@link CrossClusterProcessorBuilder#depth(int)}: the open transaction, one preparing
	 * (its offset commit, a round trip to the source) and two committing, so that at 40 and 80 ms
	 * from the source the caller rarely waits for a free place (issue 25; depth 2 against 4 in
	 * {@code docs/benchmarks.md}, "Across regions: after the pipeline change").
	 */
	public static final int DEFAULT_DEPTH = 4;

	/**
	 * Default {@link CrossClusterProcessorBuilder#maxRecords(int)}: each transaction costs a
	 * decision and a commit on every cluster, whatever its size, so at full speed larger ones copy
	 * more per second; at low rates {@code maxInterval} closes them first. Chosen by {@code ThroughputBench}
	 * ({@code docs/benchmarks.md}).
	 */
	public static final int DEFAULT_MAX_RECORDS = 5000;

	/**
	 * Default {@link CrossClusterProcessorBuilder#growth(int)}: a transaction at {@code maxRecords}
	 * keeps taking records, up to 8 times as many, while the previous one still prepares.
	 */
	public static final int DEFAULT_GROWTH = 8;

	/** Default {@link CrossClusterProcessorBuilder#maxInterval(Duration)}. */
	public static final Duration DEFAULT_MAX_INTERVAL = Duration.ofMillis(100);

	private final Consumer<K, V> consumer;

	private final TransactionPipeline pipeline;

	private final BatchHandler<K, V> handler;

	private final CommitHook beforeCommit;

	/** The consumer whose group keeps the offsets: the polled one unless {@code offsetsIn} was set. */
	private final Consumer<?, ?> offsetsConsumer;

	private final UnaryOperator<Map<TopicPartition, OffsetAndMetadata>> offsetsKeys;

	private final List<ProcessorListener> listeners;

	private final TransactionSizing sizing;

	private final long maxIntervalNanos;

	private final boolean closeWhenIdle;

	private final PipelinedOutcomes<Closed> outcomes;

	private @Nullable Open open;

	private @Nullable RuntimeException pendingFailure;

	private boolean closed;

	CrossClusterProcessor(CrossClusterProcessorBuilder<K, V> builder) {
		this.consumer = builder.consumer;
		this.handler = Objects.requireNonNull(builder.handler, "handler");
		this.beforeCommit = builder.beforeCommit;
		this.offsetsConsumer = (builder.offsetsConsumer != null) ? builder.offsetsConsumer : builder.consumer;
		this.offsetsKeys = builder.offsetsKeys;
		this.listeners = List.copyOf(builder.listeners);
		this.outcomes = new PipelinedOutcomes<>(this::told);
		this.sizing = new TransactionSizing(builder.maxRecords, builder.growth, builder.maxInterval);
		if (builder.maxInterval.compareTo(builder.manager.transactionTimeout()) >= 0) {
			throw new IllegalArgumentException("maxInterval " + DurationText.of(builder.maxInterval)
					+ " is not below the manager's transaction timeout "
					+ DurationText.of(builder.manager.transactionTimeout())
					+ " (transaction.timeout.ms): a transaction left open that long is aborted by the brokers and "
					+ "every one would fail; set a shorter maxInterval (default " + DurationText.of(DEFAULT_MAX_INTERVAL)
					+ ") or a longer CrossClusterTransactionManagerBuilder.transactionTimeout");
		}
		this.maxIntervalNanos = builder.maxInterval.toNanos();
		this.closeWhenIdle = builder.closeWhenIdle;
		this.pipeline = builder.manager.pipeline(builder.depth);
		ConsumerRebalanceListener rebalance = new Rebalance(builder.rebalanceListener);
		if (builder.topics != null) {
			this.consumer.subscribe(builder.topics, rebalance);
		}
		else if (builder.pattern != null) {
			this.consumer.subscribe(builder.pattern, rebalance);
		}
		else if (builder.assignment != null) {
			this.consumer.assign(builder.assignment);
		}
		else {
			throw new IllegalArgumentException("Set what to consume: subscribe(topics), subscribe(pattern) or assign(...)");
		}
	}

	/**
	 * Starts building a processor.
	 * @param <K> key type
	 * @param <V> value type
	 * @param manager a running manager
	 * @param consumer a consumer the manager created or registered ({@code read_committed}, no
	 *     auto commit), used only by the processor's thread from now on
	 * @return the builder
	 */
	public static <K, V> CrossClusterProcessorBuilder<K, V> builder(CrossClusterTransactionManager manager,
			Consumer<K, V> consumer) {
		return new CrossClusterProcessorBuilder<>(manager, consumer);
	}

	/**
	 * Polls once, hands the records to the handler in the open transaction (beginning one if
	 * needed), and closes the transaction when it is due: its records reached
	 * {@code maxRecords}, or it is {@code maxInterval} old, or (with {@code closeWhenIdle}) it
	 * holds records and no earlier transaction is still preparing or committing. Waits at most until the open
	 * transaction is due, so that a quiet source does not hold records back.
	 * @param timeout the longest wait for records
	 * @throws TransactionAbortedException, {@link HeuristicOutcomeException} or another
	 *     {@link TandemException}: an earlier transaction of this processor failed, or the
	 *     handler or the commit hook threw now (a {@link TransactionAbortedException} with the
	 *     handler's exception as its cause); the consumer has been rewound and the processor
	 *     stays usable
	 * @throws IllegalStateException if closed
	 */
	public void poll(Duration timeout) {
		if (this.closed) {
			throw new IllegalStateException("Processor is closed");
		}
		checkCommits();
		throwPending();
		Duration wait = timeout;
		Open current = this.open;
		if (current != null) {
			long left = current.startedNanos + this.maxIntervalNanos - System.nanoTime();
			wait = Duration.ofNanos(Math.max(0, Math.min(timeout.toNanos(), left)));
		}
		ConsumerRecords<K, V> records;
		try {
			records = this.consumer.poll(wait);
		}
		catch (WakeupException ex) {
			throwPending();
			throw ex;
		}
		throwPending(); // a rebalance during poll drained the pipeline and found a failure
		if (!records.isEmpty()) {
			handle(records);
		}
		current = this.open;
		if (current != null && (this.sizing.due(current.records, System.nanoTime() - current.startedNanos,
				this.pipeline)
				|| (this.closeWhenIdle && current.records > 0 && this.pipeline.inFlight() <= 1))) {
			closeOpen();
		}
	}

	/**
	 * Polls until {@code keepRunning} says false; a failure is logged and the loop polls on
	 * (the records are delivered again) after a back-off of 100 ms doubling to 5 s.
	 * @param keepRunning checked before every poll
	 * @throws HeuristicOutcomeException when a transaction's outcome is mixed: it needs an
	 *     operator, so the loop stops
	 */
	public void run(BooleanSupplier keepRunning) {
		FailureBackOff backOff = new FailureBackOff();
		while (keepRunning.getAsBoolean()) {
			try {
				poll(Duration.ofMillis(100));
				backOff.succeeded();
			}
			catch (HeuristicOutcomeException ex) {
				throw ex;
			}
			catch (TandemException ex) {
				if (!backOff.failed("Cross-cluster processor", ex)) {
					return;
				}
			}
		}
	}

	/**
	 * Commits the open transaction now (asynchronously), whatever its size or age.
	 * @throws TandemException as {@link #poll(Duration)}
	 */
	public void flush() {
		checkCommits();
		throwPending();
		if (this.open != null) {
			closeOpen();
		}
	}

	/**
	 * Returns how many transactions are open or committing.
	 * @return 0 to the depth
	 */
	public int inFlight() {
		return this.pipeline.inFlight();
	}

	/**
	 * Commits the open transaction and waits until every transaction of this processor has its
	 * outcome: what a rebalance listener calls before partitions are revoked, for a group the
	 * processor did not subscribe ({@link CrossClusterProcessorBuilder#offsetsIn}). A failure
	 * rewinds the consumer as in {@link #poll} and is thrown by the next {@link #poll}. Call on
	 * the processor's thread.
	 * @since 0.2.0
	 */
	public void drain() {
		commitAndDrain();
	}

	/**
	 * Gives up every transaction not committed yet, because partitions were lost (another member
	 * may own them now: nothing of this processor may commit for them any more): the open one
	 * aborts, the later ones abort in order, the consumer is rewound and the failure is thrown by
	 * the next {@link #poll}. Does nothing if no transaction is open or under way. Call on the
	 * processor's thread.
	 * @param partitions the partitions lost, for the failure's message
	 * @since 0.2.0
	 */
	public void abandon(Collection<TopicPartition> partitions) {
		if (this.open != null || this.outcomes.size() > 0) {
			fail(new TransactionAbortedException("Partitions " + partitions + " were lost", null));
		}
	}

	private void handle(ConsumerRecords<K, V> records) {
		Open current = this.open;
		if (current == null) {
			CrossClusterTransaction begun = null;
			try {
				begun = this.pipeline.begin();
				// The source's marker goes out now, not after the offsets at commit (issue 25).
				begun.enlistClusterOf(this.offsetsConsumer);
				current = new Open(begun);
			}
			catch (RuntimeException ex) {
				if (begun != null) {
					begun.close();
				}
				// The poll moved past these records and no transaction holds them: put them back,
				// or a later transaction's offsets would commit past them.
				Set<TopicPartition> assigned = this.consumer.assignment();
				for (TopicPartition partition : records.partitions()) {
					if (assigned.contains(partition)) {
						this.consumer.seek(partition, records.records(partition).get(0).offset());
					}
				}
				throw ex;
			}
			this.open = current;
		}
		for (TopicPartition partition : records.partitions()) {
			List<ConsumerRecord<K, V>> polled = records.records(partition);
			current.first.putIfAbsent(partition, polled.get(0).offset());
			ConsumerRecord<K, V> last = polled.get(polled.size() - 1);
			current.next.put(partition, new OffsetAndMetadata(last.offset() + 1, last.leaderEpoch(), ""));
		}
		current.records += records.count();
		try {
			this.handler.handle(records, current.transaction);
		}
		catch (Exception ex) {
			fail(new TransactionAbortedException("The handler failed on " + records.count() + " record(s); transaction "
					+ current.transaction.transactionId() + " and every later one aborted: " + ex, ex));
			throwPending();
		}
	}

	private void closeOpen() {
		Open current = this.open;
		if (current == null) {
			return;
		}
		this.open = null;
		Map<TopicPartition, OffsetAndMetadata> next = Map.copyOf(current.next);
		CrossClusterTransaction transaction = current.transaction;
		try {
			this.beforeCommit.beforeCommit(transaction, next);
			transaction.sendOffsets(this.offsetsConsumer, this.offsetsKeys.apply(next));
		}
		catch (Exception ex) {
			this.open = current;
			fail(new TransactionAbortedException("Closing transaction " + transaction.transactionId() + " failed; it and "
					+ "every later one aborted: " + ex, ex));
			throwPending();
		}
		this.outcomes.submitted(new Closed(transaction.transactionId(), current.records, next), current.first,
				this.pipeline.commitAsync(transaction));
	}

	/** Tells the listeners a transaction's outcome, in begin order (the ledger's thread). */
	private void told(Closed closed, @Nullable Throwable failure) {
		for (ProcessorListener listener : this.listeners) {
			try {
				if (failure == null) {
					listener.onCommitted(closed.transactionId(), closed.records(), closed.next());
				}
				else {
					listener.onAborted(closed.transactionId(), failure);
				}
			}
			catch (RuntimeException ex) {
				logger.warn("Outcome listener {} failed on transaction {}", listener, closed.transactionId(), ex);
			}
		}
	}

	/** On the first failed transaction, fails the processor. */
	private void checkCommits() {
		Throwable failure = this.outcomes.failure();
		if (failure != null) {
			fail(failure);
		}
	}

	/**
	 * Aborts the open transaction, drains the pipeline (later transactions abort), rewinds every
	 * partition to its first offset not committed, and keeps the failure to throw once.
	 */
	private void fail(Throwable cause) {
		try {
			this.pipeline.drain();
		}
		catch (RuntimeException ex) {
			// known to the ledger, which reports the earliest
		}
		Open current = this.open;
		this.open = null;
		if (current != null) {
			try {
				current.transaction.abort();
			}
			catch (RuntimeException ex) {
				logger.warn("Abort of transaction {} failed", current.transaction.transactionId(), ex);
			}
			this.outcomes.abortedOpen(new Closed(current.transaction.transactionId(), current.records, Map.of()),
					current.first, cause);
		}
		PipelinedOutcomes.Rewind rewind = this.outcomes.rewind(Map.of());
		// the cause at hand, unless it only says an earlier one failed: then the earliest
		Throwable first = (cause instanceof PredecessorFailedException && rewind.firstFailure() != null)
				? rewind.firstFailure() : cause;
		Set<TopicPartition> assigned = this.consumer.assignment();
		rewind.offsets().forEach((partition, offset) -> {
			if (assigned.contains(partition)) {
				this.consumer.seek(partition, offset);
			}
		});
		logger.warn("Cross-cluster transaction failed; rewound {} partition(s) to their first offsets not committed: {}",
				rewind.offsets().size(), String.valueOf(first));
		this.pendingFailure = (first instanceof RuntimeException runtime) ? runtime
				: new TandemException("Cross-cluster processor failed: " + first, first);
	}

	private void throwPending() {
		RuntimeException failure = this.pendingFailure;
		if (failure != null) {
			this.pendingFailure = null;
			throw failure;
		}
	}

	/** Commits what is open and waits for every commit; a failure rewinds and is kept. */
	private void commitAndDrain() {
		if (this.open != null) {
			try {
				closeOpen();
			}
			catch (RuntimeException ex) {
				// fail() ran and rewound; the failure is thrown again at the next poll
				this.pendingFailure = ex;
				return;
			}
		}
		try {
			this.pipeline.drain();
		}
		catch (RuntimeException ex) {
			// known to the ledger
		}
		checkCommits();
	}

	/**
	 * Commits the open transaction and waits for every commit under way (a transaction whose
	 * outcome is in doubt is left to the manager's recovery, {@link TransactionPipeline#close()});
	 * does not close the consumer or the manager. A failure is logged. Idempotent.
	 */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		try {
			if (this.open != null) {
				closeOpen();
			}
		}
		catch (RuntimeException ex) {
			// fail() ran: the open transaction aborted, its records go to the next consumer
			this.pendingFailure = ex;
		}
		finally {
			this.closed = true;
			this.pipeline.close();
		}
		Throwable failure = (this.pendingFailure != null) ? this.pendingFailure : this.outcomes.failure();
		if (failure != null) {
			logger.warn("Cross-cluster processor closed after a failure; the records of its transactions that did not "
					+ "commit are delivered again to the next consumer: {}", failure.toString());
		}
	}

	private final class Rebalance implements ConsumerRebalanceListener {

		private final @Nullable ConsumerRebalanceListener delegate;

		Rebalance(@Nullable ConsumerRebalanceListener delegate) {
			this.delegate = delegate;
		}

		@Override
		public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
			if (!partitions.isEmpty()) {
				commitAndDrain();
			}
			if (this.delegate != null) {
				this.delegate.onPartitionsRevoked(partitions);
			}
		}

		@Override
		public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
			if (this.delegate != null) {
				this.delegate.onPartitionsAssigned(partitions);
			}
		}

		@Override
		public void onPartitionsLost(Collection<TopicPartition> partitions) {
			abandon(partitions);
			if (this.delegate != null) {
				this.delegate.onPartitionsLost(partitions);
			}
		}

	}

	private static final class Open {

		final CrossClusterTransaction transaction;

		final long startedNanos = System.nanoTime();

		final Map<TopicPartition, Long> first = new HashMap<>();

		final Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();

		int records;

		Open(CrossClusterTransaction transaction) {
			this.transaction = transaction;
		}

	}

	/** What the ledger keeps of a closed transaction for the listener. */
	private record Closed(String transactionId, int records, Map<TopicPartition, OffsetAndMetadata> next) {
	}

	/**
	 * Works on the records of one poll inside the open transaction.
	 * @param <K> key type
	 * @param <V> value type
	 */
	@FunctionalInterface
	public interface BatchHandler<K, V> {

		/**
		 * Handles one poll's records; a transaction may span several calls. Sends go through
		 * the transaction; do not commit or abort it.
		 * @param records the records, not empty
		 * @param transaction the open transaction
		 * @throws Exception to abort the transaction and every later one and deliver the records
		 *     again
		 */
		void handle(ConsumerRecords<K, V> records, CrossClusterTransaction transaction) throws Exception;

	}

	/** Called once per transaction, after its last handler call, before its offsets are added. */
	@FunctionalInterface
	public interface CommitHook {

		/**
		 * @param transaction the transaction about to commit
		 * @param next the consumer offsets it commits: the next offset per partition
		 * @throws Exception to abort it (as a handler failure)
		 */
		void beforeCommit(CrossClusterTransaction transaction, Map<TopicPartition, OffsetAndMetadata> next)
				throws Exception;

	}

	/**
	 * Told each transaction's outcome exactly once, in begin order ({@link PipelinedOutcomes}),
	 * transactions aborted while still open included; called one at a time, on the pipeline's
	 * committing thread or on the processor's thread. Must not block for long: the next
	 * outcomes wait for it. A {@code RuntimeException} it throws is logged and ignored; an
	 * {@code Error} is logged and fails the processor's next {@code poll} (its open transaction
	 * is aborted and its records delivered again), later outcomes are still told.
	 */
	public interface ProcessorListener {

		/**
		 * A transaction committed on every cluster.
		 * @param transactionId its id
		 * @param records how many consumed records it carried
		 * @param next the consumer offsets it committed
		 */
		default void onCommitted(String transactionId, int records, Map<TopicPartition, OffsetAndMetadata> next) {
		}

		/**
		 * A transaction did not commit; its records are delivered again.
		 * @param transactionId its id
		 * @param cause why
		 */
		default void onAborted(String transactionId, Throwable cause) {
		}

	}

}
