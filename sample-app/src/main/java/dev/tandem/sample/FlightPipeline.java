package dev.tandem.sample;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.InDoubtTransactionException;
import dev.tandem.transaction.TransactionAbortedException;

/**
 * One incarnation of the consume-transform-produce pipeline: reads {@code flights} on east with
 * {@code read_committed}, routes each flight to the cluster of its origin airport's region
 * (topic {@code flights-by-region}), and commits east's consumer offsets on east, all in one
 * cross-cluster transaction per poll.
 */
final class FlightPipeline implements AutoCloseable {

	static final String INPUT = "flights";

	static final String OUTPUT = "flights-by-region";

	static final String GROUP = "flight-router";

	private static final Logger logger = LoggerFactory.getLogger(FlightPipeline.class);

	private static final ObjectMapper JSON = JsonMapper.builder().build();

	private final CrossClusterTransactionManager manager;

	private final Regions regions;

	private final KafkaConsumer<byte[], byte[]> consumer;

	private final List<TopicPartition> partitions;

	private final Map<TopicPartition, Long> endOffsets;

	private final Map<TopicPartition, Long> committed = new HashMap<>();

	FlightPipeline(CrossClusterTransactionManager manager, Regions regions, String runId, int maxRecords,
			Map<TopicPartition, Long> startOffsets, Map<TopicPartition, Long> endOffsets) {
		this.manager = manager;
		this.regions = regions;
		this.endOffsets = endOffsets;
		this.partitions = List.copyOf(endOffsets.keySet());
		this.consumer = manager.createConsumer(Regions.EAST,
				Map.of(ConsumerConfig.GROUP_ID_CONFIG, GROUP + "-" + runId, ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
						maxRecords),
				new ByteArrayDeserializer(), new ByteArrayDeserializer());
		this.consumer.assign(this.partitions);
		Map<TopicPartition, OffsetAndMetadata> committedOffsets = this.consumer.committed(Set.copyOf(this.partitions),
				Duration.ofSeconds(30));
		for (TopicPartition partition : this.partitions) {
			OffsetAndMetadata offset = committedOffsets.get(partition);
			long position = (offset != null) ? offset.offset() : startOffsets.get(partition);
			this.consumer.seek(partition, position);
			this.committed.put(partition, position);
		}
	}

	/**
	 * Whether every input record up to the end offsets taken after loading is committed.
	 */
	boolean done() {
		return this.partitions.stream().allMatch((tp) -> this.committed.get(tp) >= this.endOffsets.get(tp));
	}

	/**
	 * Polls once and processes what came in one cross-cluster transaction.
	 * @return the number of records committed (0 if none came, or the transaction aborted)
	 */
	int processOnce() {
		ConsumerRecords<byte[], byte[]> records = this.consumer.poll(Duration.ofMillis(200));
		if (records.isEmpty()) {
			return 0;
		}
		Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
		CrossClusterTransaction txn = this.manager.begin();
		try {
			for (ConsumerRecord<byte[], byte[]> record : records) {
				ObjectNode flight = (ObjectNode) JSON.readTree(record.value());
				String cluster = this.regions.clusterOf(flight.get("origin").asString());
				flight.put("region", cluster);
				flight.put("src", record.partition() + ":" + record.offset());
				txn.send(cluster, new ProducerRecord<>(OUTPUT, record.key(), JSON.writeValueAsBytes(flight)));
				offsets.put(new TopicPartition(record.topic(), record.partition()),
						new OffsetAndMetadata(record.offset() + 1));
			}
			txn.sendOffsets(this.consumer, offsets);
		}
		catch (RuntimeException ex) {
			txn.abort();
			rewind();
			throw ex;
		}
		try {
			txn.commit();
		}
		catch (TransactionAbortedException ex) {
			logger.warn("Transaction aborted, re-reading its input: {}", ex.getMessage());
			rewind();
			return 0;
		}
		catch (InDoubtTransactionException ex) {
			// Decided: it commits eventually, offsets included. Carry on from here.
			logger.warn("Transaction {} in-doubt; recovery completes it", ex.getTransactionId());
		}
		offsets.forEach((tp, offset) -> this.committed.put(tp, offset.offset()));
		return records.count();
	}

	private void rewind() {
		this.committed.forEach(this.consumer::seek);
	}

	/**
	 * Stops as a killed process would: producers abandoned with their open transactions, consumer
	 * dropped without committing anything.
	 */
	void crash() {
		this.manager.abandon();
		this.manager.unregisterConsumer(this.consumer);
		this.consumer.close(Duration.ZERO);
	}

	@Override
	public void close() {
		this.manager.unregisterConsumer(this.consumer);
		this.consumer.close();
		this.manager.close();
	}

	static byte[] key(JsonNode flight) {
		return flight.get("origin").asString().getBytes(StandardCharsets.UTF_8);
	}

}
