package dev.tandem.autoconfigure.transaction;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.autoconfigure.transaction.TandemTransactionObserver.Observed;
import dev.tandem.autoconfigure.transaction.TandemTransactionObserver.Outcome;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.DatabaseFailures;
import dev.tandem.transaction.HeuristicOutcomeException;
import dev.tandem.transaction.PipelinedOutcomes;
import dev.tandem.transaction.TransactionAbortedException;
import dev.tandem.transaction.TransactionPipeline;
import dev.tandem.transaction.TransactionSizing;
import dev.tandem.transaction.TransactionState;

/**
 * One consumer's pipeline, its open transaction and its transactions in flight, in delivery
 * order, kept in the ledger shared with {@link dev.tandem.transaction.CrossClusterProcessor}
 * (one rewind policy: a heuristic outcome is not delivered again, see {@link PipelinedOutcomes}).
 * Confined to the consumer's thread, except the ledger's outcomes (see {@link ListenerPipelines}).
 *
 * @since 0.1.0
 */
final class ListenerPipeline {

	private static final Logger logger = LoggerFactory.getLogger(ListenerPipeline.class);

	private final Consumer<?, ?> consumer;

	private final TransactionPipeline pipeline;

	private final Duration backOff;

	private final TransactionSizing sizing;

	/** Failed rewinds since the last commit: set on the consumer's thread, reset on the committing one. */
	private final AtomicInteger failuresInARow = new AtomicInteger();

	/**
	 * Attachment: the transaction's next offsets (past its records), per partition: its
	 * {@link Open#next}, no longer changed once the transaction is closed or aborted.
	 */
	private final PipelinedOutcomes<Map<TopicPartition, OffsetAndMetadata>> outcomes = new PipelinedOutcomes<>((next, failure) -> {
		if (failure == null) {
			this.failuresInARow.set(0);
		}
		else if (DatabaseFailures.isNonTransient(failure)) {
			next.forEach((partition, offset) -> this.failedOnTheirOwn.merge(partition, offset.offset(), Math::max));
		}
	});

	/**
	 * Offsets past the records of transactions that failed at commit on a database failure that
	 * fails every time (a deferred constraint checked by the prepare, a statement failure the
	 * listener caught): told on any thread, taken by the next rewind.
	 */
	private final Map<TopicPartition, Long> failedOnTheirOwn = new ConcurrentHashMap<>();

	/**
	 * Taken from {@link #failedOnTheirOwn} at a rewind: a delivery holding a record below these
	 * offsets runs alone, outside the pipeline, so that its failure is narrowed to its record.
	 */
	private final Map<TopicPartition, Long> aloneUntil = new HashMap<>();

	private @Nullable Open open;

	/**
	 * After a listener failed on a later delivery of an open transaction: the offsets past
	 * that delivery; until the consumer's position reaches them, deliveries do not span.
	 */
	private @Nullable Map<TopicPartition, Long> noSpanUntil;

	ListenerPipeline(Consumer<?, ?> consumer, TransactionPipeline pipeline, Duration backOff,
			TransactionSizing sizing) {
		this.consumer = consumer;
		this.pipeline = pipeline;
		this.backOff = backOff;
		this.sizing = sizing;
	}

	/** Returns the open transaction, or null. */
	@Nullable Open open() {
		return this.open;
	}

	/**
	 * Begins the open transaction on the pipeline (waiting for a free place), observed.
	 * @throws RuntimeException as {@link TransactionPipeline#begin()}
	 */
	Open begin(TandemTransactionObserver observer) {
		Observed observed = observer.start();
		try {
			Open begun = new Open(this.pipeline.begin(), observed);
			observed.begun(begun.transaction);
			this.open = begun;
			return begun;
		}
		catch (RuntimeException ex) {
			observed.ended(Outcome.ABORTED, ex);
			observed.close();
			throw ex;
		}
	}

	/** The wait of a poll: at most until the open transaction is due. */
	Duration pollTimeout(Duration timeout) {
		Open current = this.open;
		if (current == null) {
			return timeout;
		}
		long left = this.sizing.nanosUntilDue(System.nanoTime() - current.startedNanos);
		return (left < timeout.toNanos()) ? Duration.ofNanos(left) : timeout;
	}

	/**
	 * After a delivery joined the open transaction: closes it if it is due, or at once while
	 * deliveries do not span (after a listener failure, until the consumer is past it).
	 */
	void delivered() {
		if (this.open != null && (!spans() || due(this.open))) {
			closeOpen();
		}
	}

	/** Closes the open transaction if it is due. */
	void closeIfDue() {
		if (this.open != null && due(this.open)) {
			closeOpen();
		}
	}

	private boolean due(Open current) {
		return this.sizing.due(current.records, System.nanoTime() - current.startedNanos, this.pipeline);
	}

	private boolean spans() {
		Map<TopicPartition, Long> until = this.noSpanUntil;
		if (until == null) {
			return true;
		}
		Set<TopicPartition> assigned = this.consumer.assignment();
		for (Map.Entry<TopicPartition, Long> entry : until.entrySet()) {
			if (assigned.contains(entry.getKey()) && this.consumer.position(entry.getKey()) < entry.getValue()) {
				return false;
			}
		}
		this.noSpanUntil = null;
		return true;
	}

	/**
	 * Adds the open transaction's offsets and hands it to the pipeline. Never throws: a
	 * failure aborts it and is the ledger's, rewound at the next delivery or poll.
	 */
	void closeOpen() {
		Open current = this.open;
		if (current == null) {
			return;
		}
		this.open = null;
		current.detach();
		CompletableFuture<Void> outcome;
		try {
			current.transaction.sendOffsets(this.consumer, Map.copyOf(current.next));
			outcome = this.pipeline.commitAsync(current.transaction);
		}
		catch (RuntimeException ex) {
			aborted(current, ex);
			return;
		}
		this.outcomes.submitted(current.next, current.first, outcome);
		Observed observed = current.observed;
		outcome.whenComplete((ok, failure) -> {
			try {
				Throwable cause = (failure instanceof CompletionException) ? failure.getCause() : failure;
				observed.ended((cause == null) ? Outcome.COMMITTED
						: (cause instanceof HeuristicOutcomeException) ? Outcome.HEURISTIC : Outcome.ABORTED, cause);
			}
			finally {
				observed.close();
			}
		});
	}

	/** Aborts the open transaction, if any; its records are rewound with the ledger's next rewind. */
	void abortOpen(Throwable cause) {
		Open current = this.open;
		if (current != null) {
			this.open = null;
			current.detach();
			aborted(current, cause);
		}
	}

	/**
	 * The listener failed on the first delivery of the open transaction, which the template
	 * aborted: only that delivery's records were in it, and they are narrowed by the caller.
	 */
	void forgetOpen(Throwable cause) {
		Open current = this.open;
		if (current != null) {
			this.open = null;
			current.detach();
			current.end(cause);
		}
	}

	/**
	 * The open transaction held earlier deliveries and failed with the one at hand: aborts it
	 * (if the template has not), waits for the transactions before it and seeks every
	 * partition back to its first offset not committed; the deliveries are delivered again,
	 * each alone until the consumer is past the one at hand.
	 */
	void abandon(List<ConsumerRecord<?, ?>> delivery, Throwable cause) {
		abortOpen(cause);
		Map<TopicPartition, Long> until = new LinkedHashMap<>();
		ListenerInvocation.nextOffsets(delivery).forEach((partition, next) -> until.put(partition, next.offset()));
		this.noSpanUntil = until;
		drain();
		rewind(delivery);
	}

	private void aborted(Open current, Throwable cause) {
		if (current.transaction.state() == TransactionState.ACTIVE) {
			try {
				current.transaction.abort();
			}
			catch (RuntimeException ex) {
				logger.warn("Abort of listener transaction {} failed", current.transaction.transactionId(), ex);
			}
		}
		current.end(cause);
		this.outcomes.abortedOpen(current.next, current.first, cause);
	}

	/**
	 * Whether a delivery must run alone, in a transaction of its own outside the pipeline and
	 * narrowed on failure: it holds a record of a pipelined transaction that failed at commit on a
	 * database failure that fails every time. Delivered again in the pipeline, such records would
	 * fail its asynchronous commit again without end; alone, the commit's failure is the records'
	 * and goes to {@code tandem.listener.failed-record} like a listener failure. Forgets a
	 * partition once the consumer is past that transaction's records on it.
	 * @param delivery the records at hand
	 * @return true if the delivery must run alone
	 */
	boolean alone(List<ConsumerRecord<?, ?>> delivery) {
		if (this.aloneUntil.isEmpty()) {
			return false;
		}
		boolean alone = false;
		for (ConsumerRecord<?, ?> record : delivery) {
			Long until = this.aloneUntil.get(new TopicPartition(record.topic(), record.partition()));
			if (until != null && record.offset() < until) {
				alone = true;
				break;
			}
		}
		Set<TopicPartition> assigned = this.consumer.assignment();
		this.aloneUntil.entrySet()
			.removeIf((entry) -> !assigned.contains(entry.getKey())
					|| this.consumer.position(entry.getKey()) >= entry.getValue());
		return alone;
	}

	/**
	 * If a transaction in flight failed, aborts the open one and rewinds.
	 * @param delivery the records at hand, not processed: delivered again too
	 * @return true if the consumer was rewound: the delivery at hand must not be processed
	 */
	boolean rewindIfFailed(List<ConsumerRecord<?, ?>> delivery) {
		if (this.outcomes.failure() == null) {
			return false;
		}
		abortOpen(new TransactionAbortedException("An earlier transaction of the listener's pipeline failed", null));
		drain();
		rewind(delivery);
		return true;
	}

	/**
	 * Waits for every transaction in flight (none is open); rewinds if one failed.
	 * @param delivery the records at hand, delivered again too if one failed
	 * @return true if the consumer was rewound
	 */
	boolean drainAndRewind(List<ConsumerRecord<?, ?>> delivery) {
		drain();
		if (this.outcomes.failure() == null) {
			this.failuresInARow.set(0);
			return false;
		}
		rewind(delivery);
		return true;
	}

	private void drain() {
		try {
			this.pipeline.drain();
		}
		catch (RuntimeException ex) {
			// known to the ledger
		}
	}

	/** After {@link #drain()}: every outcome is known. */
	private void rewind(List<ConsumerRecord<?, ?>> delivery) {
		PipelinedOutcomes.Rewind rewind = this.outcomes.rewind(ListenerInvocation.firstOffsets(delivery));
		ListenerInvocation.seek(this.consumer, rewind.offsets());
		for (TopicPartition partition : Set.copyOf(this.failedOnTheirOwn.keySet())) {
			Long until = this.failedOnTheirOwn.remove(partition);
			if (until != null) {
				this.aloneUntil.merge(partition, until, Math::max);
			}
		}
		int failures = this.failuresInARow.incrementAndGet();
		logger.warn("A pipelined listener transaction did not commit ({}); {} partition(s) sought back to their first "
				+ "offsets not committed, delivered again{}", String.valueOf(rewind.firstFailure()),
				rewind.offsets().size(), (failures > 1) ? " after " + this.backOff : "");
		if (failures > 1 && !this.backOff.isZero()) {
			try {
				Thread.sleep(this.backOff.toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	void close() {
		this.pipeline.close();
	}

	/**
	 * The open transaction of a consumer: the deliveries it holds so far, their first offsets
	 * (where the consumer goes back to if it does not commit) and next offsets (committed with it).
	 */
	static final class Open {

		final CrossClusterTransaction transaction;

		final Observed observed;

		final long startedNanos = System.nanoTime();

		final Map<TopicPartition, Long> first = new LinkedHashMap<>();

		final Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();

		int records;

		int deliveries;

		private boolean detached;

		Open(CrossClusterTransaction transaction, Observed observed) {
			this.transaction = transaction;
			this.observed = observed;
		}

		CrossClusterTransaction transaction() {
			return this.transaction;
		}

		/** A delivery joins: from now on its records are this transaction's. */
		void added(List<ConsumerRecord<?, ?>> delivery) {
			ListenerInvocation.firstOffsets(delivery).forEach(this.first::putIfAbsent);
			ListenerInvocation.nextOffsets(delivery)
				.forEach((partition, offset) -> this.next.merge(partition, offset, (a, b) -> (a.offset() >= b.offset()) ? a : b));
			this.records += delivery.size();
			this.deliveries++;
		}

		/** The observation stops being current on the consumer's thread (after the first delivery). */
		void detach() {
			if (!this.detached) {
				this.detached = true;
				this.observed.detach();
			}
		}

		/** Ends the observation of a transaction that never reached the pipeline. */
		void end(Throwable cause) {
			try {
				this.observed.ended(Outcome.ABORTED, cause);
			}
			finally {
				this.observed.close();
			}
		}

	}

}
