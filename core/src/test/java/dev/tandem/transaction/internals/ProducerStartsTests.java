package dev.tandem.transaction.internals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.EmbeddedKafkaClusters;
import dev.tandem.test.EmbeddedKafkaClustersExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fails loudly when a kafka-clients upgrade breaks the internals that start a flush or a commit
 * without waiting for it.
 */
class ProducerStartsTests {

	private static final String TOPIC = "starts";

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(
			EmbeddedKafkaClusters.builder().cluster("solo", 3));

	@BeforeAll
	static void createTopic() {
		kafka.cluster("solo").createTopic(TOPIC, 1, (short) 3);
	}

	@Test
	void everyMemberItUsesExists() {
		assertThat(ProducerStarts.supported()).isTrue();
	}

	@Test
	void aStartedFlushSendsWithoutLingeringAndAStartedCommitCommits() throws Exception {
		// linger.ms far above the test's bound: only the started flush can send these records in time
		try (KafkaProducer<String, String> producer = producer("starts-commit", 600_000)) {
			producer.initTransactions();
			producer.beginTransaction();
			List<Future<RecordMetadata>> sends = new ArrayList<>();
			for (int i = 0; i < 10; i++) {
				sends.add(producer.send(new ProducerRecord<>(TOPIC, "k", "v" + i)));
			}
			ProducerStarts.Flush flush = ProducerStarts.beginFlush(producer);
			assertThat(flush.awaitUninterruptibly()).isFalse();
			for (Future<RecordMetadata> send : sends) {
				assertThat(send.isDone()).isTrue();
				assertThat(send.get().offset()).isGreaterThanOrEqualTo(0);
			}
			ProducerStarts.beginCommit(producer).await();

			// The flush ended: the next transaction's record lingers again until something flushes it.
			producer.beginTransaction();
			Future<RecordMetadata> lingering = producer.send(new ProducerRecord<>(TOPIC, "k", "lingering"));
			assertThat(lingering.isDone()).isFalse();
			producer.abortTransaction();
		}
		assertThat(readCommitted()).isEqualTo(10);
	}

	@Test
	void aCommitStartedTwiceWaitsForTheSamePendingCommit() {
		try (KafkaProducer<String, String> producer = producer("starts-twice", 0)) {
			producer.initTransactions();
			producer.beginTransaction();
			producer.send(new ProducerRecord<>(TOPIC, "twice", "v"));
			ProducerStarts.Commit started = ProducerStarts.beginCommit(producer);
			// what a caller does after its wait timed out: the public call waits for the same commit
			producer.commitTransaction();
			started.await();
			producer.beginTransaction();
			producer.abortTransaction();
		}
	}

	private static KafkaProducer<String, String> producer(String transactionalId, int lingerMs) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("solo").bootstrapServers());
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
		config.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
		config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, lingerMs + 30_000);
		return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
	}

	private static int readCommitted() {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
				kafka.cluster("solo").bootstrapServers(), ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
				new StringDeserializer())) {
			TopicPartition partition = new TopicPartition(TOPIC, 0);
			consumer.assign(List.of(partition));
			consumer.seekToBeginning(List.of(partition));
			int[] count = { 0 };
			await().atMost(Duration.ofSeconds(20)).until(() -> {
				consumer.poll(Duration.ofMillis(200)).forEach((record) -> {
					if (record.key().equals("k")) {
						count[0]++;
					}
				});
				return count[0] >= 10
						&& consumer.position(partition) >= consumer.endOffsets(List.of(partition)).get(partition);
			});
			return count[0];
		}
	}

}
