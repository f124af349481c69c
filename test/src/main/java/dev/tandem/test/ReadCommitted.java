package dev.tandem.test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads every record of a topic that a {@code read_committed} consumer can see, from the
 * beginning up to the last stable offset taken at the start of the read: the way to count what a
 * transactional writer really committed. Works against any cluster, embedded or not.
 * <p>
 * Thread-safe (each call uses its own consumer).
 *
 * @since 0.1.0
 */
public final class ReadCommitted {

	/** How long one read may take by default. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

	private ReadCommitted() {
	}

	/**
	 * Reads the committed records of a topic.
	 * @param bootstrapServers the cluster's bootstrap servers
	 * @param topic the topic
	 * @param timeout how long the read may take
	 * @return the records, partition by partition in offset order
	 * @throws EmbeddedKafkaClusterException if the last stable offset is not reached in time (an
	 *     open transaction holds it back)
	 */
	public static List<ConsumerRecord<byte[], byte[]>> records(String bootstrapServers, String topic, Duration timeout) {
		return records(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers), topic, timeout);
	}

	/**
	 * Reads the committed values of a topic of an embedded cluster (with the client security
	 * settings its listeners need) as UTF-8 strings, within {@link #DEFAULT_TIMEOUT}.
	 * @param cluster the cluster
	 * @param topic the topic
	 * @return the values ({@code null} values kept as null)
	 * @throws EmbeddedKafkaClusterException if the last stable offset is not reached in time
	 * @since 0.1.0
	 */
	public static List<String> values(EmbeddedKafkaCluster cluster, String topic) {
		Map<String, Object> config = new HashMap<>(cluster.clientSecurityProperties());
		config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
		return utf8(records(config, topic, DEFAULT_TIMEOUT));
	}

	private static List<ConsumerRecord<byte[], byte[]>> records(Map<String, Object> client, String topic,
			Duration timeout) {
		Map<String, Object> config = new HashMap<>(client);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		long deadline = System.nanoTime() + timeout.toNanos();
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			List<TopicPartition> partitions = partitions(consumer, topic, timeout);
			consumer.assign(partitions);
			consumer.seekToBeginning(partitions);
			Map<TopicPartition, Long> end = consumer.endOffsets(partitions, timeout);
			List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
			while (partitions.stream().anyMatch((tp) -> consumer.position(tp) < end.get(tp))) {
				if (System.nanoTime() > deadline) {
					throw new EmbeddedKafkaClusterException("Could not read " + topic + " to its last stable offsets "
							+ end + " within " + timeout);
				}
				consumer.poll(Duration.ofMillis(200)).forEach(records::add);
			}
			return records;
		}
	}

	/**
	 * Reads the committed values of a topic once no transaction is open on it: waits until every
	 * partition's last stable offset has reached its high watermark, then reads as
	 * {@link #values(String, String)} does. The read to use right after a transaction ended:
	 * {@code commitTransaction()} and {@code abortTransaction()} return once the transaction
	 * coordinator has logged the outcome, before its markers are written to the partitions, so a
	 * read at once may stop at a last stable offset the ended transaction still holds back and
	 * miss what it committed. Not for a topic where a transaction is meant to stay open.
	 * @param bootstrapServers the cluster's bootstrap servers
	 * @param topic the topic
	 * @return the values ({@code null} values kept as null)
	 * @throws EmbeddedKafkaClusterException if a transaction is still open on the topic after
	 *     {@link #DEFAULT_TIMEOUT}, naming the partitions' last stable offsets and high watermarks
	 * @since 0.1.0
	 */
	public static List<String> settledValues(String bootstrapServers, String topic) {
		return utf8(settledRecords(bootstrapServers, topic));
	}

	/**
	 * Reads the committed records of a topic once no transaction is open on it, as
	 * {@link #settledValues(String, String)} does, for a caller that needs the records'
	 * partitions or offsets: the read to use right after the transactions written to it ended.
	 * @param bootstrapServers the cluster's bootstrap servers
	 * @param topic the topic
	 * @return the records, partition by partition in offset order
	 * @throws EmbeddedKafkaClusterException if a transaction is still open on the topic after
	 *     {@link #DEFAULT_TIMEOUT}, naming the partitions' last stable offsets and high watermarks
	 * @since 0.1.0
	 */
	public static List<ConsumerRecord<byte[], byte[]>> settledRecords(String bootstrapServers, String topic) {
		Map<String, Object> client = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		awaitNoOpenTransaction(client, topic, DEFAULT_TIMEOUT);
		return records(client, topic, DEFAULT_TIMEOUT);
	}

	private static void awaitNoOpenTransaction(Map<String, Object> client, String topic, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		try (Admin admin = Admin.create(client)) {
			List<TopicPartition> partitions = admin.describeTopics(List.of(topic)).allTopicNames()
				.get(timeout.toMillis(), TimeUnit.MILLISECONDS).get(topic).partitions().stream()
				.map((info) -> new TopicPartition(topic, info.partition()))
				.toList();
			while (true) {
				Map<TopicPartition, Long> stable = ends(admin, partitions, IsolationLevel.READ_COMMITTED, timeout);
				Map<TopicPartition, Long> high = ends(admin, partitions, IsolationLevel.READ_UNCOMMITTED, timeout);
				if (stable.equals(high)) {
					return;
				}
				if (System.nanoTime() > deadline) {
					throw new EmbeddedKafkaClusterException("A transaction is still open on " + topic + " after "
							+ timeout + ": last stable offsets " + stable + ", high watermarks " + high);
				}
				Thread.sleep(20);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new EmbeddedKafkaClusterException("Interrupted while waiting for " + topic + " to settle", ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new EmbeddedKafkaClusterException("Could not read the offsets of " + topic, ex);
		}
	}

	private static Map<TopicPartition, Long> ends(Admin admin, List<TopicPartition> partitions,
			IsolationLevel isolation, Duration timeout)
			throws InterruptedException, ExecutionException, TimeoutException {
		Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
		partitions.forEach((partition) -> latest.put(partition, OffsetSpec.latest()));
		Map<TopicPartition, Long> ends = new HashMap<>();
		admin.listOffsets(latest, new ListOffsetsOptions(isolation)).all()
			.get(timeout.toMillis(), TimeUnit.MILLISECONDS)
			.forEach((partition, info) -> ends.put(partition, info.offset()));
		return ends;
	}

	/**
	 * Reads the committed values of a topic as UTF-8 strings, within {@link #DEFAULT_TIMEOUT}.
	 * @param bootstrapServers the cluster's bootstrap servers
	 * @param topic the topic
	 * @return the values ({@code null} values kept as null)
	 * @throws EmbeddedKafkaClusterException if the last stable offset is not reached in time
	 */
	public static List<String> values(String bootstrapServers, String topic) {
		return utf8(records(bootstrapServers, topic, DEFAULT_TIMEOUT));
	}

	/**
	 * Reads a consumer group's committed offsets on one topic once no open transaction holds any
	 * of them pending: the offsets a transactional commit really left. {@code commitTransaction()}
	 * returns before the commit markers reach {@code __consumer_offsets}, and a plain offset
	 * fetch answers the older offset until they do (the admin client's
	 * {@code requireStable} drops a pending partition from its answer instead of waiting). This
	 * reads with a {@code read_committed} consumer, which asks with {@code require_stable}
	 * (KIP-447) and asks again while the broker answers {@code UNSTABLE_OFFSET_COMMIT}; the
	 * consumer does not join the group.
	 * @param bootstrapServers the cluster's bootstrap servers
	 * @param group the consumer group id
	 * @param topic the topic whose partitions to read
	 * @return the group's offsets by partition; partitions without an offset are absent
	 * @throws org.apache.kafka.common.errors.TimeoutException if an offset is still pending
	 *     after {@link #DEFAULT_TIMEOUT}
	 * @since 0.1.0
	 */
	public static Map<TopicPartition, OffsetAndMetadata> groupOffsets(String bootstrapServers, String group,
			String topic) {
		Map<String, Object> config = new HashMap<>();
		config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
			consumer.committed(Set.copyOf(partitions(consumer, topic, DEFAULT_TIMEOUT)), DEFAULT_TIMEOUT).forEach((partition, offset) -> {
				if (offset != null) {
					offsets.put(partition, offset);
				}
			});
			return offsets;
		}
	}

	/**
	 * The group's committed offsets of a topic, summed over its partitions, read as
	 * {@link #groupOffsets(String, String, String)} does: for a topic whose offsets all started
	 * at 0, the number of records the group has committed.
	 * @param bootstrapServers the cluster's bootstrap servers
	 * @param group the consumer group id
	 * @param topic the topic whose partitions to read
	 * @return the sum, 0 if nothing is committed
	 * @since 0.1.0
	 */
	public static long committedRecords(String bootstrapServers, String group, String topic) {
		return groupOffsets(bootstrapServers, group, topic).values().stream().mapToLong(OffsetAndMetadata::offset).sum();
	}

	private static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, String topic, Duration timeout) {
		return consumer.partitionsFor(topic, timeout).stream()
			.map((info) -> new TopicPartition(topic, info.partition()))
			.toList();
	}

	private static List<String> utf8(List<ConsumerRecord<byte[], byte[]>> records) {
		List<String> values = new ArrayList<>();
		for (ConsumerRecord<byte[], byte[]> record : records) {
			values.add((record.value() != null) ? new String(record.value(), StandardCharsets.UTF_8) : null);
		}
		return values;
	}

}
