package dev.tandem.transaction.internals;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.EmbeddedKafkaClusters;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.transaction.internals.ProducerInternals.ProducerIdentity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.awaitility.Awaitility.await;

/**
 * Fails loudly when a kafka-clients upgrade breaks the internals that recovery relies on.
 */
class ProducerInternalsTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(
			EmbeddedKafkaClusters.builder().cluster("solo", 3));

	@BeforeAll
	static void createTopic() {
		kafka.cluster("solo").createTopic("resume", 1, (short) 3);
	}

	@Test
	void everyInternalMemberTandemUsesExists() {
		assertThatNoException().isThrownBy(ProducerInternals::verify);
	}

	@Test
	void partitionForKeyIsWhereAProducerSendsAKeyedRecord() throws Exception {
		kafka.cluster("solo").createTopic("keyed", 6, (short) 1);
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("solo").bootstrapServers());
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < 30; i++) {
				String key = "key-" + i;
				int partition = producer.send(new ProducerRecord<>("keyed", key, "v")).get().partition();
				assertThat(ProducerInternals.partitionForKey(key.getBytes(StandardCharsets.UTF_8), 6)).as(key)
					.isEqualTo(partition);
			}
		}
	}

	@Test
	void aFreshProducerCommitsTheTransactionOfAnAbandonedOne() {
		KafkaProducer<String, String> first = producer();
		first.initTransactions();
		first.beginTransaction();
		for (int i = 0; i < 10; i++) {
			first.send(new ProducerRecord<>("resume", "k", "v" + i));
		}
		first.flush();
		ProducerIdentity identity = ProducerInternals.identity(first);
		assertThat(identity.producerId()).isGreaterThanOrEqualTo(0);
		assertThat(identity.producerEpoch()).isGreaterThanOrEqualTo((short) 0);
		first.close(Duration.ZERO);

		KafkaProducer<String, String> second = producer();
		ProducerInternals.resume(second, identity);
		second.commitTransaction();
		second.close();

		assertThat(readCommitted()).isEqualTo(10);
	}

	private static KafkaProducer<String, String> producer() {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("solo").bootstrapServers());
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "resume-test");
		return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
	}

	private static int readCommitted() {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("solo").bootstrapServers(),
				ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
				new StringDeserializer())) {
			TopicPartition partition = new TopicPartition("resume", 0);
			consumer.assign(List.of(partition));
			consumer.seekToBeginning(List.of(partition));
			int[] count = { 0 };
			await().atMost(Duration.ofSeconds(20)).until(() -> {
				count[0] += consumer.poll(Duration.ofMillis(200)).count();
				return count[0] >= 10 && consumer.position(partition) >= consumer.endOffsets(List.of(partition)).get(partition);
			});
			return count[0];
		}
	}

}
