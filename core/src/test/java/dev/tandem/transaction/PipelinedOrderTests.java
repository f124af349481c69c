package dev.tandem.transaction;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Order across consecutive transactions of a {@link TransactionPipeline} on two real clusters:
 * each transaction sends through its own slot's producer and its sends are held until the
 * previous transaction's records are acknowledged ({@link HeldSends}), so every partition holds
 * the records of consecutive transactions in the order they were sent, keyed, explicitly
 * partitioned and unkeyed records alike; a failing send still aborts its transaction and the
 * ones after it; an aborted open transaction does not hold back the next one.
 */
class PipelinedOrderTests {

	private static final String TOPIC = "pipelined-order-tests";

	private static final int PARTITIONS = 3;

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	private CrossClusterTransactionManager manager;

	@BeforeAll
	static void topics() {
		for (String cluster : List.of("east", "west")) {
			for (String suffix : List.of("-mixed", "-failing", "-aborted", "-future")) {
				kafka.cluster(cluster).createTopic(TOPIC + suffix, PARTITIONS, (short) 1);
			}
		}
	}

	@AfterEach
	void close() {
		if (this.manager != null) {
			this.manager.close();
		}
	}

	private CrossClusterTransactionManager manager(String name) {
		Map<String, Object> producer = new HashMap<>();
		// many small batches, several in flight: the records of one transaction are far from
		// acknowledged when the next one is begun
		producer.put(ProducerConfig.LINGER_MS_CONFIG, 0);
		producer.put(ProducerConfig.BATCH_SIZE_CONFIG, 512);
		producer.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 16_384);
		Map<String, Object> east = new HashMap<>(producer);
		east.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("east").bootstrapServers());
		Map<String, Object> west = new HashMap<>(producer);
		west.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("west").bootstrapServers());
		this.manager = CrossClusterTransactionManager.builder()
			.cluster("east", east)
			.cluster("west", west)
			.idPrefix("pipelined-order-" + name)
			.instanceId("app-0")
			.decisionLog(new InMemoryDecisionLog())
			.build();
		this.manager.start();
		return this.manager;
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Sends one transaction's records to both clusters: keyed (Kafka's partitioner picks the
	 * partition), explicitly partitioned and unkeyed (the sticky partitioner picks it). Each value
	 * is the record's sequence number over the whole run.
	 */
	private static void sendMixed(CrossClusterTransaction transaction, String topic, int transactionIndex, int records) {
		for (int i = 0; i < records; i++) {
			long sequence = transactionIndex * 1_000L + i;
			byte[] value = bytes(Long.toString(sequence));
			ProducerRecord<byte[], byte[]> record = switch (i % 3) {
				case 0 -> new ProducerRecord<>(topic, bytes("key-" + (i % 7)), value);
				case 1 -> new ProducerRecord<>(topic, i % PARTITIONS, null, value);
				default -> new ProducerRecord<>(topic, value);
			};
			transaction.send("east", record);
			transaction.send("west", record);
		}
	}

	/**
	 * Reads a topic committed and returns its sequence numbers partition by partition, in offset
	 * order, once every transaction's markers are written (a read right after {@code drain()} could
	 * stop at a last stable offset a just-committed transaction still held back).
	 */
	private static Map<Integer, List<Long>> sequences(String cluster, String topic) {
		Map<Integer, List<Long>> byPartition = new HashMap<>();
		for (ConsumerRecord<byte[], byte[]> record : ReadCommitted.settledRecords(kafka.cluster(cluster).bootstrapServers(),
				topic)) {
			byPartition.computeIfAbsent(record.partition(), (p) -> new ArrayList<>())
				.add(Long.parseLong(new String(record.value(), StandardCharsets.UTF_8)));
		}
		return byPartition;
	}

	private static void assertEveryPartitionInOrder(Map<Integer, List<Long>> byPartition) {
		for (Map.Entry<Integer, List<Long>> partition : byPartition.entrySet()) {
			assertThat(partition.getValue()).as("partition %d", partition.getKey()).isSorted().doesNotHaveDuplicates();
		}
	}

	private static int total(Map<Integer, List<Long>> byPartition) {
		return byPartition.values().stream().mapToInt(List::size).sum();
	}

	@Test
	void consecutiveTransactionsKeepEveryPartitionsOrderForKeyedExplicitAndUnkeyedRecords() {
		int transactions = 40;
		int records = 150;
		CrossClusterTransactionManager manager = manager("mixed");
		String topic = TOPIC + "-mixed";
		List<CompletableFuture<Void>> outcomes = new ArrayList<>();
		try (TransactionPipeline pipeline = manager.pipeline(4)) {
			for (int t = 0; t < transactions; t++) {
				CrossClusterTransaction transaction = pipeline.begin();
				sendMixed(transaction, topic, t, records);
				outcomes.add(pipeline.commitAsync(transaction));
			}
			pipeline.drain();
		}
		assertThat(outcomes).allMatch((outcome) -> outcome.isDone() && !outcome.isCompletedExceptionally());
		for (String cluster : List.of("east", "west")) {
			Map<Integer, List<Long>> byPartition = sequences(cluster, topic);
			assertThat(total(byPartition)).as(cluster).isEqualTo(transactions * records);
			assertThat(byPartition).as(cluster).hasSize(PARTITIONS);
			assertEveryPartitionInOrder(byPartition);
		}
	}

	@Test
	void aFailingSendAbortsItsTransactionAndTheOnesAfterItWhileTheOrderHolds() {
		CrossClusterTransactionManager manager = manager("failing");
		String topic = TOPIC + "-failing";
		List<CompletableFuture<Void>> outcomes = new ArrayList<>();
		try (TransactionPipeline pipeline = manager.pipeline(4)) {
			for (int t = 0; t < 3; t++) {
				CrossClusterTransaction transaction = pipeline.begin();
				sendMixed(transaction, topic, t, 60);
				if (t == 1) {
					// larger than max.request.size: its send fails, after the records before it
					transaction.send("west", new ProducerRecord<>(topic, 0, null, new byte[32_768]));
				}
				outcomes.add(pipeline.commitAsync(transaction));
			}
			assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(pipeline::drain);
			// the pipeline commits again after the drain, in order behind the aborted ones
			CrossClusterTransaction after = pipeline.begin();
			sendMixed(after, topic, 3, 60);
			outcomes.add(pipeline.commitAsync(after));
			pipeline.drain();
		}
		assertThat(outcomes.get(0)).isCompleted();
		assertThat(outcomes.get(0).isCompletedExceptionally()).isFalse();
		assertThatExceptionOfType(CompletionException.class).isThrownBy(outcomes.get(1)::join)
			.withCauseInstanceOf(TransactionAbortedException.class);
		assertThatExceptionOfType(CompletionException.class).isThrownBy(outcomes.get(2)::join)
			.withCauseInstanceOf(PredecessorFailedException.class);
		assertThat(outcomes.get(3).isCompletedExceptionally()).isFalse();
		for (String cluster : List.of("east", "west")) {
			Map<Integer, List<Long>> byPartition = sequences(cluster, topic);
			assertEveryPartitionInOrder(byPartition);
			List<Long> all = byPartition.values().stream().flatMap(List::stream).sorted().toList();
			// transactions 0 and 3 committed, every record; 1 and 2 aborted, none
			assertThat(all).as(cluster).hasSize(120);
			assertThat(all).as(cluster).allMatch((sequence) -> sequence < 1_000 || sequence >= 3_000);
		}
	}

	@Test
	void anOpenTransactionAbortedBeforeItsHandOverDoesNotHoldBackTheNext() {
		CrossClusterTransactionManager manager = manager("aborted");
		String topic = TOPIC + "-aborted";
		try (TransactionPipeline pipeline = manager.pipeline(2)) {
			CrossClusterTransaction first = pipeline.begin();
			sendMixed(first, topic, 0, 30);
			CompletableFuture<Void> firstOutcome = pipeline.commitAsync(first);
			CrossClusterTransaction aborted = pipeline.begin();
			sendMixed(aborted, topic, 1, 30);
			aborted.abort();
			CrossClusterTransaction next = pipeline.begin();
			sendMixed(next, topic, 2, 30);
			CompletableFuture<Void> nextOutcome = pipeline.commitAsync(next);
			pipeline.drain();
			assertThat(firstOutcome.isCompletedExceptionally()).isFalse();
			assertThat(nextOutcome.isCompletedExceptionally()).isFalse();
		}
		for (String cluster : List.of("east", "west")) {
			Map<Integer, List<Long>> byPartition = sequences(cluster, topic);
			assertEveryPartitionInOrder(byPartition);
			List<Long> all = byPartition.values().stream().flatMap(List::stream).toList();
			assertThat(all).as(cluster).hasSize(60).noneMatch((sequence) -> sequence >= 1_000 && sequence < 2_000);
		}
	}

	@Test
	void aHeldSendsFutureCompletesAfterThePreviousTransactionsRecordsInThatPartition() throws Exception {
		CrossClusterTransactionManager manager = manager("future");
		String topic = TOPIC + "-future";
		try (TransactionPipeline pipeline = manager.pipeline(2)) {
			CrossClusterTransaction first = pipeline.begin();
			List<Future<RecordMetadata>> firstSends = new ArrayList<>();
			for (int i = 0; i < 200; i++) {
				firstSends.add(first.send("east", new ProducerRecord<>(topic, 1, null, bytes(Integer.toString(i)))));
			}
			pipeline.commitAsync(first);
			CrossClusterTransaction second = pipeline.begin();
			Future<RecordMetadata> held = second.send("east", new ProducerRecord<>(topic, 1, null, bytes("200")));
			// the caller may wait for its send once the previous transaction is handed over
			RecordMetadata metadata = held.get(60, TimeUnit.SECONDS);
			long lastOfFirst = firstSends.get(firstSends.size() - 1).get(60, TimeUnit.SECONDS).offset();
			assertThat(metadata.partition()).isEqualTo(1);
			assertThat(metadata.offset()).isGreaterThan(lastOfFirst);
			pipeline.commitAsync(second);
			pipeline.drain();
		}
		assertThat(sequences("east", topic).get(1)).hasSize(201).isSorted();
		assertThat(ReadCommitted.settledRecords(kafka.cluster("east").bootstrapServers(), topic))
			.extracting((record) -> new TopicPartition(record.topic(), record.partition()))
			.containsOnly(new TopicPartition(topic, 1));
	}

}
