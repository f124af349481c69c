package dev.tandem.autoconfigure.transaction;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.ApplicationListener;
import org.springframework.kafka.event.ConsumerStoppingEvent;
import org.springframework.kafka.event.KafkaEvent;
import org.springframework.kafka.event.ListenerContainerIdleEvent;

import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.TransactionAbortedException;
import dev.tandem.transaction.TransactionPipeline;
import dev.tandem.transaction.TransactionSizing;

/**
 * Pipelined transactions of {@code @CrossClusterTransactional} batch listeners
 * ({@code tandem.listener.pipeline-depth}): a delivery's transaction is left open when the
 * listener returns, and the consumer's next deliveries join it, until it is due by
 * {@link TransactionSizing} ({@code tandem.listener.max-records}, {@code growth},
 * {@code max-interval}: at {@code max-records} once the previous transaction has finished
 * preparing, else up to {@code growth} times as many, or at {@code max-interval} of age, also when
 * no record comes); then its offsets are added and it commits on the consumer's
 * {@link TransactionPipeline} while the container already delivers the next records, in order.
 * <p>
 * What keeps it exactly once:
 * <ul>
 * <li>A commit that fails is noticed at the consumer's next delivery, at its next empty poll or
 * at its next idle event: the open transaction is aborted, and every partition of the failed
 * transaction, of the transactions after it (aborted undecided), of the open one and of the
 * delivery at hand is sought back to its first offset not committed, and those records are
 * delivered again; nothing is ever committed past a record that did not commit. A heuristic
 * outcome is reported and not delivered again (that would duplicate the clusters that committed).</li>
 * <li>A listener that fails on a later delivery of an open transaction aborts it with every
 * delivery it holds; they are sought back and delivered again, each in a transaction of its own
 * until the consumer is past the failed delivery, so that the failing one is narrowed and settled
 * ({@code tandem.listener.failed-record}) as without pipelining. A listener that fails on the
 * first delivery of a transaction first waits for the transactions before it; then its delivery is
 * narrowed synchronously as without pipelining.</li>
 * <li>The consumer is wrapped ({@link #hook(Consumer)}, a {@code ConsumerPostProcessor} of
 * Tandem's consumer factories): before partitions are revoked the open transaction is closed and
 * every transaction in flight is waited for (so their offsets are committed under the generation
 * that owns the partitions); when partitions are lost the open transaction is aborted, and a
 * failure found is rewound at once; an empty poll waits at most until the open transaction is
 * due, then closes it.</li>
 * <li>When the container stops, the open transaction is committed and the pipeline drained
 * ({@link ConsumerStoppingEvent}, before the consumer leaves its group); at shutdown without a
 * stopping event it is aborted.</li>
 * </ul>
 * <p>
 * Thread-safety: one pipeline per consumer, used only on that consumer's thread (deliveries,
 * its polls and rebalance callbacks, and the idle and stopping events, which Spring Kafka
 * publishes on the consumer thread); {@link #destroy()} runs after the containers stopped.
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

	private final TransactionSizing sizing;

	private final Map<Consumer<?, ?>, ListenerPipeline> pipelines = Collections.synchronizedMap(new IdentityHashMap<>());

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
	 * Creates the pipelines with the default {@link TransactionSizing}.
	 * @param manager the manager
	 * @param depth transactions in flight per consumer, 1 (no pipelining) or more
	 * @param backOff pause before records are delivered again after a second failure in a row
	 * @param maxPollInterval the {@code max.poll.interval.ms} of a cluster's listener consumers,
	 *     within which each delivery is kept (see {@link #budget()})
	 */
	public ListenerPipelines(CrossClusterTransactionManager manager, int depth, Duration backOff,
			Function<String, Duration> maxPollInterval) {
		this(manager, depth, backOff, maxPollInterval, TransactionSizing.DEFAULT);
	}

	/**
	 * Creates the pipelines.
	 * @param manager the manager
	 * @param depth transactions in flight per consumer, 1 (no pipelining) or more
	 * @param backOff pause before records are delivered again after a second failure in a row
	 * @param maxPollInterval the {@code max.poll.interval.ms} of a cluster's listener consumers,
	 *     within which each delivery is kept (see {@link #budget()})
	 * @param sizing when a transaction spanning deliveries closes; its {@code maxInterval} must
	 *     be below the manager's transaction timeout
	 * @throws IllegalArgumentException if {@code sizing.maxInterval()} is not below the manager's
	 *     transaction timeout
	 */
	public ListenerPipelines(CrossClusterTransactionManager manager, int depth, Duration backOff,
			Function<String, Duration> maxPollInterval, TransactionSizing sizing) {
		if (sizing.maxInterval().compareTo(manager.transactionTimeout()) >= 0) {
			throw new IllegalArgumentException("maxInterval " + sizing.maxInterval()
					+ " is not below the transaction timeout " + manager.transactionTimeout());
		}
		this.manager = manager;
		this.depth = depth;
		this.backOff = backOff;
		this.budget = new DeliveryBudget(maxPollInterval);
		this.sizing = sizing;
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

	/**
	 * Returns when a transaction spanning deliveries closes.
	 * @return the sizing
	 */
	public TransactionSizing sizing() {
		return this.sizing;
	}

	boolean enabled() {
		return this.depth > 1;
	}

	ListenerPipeline of(Consumer<?, ?> consumer) {
		return this.pipelines.computeIfAbsent(consumer,
				(c) -> new ListenerPipeline(c, this.manager.pipeline(this.depth), this.backOff, this.sizing));
	}

	/**
	 * Wraps a listener container's consumer so that its pipeline sees the container's polls and
	 * rebalances on the consumer's thread: a poll waits at most until the open transaction is due,
	 * an empty poll closes a due transaction (or rewinds after a failed commit), and the rebalance
	 * listener the container subscribes with is preceded by closing (partitions revoked) or
	 * aborting (partitions lost) the open transaction and draining the pipeline. A consumer without
	 * a pipeline behaves as the one wrapped.
	 * @param <K> key type
	 * @param <V> value type
	 * @param consumer the consumer a factory created
	 * @return the wrapped consumer; equal only to itself
	 */
	@SuppressWarnings("unchecked")
	public <K, V> Consumer<K, V> hook(Consumer<K, V> consumer) {
		return (Consumer<K, V>) Proxy.newProxyInstance(Consumer.class.getClassLoader(), new Class<?>[] { Consumer.class },
				new HookedConsumer(consumer));
	}

	@Override
	public void onApplicationEvent(KafkaEvent event) {
		if (event instanceof ListenerContainerIdleEvent idle && idle.getConsumer() != null) {
			ListenerPipeline pipeline = this.pipelines.get(idle.getConsumer());
			if (pipeline != null && !pipeline.rewindIfFailed(List.of())) {
				pipeline.closeIfDue();
			}
		}
		else if (event instanceof ConsumerStoppingEvent stopping && stopping.getConsumer() != null) {
			ListenerPipeline pipeline = this.pipelines.remove(stopping.getConsumer());
			if (pipeline != null) {
				// On the consumer thread, still in the group: what the listener processed commits.
				// Waits for the commits under way, not for an in-doubt outcome (TransactionPipeline.close);
				// a stopping consumer's position is not kept, so there is nothing to rewind.
				pipeline.closeOpen();
				pipeline.close();
			}
		}
	}

	/** Aborts what is still open, drains and closes every pipeline (the manager closes after). */
	@Override
	public void destroy() {
		List<ListenerPipeline> open;
		synchronized (this.pipelines) {
			open = new ArrayList<>(this.pipelines.values());
			this.pipelines.clear();
		}
		for (ListenerPipeline pipeline : open) {
			// not the consumer's thread, which has ended: its records go to the next consumer
			pipeline.abortOpen(new TransactionAbortedException("Listener pipelines closed", null));
			pipeline.close();
		}
	}

	/** The consumer a factory created, with its polls and rebalances seen by its pipeline. */
	private final class HookedConsumer implements InvocationHandler {

		private final Consumer<?, ?> consumer;

		HookedConsumer(Consumer<?, ?> consumer) {
			this.consumer = consumer;
		}

		@Override
		public @Nullable Object invoke(Object proxy, Method method, Object @Nullable [] args) throws Throwable {
			String name = method.getName();
			int count = (args != null) ? args.length : 0;
			if (name.equals("equals") && count == 1) {
				return proxy == args[0];
			}
			if (name.equals("hashCode") && count == 0) {
				return System.identityHashCode(proxy);
			}
			Object[] arguments = args;
			if (name.equals("poll") && count == 1 && args[0] instanceof Duration timeout) {
				return poll((Consumer<?, ?>) proxy, timeout);
			}
			if (name.equals("subscribe") && count == 2 && args[1] instanceof ConsumerRebalanceListener listener) {
				arguments = new Object[] { args[0], new Rebalance((Consumer<?, ?>) proxy, listener) };
			}
			try {
				return method.invoke(this.consumer, arguments);
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
		}

		private ConsumerRecords<?, ?> poll(Consumer<?, ?> proxy, Duration timeout) {
			ListenerPipeline pipeline = ListenerPipelines.this.pipelines.get(proxy);
			Duration wait = (pipeline != null) ? pipeline.pollTimeout(timeout) : timeout;
			ConsumerRecords<?, ?> records = this.consumer.poll(wait);
			if (records.isEmpty()) {
				// the rebalance in this poll may have stopped it: look again
				pipeline = ListenerPipelines.this.pipelines.get(proxy);
				if (pipeline != null && !pipeline.rewindIfFailed(List.of())) {
					pipeline.closeIfDue();
				}
			}
			return records;
		}

	}

	/** Closes or aborts the open transaction before the container's rebalance listener runs. */
	private final class Rebalance implements ConsumerRebalanceListener {

		private final Consumer<?, ?> consumer;

		private final ConsumerRebalanceListener delegate;

		Rebalance(Consumer<?, ?> consumer, ConsumerRebalanceListener delegate) {
			this.consumer = consumer;
			this.delegate = delegate;
		}

		@Override
		public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
			ListenerPipeline pipeline = ListenerPipelines.this.pipelines.get(this.consumer);
			if (pipeline != null && !partitions.isEmpty()) {
				pipeline.closeOpen();
				pipeline.drainAndRewind(List.of());
			}
			this.delegate.onPartitionsRevoked(partitions);
		}

		@Override
		public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
			this.delegate.onPartitionsAssigned(partitions);
		}

		@Override
		public void onPartitionsLost(Collection<TopicPartition> partitions) {
			ListenerPipeline pipeline = ListenerPipelines.this.pipelines.get(this.consumer);
			if (pipeline != null) {
				// another member may own them now: nothing open may commit for them
				pipeline.abortOpen(new TransactionAbortedException("Partitions " + partitions + " were lost", null));
				pipeline.drainAndRewind(List.of());
			}
			this.delegate.onPartitionsLost(partitions);
		}

	}

}
