package dev.tandem.autoconfigure.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.ApplicationListener;
import org.springframework.kafka.event.ConsumerStoppingEvent;
import org.springframework.kafka.event.KafkaEvent;
import org.springframework.kafka.event.ListenerContainerIdleEvent;

import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.PipelinedOutcomes;
import dev.tandem.transaction.TransactionPipeline;

/**
 * Pipelined transactions of {@code @CrossClusterTransactional} batch listeners
 * ({@code tandem.listener.pipeline-depth}): a delivery's transaction commits on its consumer's
 * {@link TransactionPipeline} while the container already polls and delivers the next records,
 * in order (see {@link TransactionPipeline}). A commit that fails is noticed at the consumer's
 * next delivery, or at its next idle event when no record comes: then every partition of the
 * failed transaction, of the transactions after it (aborted undecided) and of the delivery at
 * hand is sought back to its first offset not committed, and those records are delivered again;
 * nothing is ever committed past a record that did not commit. A heuristic outcome is reported
 * and not delivered again (that would duplicate the clusters that committed). A failing
 * listener first waits for the transactions before it, then its delivery is narrowed
 * synchronously as without pipelining.
 * <p>
 * Thread-safety: one pipeline per consumer, used only on that consumer's thread (deliveries,
 * and the idle and stopping events, which Spring Kafka publishes on the consumer thread).
 *
 * @since 0.1.0
 */
public final class ListenerPipelines implements ApplicationListener<KafkaEvent>, DisposableBean {

	private static final Logger logger = LoggerFactory.getLogger(ListenerPipelines.class);

	/**
	 * Default {@code tandem.listener.pipeline-depth}: one delivery's transaction commits while the
	 * next one runs, as {@link dev.tandem.transaction.CrossClusterProcessor#DEFAULT_DEPTH}.
	 */
	public static final int DEFAULT_DEPTH = dev.tandem.transaction.CrossClusterProcessor.DEFAULT_DEPTH;

	private final CrossClusterTransactionManager manager;

	private final int depth;

	private final Duration backOff;

	private final DeliveryBudget budget;

	private final Map<Consumer<?, ?>, ConsumerPipeline> pipelines = Collections.synchronizedMap(new IdentityHashMap<>());

	/**
	 * Creates the pipelines.
	 * @param manager the manager
	 * @param depth transactions in flight per consumer, 1 (no pipelining) or more
	 * @param backOff pause before records are delivered again after a second failure in a row
	 */
	public ListenerPipelines(CrossClusterTransactionManager manager, int depth, Duration backOff) {
		this(manager, depth, backOff, (cluster) -> DeliveryBudget.KAFKA_DEFAULT_MAX_POLL_INTERVAL);
	}

	/**
	 * Creates the pipelines.
	 * @param manager the manager
	 * @param depth transactions in flight per consumer, 1 (no pipelining) or more
	 * @param backOff pause before records are delivered again after a second failure in a row
	 * @param maxPollInterval the {@code max.poll.interval.ms} of a cluster's listener consumers,
	 *     within which each delivery is kept (see {@link #budget()})
	 */
	public ListenerPipelines(CrossClusterTransactionManager manager, int depth, Duration backOff,
			Function<String, Duration> maxPollInterval) {
		this.manager = manager;
		this.depth = depth;
		this.backOff = backOff;
		this.budget = new DeliveryBudget(maxPollInterval);
	}

	/**
	 * Keeps batch listener deliveries within {@code max.poll.interval.ms}, pipelined or not.
	 */
	DeliveryBudget budget() {
		return this.budget;
	}

	/**
	 * Returns the depth.
	 * @return transactions in flight per consumer
	 */
	public int depth() {
		return this.depth;
	}

	boolean enabled() {
		return this.depth > 1;
	}

	ConsumerPipeline of(Consumer<?, ?> consumer) {
		return this.pipelines.computeIfAbsent(consumer,
				(c) -> new ConsumerPipeline(this.manager.pipeline(this.depth), this.backOff));
	}

	@Override
	public void onApplicationEvent(KafkaEvent event) {
		if (event instanceof ListenerContainerIdleEvent idle && idle.getConsumer() != null) {
			ConsumerPipeline pipeline = this.pipelines.get(idle.getConsumer());
			if (pipeline != null) {
				pipeline.rewindIfFailed(idle.getConsumer(), List.of());
			}
		}
		else if (event instanceof ConsumerStoppingEvent stopping && stopping.getConsumer() != null) {
			ConsumerPipeline pipeline = this.pipelines.remove(stopping.getConsumer());
			if (pipeline != null) {
				// waits for the commits under way, not for an in-doubt outcome (TransactionPipeline.close);
				// a stopping consumer's position is not kept, so there is nothing to rewind
				pipeline.close();
			}
		}
	}

	/** Drains and closes every pipeline (the manager closes after). */
	@Override
	public void destroy() {
		List<ConsumerPipeline> open;
		synchronized (this.pipelines) {
			open = new ArrayList<>(this.pipelines.values());
			this.pipelines.clear();
		}
		open.forEach(ConsumerPipeline::close);
	}

	/**
	 * One consumer's pipeline and its transactions in flight, in delivery order, kept in the
	 * ledger shared with {@link dev.tandem.transaction.CrossClusterProcessor} (one rewind policy:
	 * a heuristic outcome is not delivered again, see {@link PipelinedOutcomes}).
	 */
	static final class ConsumerPipeline {

		private final TransactionPipeline pipeline;

		private final Duration backOff;

		/** Failed rewinds since the last commit: set on the consumer's thread, reset on the committing one. */
		private final AtomicInteger failuresInARow = new AtomicInteger();

		/** Attachment: the delivery's record count. */
		private final PipelinedOutcomes<Integer> outcomes = new PipelinedOutcomes<>((records, failure) -> {
			if (failure == null) {
				this.failuresInARow.set(0);
			}
		});

		ConsumerPipeline(TransactionPipeline pipeline, Duration backOff) {
			this.pipeline = pipeline;
			this.backOff = backOff;
		}

		TransactionPipeline pipeline() {
			return this.pipeline;
		}

		/** A delivery's transaction is committing. */
		void submitted(List<ConsumerRecord<?, ?>> delivery, CompletableFuture<Void> outcome) {
			this.outcomes.submitted(delivery.size(), ListenerInvocation.firstOffsets(delivery), outcome);
		}

		/**
		 * If a transaction in flight failed, rewinds.
		 * @return true if the consumer was rewound: the delivery at hand must not be processed
		 */
		boolean rewindIfFailed(Consumer<?, ?> consumer, List<ConsumerRecord<?, ?>> delivery) {
			if (this.outcomes.failure() == null) {
				return false;
			}
			drain();
			rewind(consumer, delivery);
			return true;
		}

		/**
		 * Waits for every transaction in flight; rewinds if one failed.
		 * @return true if the consumer was rewound
		 */
		boolean drainAndRewind(Consumer<?, ?> consumer, List<ConsumerRecord<?, ?>> delivery) {
			drain();
			if (this.outcomes.failure() == null) {
				this.failuresInARow.set(0);
				return false;
			}
			rewind(consumer, delivery);
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
		private void rewind(Consumer<?, ?> consumer, List<ConsumerRecord<?, ?>> delivery) {
			PipelinedOutcomes.Rewind rewind = this.outcomes.rewind(ListenerInvocation.firstOffsets(delivery));
			ListenerInvocation.seek(consumer, rewind.offsets());
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

	}


}
