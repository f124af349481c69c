package dev.tandem.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

import static org.awaitility.Awaitility.await;

/**
 * Produces and reads back records on an {@link EmbeddedKafkaCluster} in tests.
 *
 * @author Tandem
 */
final class KafkaTestRecords {

	private KafkaTestRecords() {
	}

	/**
	 * Send {@code count} records with {@code acks=all} and an idempotent producer, and wait
	 * for every acknowledgement.
	 */
	static List<RecordMetadata> produce(EmbeddedKafkaCluster cluster, String topic, int count) throws Exception {
		Map<String, Object> properties = cluster.producerProperties();
		properties.put(ProducerConfig.ACKS_CONFIG, "all");
		properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
		properties.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
		properties.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties)) {
			List<Future<RecordMetadata>> sends = new ArrayList<>();
			for (int i = 0; i < count; i++) {
				sends.add(producer.send(new ProducerRecord<>(topic, "key-" + i, "value-" + i)));
			}
			List<RecordMetadata> acknowledged = new ArrayList<>();
			for (Future<RecordMetadata> send : sends) {
				acknowledged.add(send.get(30, TimeUnit.SECONDS));
			}
			return acknowledged;
		}
	}

	/**
	 * Read every partition of a topic from the beginning with a {@code read_committed}
	 * consumer until at least {@code expected} records arrived.
	 */
	static List<ConsumerRecord<String, String>> consume(EmbeddedKafkaCluster cluster, String topic, int expected) {
		Map<String, Object> properties = cluster.consumerProperties();
		properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties)) {
			List<TopicPartition> partitions = consumer.partitionsFor(topic)
				.stream()
				.map((info) -> new TopicPartition(topic, info.partition()))
				.toList();
			consumer.assign(partitions);
			consumer.seekToBeginning(partitions);
			List<ConsumerRecord<String, String>> records = new ArrayList<>();
			await().atMost(Duration.ofSeconds(30)).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
				consumer.poll(Duration.ofMillis(100)).forEach(records::add);
				return records.size() >= expected;
			});
			return records;
		}
	}

}
