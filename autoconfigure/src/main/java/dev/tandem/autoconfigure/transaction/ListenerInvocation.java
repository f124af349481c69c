package dev.tandem.autoconfigure.transaction;

import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The records a Tandem listener container is delivering on this thread, with their consumer:
 * the offsets that the listener's cross-cluster transaction commits on the consumer's cluster.
 * Bound by the container's interceptor around each delivery ({@link #bind}, {@link #unbind}).
 * Confined to its listener thread.
 *
 * @since 0.1.0
 */
public final class ListenerInvocation {

	private static final ThreadLocal<@Nullable ListenerInvocation> CURRENT = new ThreadLocal<>();

	private final String cluster;

	private final Consumer<?, ?> consumer;

	private final List<ConsumerRecord<?, ?>> records;

	private final boolean batch;

	private boolean claimed;

	ListenerInvocation(String cluster, Consumer<?, ?> consumer, List<ConsumerRecord<?, ?>> records, boolean batch) {
		this.cluster = cluster;
		this.consumer = consumer;
		this.records = Collections.unmodifiableList(records);
		this.batch = batch;
	}

	/**
	 * Binds a delivery to the calling thread.
	 * @param cluster the cluster the consumer reads from
	 * @param consumer the consumer
	 * @param records the records delivered, in delivery order; kept as given, not copied: the caller
	 *     must not change the list while it is bound
	 * @param batch whether the listener receives them as one batch
	 */
	public static void bind(String cluster, Consumer<?, ?> consumer, List<ConsumerRecord<?, ?>> records, boolean batch) {
		CURRENT.set(new ListenerInvocation(cluster, consumer, records, batch));
	}

	/**
	 * Unbinds the calling thread's delivery.
	 */
	public static void unbind() {
		CURRENT.remove();
	}

	/**
	 * Returns the delivery on this thread, if any.
	 * @return the invocation or null
	 */
	public static @Nullable ListenerInvocation current() {
		return CURRENT.get();
	}

	String cluster() {
		return this.cluster;
	}

	Consumer<?, ?> consumer() {
		return this.consumer;
	}

	List<ConsumerRecord<?, ?>> records() {
		return this.records;
	}

	boolean batch() {
		return this.batch;
	}

	/**
	 * Claims the delivery for the transaction that commits its offsets: only the outermost new
	 * transaction of a listener call does.
	 * @return whether this call claimed it (false if an enclosing call already had)
	 */
	boolean claim() {
		if (this.claimed) {
			return false;
		}
		this.claimed = true;
		return true;
	}

	/**
	 * The offset after the highest of each partition's records, in any order; one map entry per
	 * run of records of the same partition (a delivery lists each partition's records together).
	 */
	static Map<TopicPartition, OffsetAndMetadata> nextOffsets(List<? extends ConsumerRecord<?, ?>> records) {
		Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
		String topic = null;
		int partition = -1;
		long next = -1;
		for (ConsumerRecord<?, ?> record : records) {
			if (record.partition() != partition || !record.topic().equals(topic)) {
				putHigher(offsets, topic, partition, next);
				topic = record.topic();
				partition = record.partition();
				next = record.offset() + 1;
			}
			else {
				next = Math.max(next, record.offset() + 1);
			}
		}
		putHigher(offsets, topic, partition, next);
		return offsets;
	}

	/**
	 * The lowest offset of each partition's records, in the order partitions first appear.
	 */
	static Map<TopicPartition, Long> firstOffsets(List<? extends ConsumerRecord<?, ?>> records) {
		Map<TopicPartition, Long> first = new LinkedHashMap<>();
		// one map entry per run of records of the same partition, as in nextOffsets
		String topic = null;
		int partition = -1;
		long lowest = -1;
		for (ConsumerRecord<?, ?> record : records) {
			if (record.partition() != partition || !record.topic().equals(topic)) {
				putLower(first, topic, partition, lowest);
				topic = record.topic();
				partition = record.partition();
				lowest = record.offset();
			}
			else {
				lowest = Math.min(lowest, record.offset());
			}
		}
		putLower(first, topic, partition, lowest);
		return first;
	}

	private static void putLower(Map<TopicPartition, Long> offsets, @Nullable String topic, int partition, long offset) {
		if (topic != null) {
			offsets.merge(new TopicPartition(topic, partition), offset, Math::min);
		}
	}

	/**
	 * Seeks each of the consumer's assigned partitions among {@code offsets} to its offset, so
	 * that the next poll delivers from there; partitions no longer assigned are left alone.
	 * @param consumer the consumer, on its own thread
	 */
	static void seek(Consumer<?, ?> consumer, Map<TopicPartition, Long> offsets) {
		Set<TopicPartition> assigned = consumer.assignment();
		offsets.forEach((partition, offset) -> {
			if (assigned.contains(partition)) {
				consumer.seek(partition, offset);
			}
		});
	}

	private static void putHigher(Map<TopicPartition, OffsetAndMetadata> offsets, @Nullable String topic, int partition,
			long next) {
		if (topic != null) {
			offsets.merge(new TopicPartition(topic, partition), new OffsetAndMetadata(next),
					(a, b) -> (a.offset() >= b.offset()) ? a : b);
		}
	}

}
