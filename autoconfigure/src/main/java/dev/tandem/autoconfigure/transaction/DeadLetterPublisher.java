package dev.tandem.autoconfigure.transaction;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.function.Function;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.jspecify.annotations.Nullable;

/**
 * Publishes a failed listener record to its dead-letter topic inside the cross-cluster
 * transaction bound to the calling thread: {@code <topic><suffix>} on the configured cluster
 * (the listener's own by default), with the record's key, value and headers, and Spring Kafka's
 * {@code kafka_dlt-*} headers (original topic, partition, offset, timestamp, consumer group,
 * exception class, message and stack trace) plus {@value #ORIGINAL_CLUSTER_HEADER}. The key and
 * value are serialized by the dead-letter cluster's {@code <c>TandemTemplate}. Thread-safe.
 *
 * @since 0.1.0
 */
public class DeadLetterPublisher {

	/** Header naming the cluster the failed record was consumed from. */
	public static final String ORIGINAL_CLUSTER_HEADER = "tandem_dlt-original-cluster";

	private final FailedRecordPolicy policy;

	private final Function<String, ClusterTransactionalTemplate<Object, Object>> templates;

	/**
	 * Creates a publisher.
	 * @param policy names the dead-letter cluster and topic suffix
	 * @param templates the transactional template of a cluster, by cluster name
	 */
	public DeadLetterPublisher(FailedRecordPolicy policy,
			Function<String, ClusterTransactionalTemplate<Object, Object>> templates) {
		this.policy = Objects.requireNonNull(policy, "policy");
		this.templates = Objects.requireNonNull(templates, "templates");
	}

	/**
	 * Returns the cluster a record consumed from {@code sourceCluster} is dead-lettered to.
	 * @param sourceCluster the listener's cluster
	 * @return the dead-letter cluster
	 */
	public String cluster(String sourceCluster) {
		return this.policy.deadLetterClusterOf(sourceCluster);
	}

	/**
	 * Returns the dead-letter topic of a topic.
	 * @param topic the record's topic
	 * @return the topic name with the configured suffix
	 */
	public String topic(String topic) {
		return this.policy.deadLetterTopicOf(topic);
	}

	/**
	 * Sends the record to its dead-letter topic in the thread's cross-cluster transaction.
	 * @param sourceCluster the cluster the record was consumed from
	 * @param groupId the consumer group, or null
	 * @param record the failed record
	 * @param failure why it failed
	 * @throws IllegalStateException if no cross-cluster transaction is bound to the thread
	 */
	public void publish(String sourceCluster, @Nullable String groupId, ConsumerRecord<?, ?> record, Throwable failure) {
		Headers headers = new RecordHeaders(record.headers().toArray());
		headers.add("kafka_dlt-original-topic", utf8(record.topic()));
		headers.add("kafka_dlt-original-partition", ByteBuffer.allocate(Integer.BYTES).putInt(record.partition()).array());
		headers.add("kafka_dlt-original-offset", ByteBuffer.allocate(Long.BYTES).putLong(record.offset()).array());
		headers.add("kafka_dlt-original-timestamp", ByteBuffer.allocate(Long.BYTES).putLong(record.timestamp()).array());
		headers.add("kafka_dlt-original-timestamp-type", utf8(record.timestampType().toString()));
		if (groupId != null) {
			headers.add("kafka_dlt-original-consumer-group", utf8(groupId));
		}
		Throwable cause = rootListenerFailure(failure);
		headers.add("kafka_dlt-exception-fqcn", utf8(cause.getClass().getName()));
		if (cause.getCause() != null) {
			headers.add("kafka_dlt-exception-cause-fqcn", utf8(cause.getCause().getClass().getName()));
		}
		headers.add("kafka_dlt-exception-message", utf8(String.valueOf(cause.getMessage())));
		StringWriter trace = new StringWriter();
		cause.printStackTrace(new PrintWriter(trace));
		headers.add("kafka_dlt-exception-stacktrace", utf8(trace.toString()));
		headers.add(ORIGINAL_CLUSTER_HEADER, utf8(sourceCluster));
		@SuppressWarnings("unchecked")
		ConsumerRecord<Object, Object> failed = (ConsumerRecord<Object, Object>) record;
		ProducerRecord<Object, Object> deadLetter = new ProducerRecord<>(topic(record.topic()), null, failed.key(),
				failed.value(), headers);
		this.templates.apply(cluster(sourceCluster)).send(deadLetter);
	}

	/** Spring's listener adapters wrap what the listener threw. */
	private static Throwable rootListenerFailure(Throwable failure) {
		Throwable current = failure;
		while (current.getCause() != null
				&& current.getClass().getName().startsWith("org.springframework.kafka.listener.")) {
			current = current.getCause();
		}
		return current;
	}

	private static byte[] utf8(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
