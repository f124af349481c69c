package dev.tandem.autoconfigure.transaction;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The records a Tandem listener container is delivering on this thread, with their consumer:
 * the offsets that the listener's cross-cluster transaction commits on the consumer's cluster.
 * Bound by the container's interceptor around each delivery.
 *
 * @since 0.1.0
 */
public final class ListenerInvocation {

	private static final ThreadLocal<@Nullable ListenerInvocation> CURRENT = new ThreadLocal<>();

	private final String cluster;

	private final Consumer<?, ?> consumer;

	private final List<ConsumerRecord<?, ?>> records;

	private boolean offsetsSent;

	ListenerInvocation(String cluster, Consumer<?, ?> consumer, List<ConsumerRecord<?, ?>> records) {
		this.cluster = cluster;
		this.consumer = consumer;
		this.records = records;
	}

	static void bind(String cluster, Consumer<?, ?> consumer, List<ConsumerRecord<?, ?>> records) {
		CURRENT.set(new ListenerInvocation(cluster, consumer, records));
	}

	static void unbind() {
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

	boolean offsetsSent() {
		return this.offsetsSent;
	}

	void markOffsetsSent() {
		this.offsetsSent = true;
	}

	Map<TopicPartition, OffsetAndMetadata> nextOffsets() {
		Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
		for (ConsumerRecord<?, ?> record : this.records) {
			TopicPartition partition = new TopicPartition(record.topic(), record.partition());
			OffsetAndMetadata next = new OffsetAndMetadata(record.offset() + 1);
			offsets.merge(partition, next, (a, b) -> (a.offset() >= b.offset()) ? a : b);
		}
		return offsets;
	}

}
