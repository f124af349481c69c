package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import dev.tandem.text.DurationText;

/**
 * Builds a {@link CrossClusterProcessor} ({@link CrossClusterProcessor#builder}). Not thread-safe.
 * @param <K> key type
 * @param <V> value type
 * @since 0.1.0
 */
public final class CrossClusterProcessorBuilder<K, V> {

	final CrossClusterTransactionManager manager;

	final Consumer<K, V> consumer;

	@Nullable Collection<String> topics;

	@Nullable Pattern pattern;

	@Nullable Collection<TopicPartition> assignment;

	@Nullable ConsumerRebalanceListener rebalanceListener;

	int depth = CrossClusterProcessor.DEFAULT_DEPTH;

	int maxRecords = CrossClusterProcessor.DEFAULT_MAX_RECORDS;

	int growth = CrossClusterProcessor.DEFAULT_GROWTH;

	Duration maxInterval = CrossClusterProcessor.DEFAULT_MAX_INTERVAL;

	boolean closeWhenIdle;

	CrossClusterProcessor.@Nullable BatchHandler<K, V> handler;

	@Nullable Consumer<?, ?> offsetsConsumer;

	UnaryOperator<Map<TopicPartition, OffsetAndMetadata>> offsetsKeys = UnaryOperator.identity();

	CrossClusterProcessor.CommitHook beforeCommit = (transaction, next) -> {
	};

	final List<CrossClusterProcessor.ProcessorListener> listeners = new ArrayList<>();

	CrossClusterProcessorBuilder(CrossClusterTransactionManager manager, Consumer<K, V> consumer) {
		this.manager = Objects.requireNonNull(manager, "manager");
		this.consumer = Objects.requireNonNull(consumer, "consumer");
	}

	/**
	 * Subscribes the consumer to topics (with the processor's rebalance listener).
	 * @param topics topic names
	 * @return this builder
	 */
	public CrossClusterProcessorBuilder<K, V> subscribe(Collection<String> topics) {
		this.topics = List.copyOf(topics);
		return this;
	}

	/**
	 * Subscribes the consumer to the topics a pattern matches, now and later.
	 * @param pattern the topic pattern
	 * @return this builder
	 */
	public CrossClusterProcessorBuilder<K, V> subscribe(Pattern pattern) {
		this.pattern = pattern;
		return this;
	}

	/**
	 * Assigns partitions to the consumer (no group rebalancing).
	 * @param partitions the partitions
	 * @return this builder
	 */
	public CrossClusterProcessorBuilder<K, V> assign(Collection<TopicPartition> partitions) {
		this.assignment = List.copyOf(partitions);
		return this;
	}

	/**
	 * Adds a rebalance listener, called after the processor's own (which commits and drains
	 * before partitions are revoked).
	 * @param listener the listener
	 * @return this builder
	 */
	public CrossClusterProcessorBuilder<K, V> rebalanceListener(ConsumerRebalanceListener listener) {
		this.rebalanceListener = listener;
		return this;
	}

	/**
	 * Sets how many transactions may be open or committing at once.
	 * @param depth 1 (no overlap) to the manager's slot count, default {@value CrossClusterProcessor#DEFAULT_DEPTH}
	 * @return this builder
	 */
	public CrossClusterProcessorBuilder<K, V> depth(int depth) {
		if (depth < 1) {
			throw new IllegalArgumentException("depth must be 1 or more");
		}
		this.depth = depth;
		return this;
	}

	/**
	 * Sets how many records close a transaction (it may exceed it by the rest of one poll, and,
	 * while the previous transaction still prepares, up to {@link #growth(int)} times as many).
	 * @param maxRecords 1 or more, default {@value CrossClusterProcessor#DEFAULT_MAX_RECORDS}
	 * @return this builder
	 */
	public CrossClusterProcessorBuilder<K, V> maxRecords(int maxRecords) {
		if (maxRecords < 1) {
			throw new IllegalArgumentException("maxRecords must be 1 or more");
		}
		this.maxRecords = maxRecords;
		return this;
	}

	/**
	 * Sets how far a transaction grows past {@code maxRecords} while the previous transaction is
	 * still preparing (its offset commit, one round trip to the consumer's cluster, is under way).
	 * Closing it then would only queue it behind that commit, so it keeps taking records, up to
	 * {@code growth × maxRecords} (plus the rest of one poll) or {@code maxInterval}: transactions
	 * grow with the round trip to the source and the one serial round trip per transaction is paid
	 * for more records (issue 25; measured with and without it in {@code docs/benchmarks.md},
	 * "Across regions: after the pipeline change"). Memory held per transaction (by the handler or
	 * listeners) grows the same way.
	 * @param growth 1 (a transaction closes at {@code maxRecords}) to 1,000, default
	 *     {@value CrossClusterProcessor#DEFAULT_GROWTH}
	 * @return this builder
	 * @throws IllegalArgumentException if out of range
	 */
	public CrossClusterProcessorBuilder<K, V> growth(int growth) {
		if (growth < 1 || growth > 1000) {
			throw new IllegalArgumentException("growth must be 1 to 1000, not " + growth);
		}
		this.growth = growth;
		return this;
	}

	/**
	 * Sets the age that closes a transaction: its records wait at most this long (plus one
	 * commit) before they become visible.
	 * @param maxInterval positive, at most a day, and below the manager's
	 *     {@link CrossClusterTransactionManager#transactionTimeout() transaction timeout}
	 *     (checked by {@link #build()}); default 100 ms
	 * @return this builder
	 * @throws IllegalArgumentException if it is not positive or longer than a day
	 * @throws NullPointerException if it is null
	 */
	public CrossClusterProcessorBuilder<K, V> maxInterval(Duration maxInterval) {
		Objects.requireNonNull(maxInterval, "maxInterval");
		if (maxInterval.isNegative() || maxInterval.isZero() || maxInterval.compareTo(Duration.ofDays(1)) > 0) {
			throw new IllegalArgumentException(
					"maxInterval must be positive and at most a day, not " + DurationText.of(maxInterval));
		}
		this.maxInterval = maxInterval;
		return this;
	}

	/**
	 * Sets whether a transaction also closes as soon as it holds records and no earlier
	 * transaction of this processor is still preparing or committing (group commit: while
	 * one transaction commits the next one gathers what arrives, so transactions grow with
	 * the load up to {@code maxRecords} and a quiet source's records do not wait for
	 * {@code maxInterval}). Off: transactions close only at {@code maxRecords} or
	 * {@code maxInterval}, fewer and larger under a light load. Off by default: on the
	 * two-core machine of {@code docs/benchmarks.md} the extra transactions cost more CPU than
	 * the shorter wait saved.
	 * @param closeWhenIdle default false
	 * @return this builder
	 */
	public CrossClusterProcessorBuilder<K, V> closeWhenIdle(boolean closeWhenIdle) {
		this.closeWhenIdle = closeWhenIdle;
		return this;
	}

	/**
	 * Sets the handler (required).
	 * @param handler the handler
	 * @return this builder
	 */
	public CrossClusterProcessorBuilder<K, V> handler(CrossClusterProcessor.BatchHandler<K, V> handler) {
		this.handler = handler;
		return this;
	}

	/**
	 * Keeps the consumed offsets in the group of another consumer, on that consumer's cluster,
	 * instead of in the polled consumer's group: each transaction commits {@code keys} applied to
	 * its next offsets, with the other consumer's group metadata, and enlists that consumer's
	 * cluster rather than the polled one's, which then sees only fetches (no marker, no offset
	 * commit, no round trip per transaction). The group's generation fences a member that lost
	 * its partitions (KIP-447), so the other consumer must own, in its group, the partitions the
	 * keys name; the caller assigns the polled consumer ({@link #assign}, possibly empty, then
	 * {@link Consumer#assign} from the other consumer's rebalance listener, on the processor's
	 * thread), calls {@link CrossClusterProcessor#drain()} when partitions are revoked and
	 * {@link CrossClusterProcessor#abandon} when they are lost, and seeks the polled consumer to
	 * the positions read from the other group ({@code read_committed}, which waits for pending
	 * transactional offsets). A mirror with one target keeps its source positions on the target
	 * this way, as MirrorMaker 2's exactly-once source connector does (KIP-618).
	 * @param groupConsumer a consumer created by or registered with the manager, member of the
	 *     group that keeps the offsets; used by the caller on the processor's thread only
	 * @param keys maps the polled partitions' next offsets to the entries committed in that
	 *     group (called on the processor's thread, once per transaction; must not return an
	 *     empty map for a non-empty one)
	 * @return this builder
	 * @since 0.2.0
	 */
	public CrossClusterProcessorBuilder<K, V> offsetsIn(Consumer<?, ?> groupConsumer,
			UnaryOperator<Map<TopicPartition, OffsetAndMetadata>> keys) {
		this.offsetsConsumer = Objects.requireNonNull(groupConsumer, "groupConsumer");
		this.offsetsKeys = Objects.requireNonNull(keys, "keys");
		return this;
	}

	/**
	 * Sets a hook run once per transaction before its offsets are added.
	 * @param hook the hook
	 * @return this builder
	 */
	public CrossClusterProcessorBuilder<K, V> beforeCommit(CrossClusterProcessor.CommitHook hook) {
		this.beforeCommit = Objects.requireNonNull(hook);
		return this;
	}

	/**
	 * Adds a listener of outcomes. May be called more than once: each outcome is told to every
	 * listener, in the order they were added (one that throws is logged and the next is still
	 * told).
	 * @param listener the listener
	 * @return this builder
	 */
	public CrossClusterProcessorBuilder<K, V> listener(CrossClusterProcessor.ProcessorListener listener) {
		this.listeners.add(Objects.requireNonNull(listener));
		return this;
	}

	/**
	 * Builds the processor and subscribes (or assigns) its consumer.
	 * @return the processor
	 * @throws IllegalArgumentException if nothing to consume is set, the depth exceeds the
	 *     manager's slots, or {@code maxInterval} is not below the manager's transaction timeout
	 * @throws NullPointerException if no handler is set
	 */
	public CrossClusterProcessor<K, V> build() {
		return new CrossClusterProcessor<>(this);
	}

}
