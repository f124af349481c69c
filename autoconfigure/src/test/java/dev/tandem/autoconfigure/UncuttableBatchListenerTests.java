package dev.tandem.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.listener.adapter.RecordFilterStrategy;
import org.springframework.messaging.Message;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Batch listeners whose records Tandem cannot cut to a part of the delivery: one takes a
 * {@code Message<List<String>>}, one gets a batch its record filter shortened. Each delivery takes
 * about two thirds of {@code max.poll.interval.ms} (12 s), more than the half over which the
 * delivery budget caps a consumer: capping them would commit the offsets of a part while the
 * listener processed every record, and the rest would be processed again (found by a breaking
 * test: 42,500 records written, 6,049 distinct). They must be left whole: every record once.
 * Real brokers.
 */
class UncuttableBatchListenerTests {

	static final int RECORDS = 10_000;

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@TempDir
	Path dataDir;

	@BeforeAll
	static void createTopics() {
		for (String topic : List.of("message-in", "filtered-in")) {
			kafka.cluster("east").createTopic(topic, 1, (short) 1);
			kafka.cluster("west").createTopic(topic + "-out", 1, (short) 1);
		}
	}

	@Test
	void messageAndFilteredBatchesAreNeverCappedAndEveryRecordIsCopiedOnce() {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < RECORDS; i++) {
				producer.send(new ProducerRecord<>("message-in", "k" + i, "v" + i));
				producer.send(new ProducerRecord<>("filtered-in", "k" + i, "v" + i));
			}
		}
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
			.web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.clusters.east.consumer.max.poll.interval.ms=12000", "tandem.transaction.id-prefix=uncut",
					"tandem.transaction.instance-id=uncut-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"))
			.run()) {
			await().atMost(Duration.ofSeconds(150))
				.pollInterval(Duration.ofMillis(500))
				.until(() -> committed("message") == RECORDS && committed("filtered") == RECORDS);
			List<String> messages = ReadCommitted.values(kafka.cluster("west").bootstrapServers(), "message-in-out");
			assertThat(messages).hasSize(RECORDS).doesNotHaveDuplicates();
			List<String> filtered = ReadCommitted.values(kafka.cluster("west").bootstrapServers(), "filtered-in-out");
			assertThat(filtered).as("the even offsets the filter let through, once each")
				.hasSize(RECORDS / 2)
				.doesNotHaveDuplicates();
		}
	}

	private static long committed(String group) {
		return ReadCommitted.committedRecords(kafka.cluster("east").bootstrapServers(), group, group + "-in");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import(Listeners.class)
	static class App {

		@Bean
		RecordFilterStrategy<String, String> dropOddOffsets() {
			return (record) -> record.offset() % 2 == 1;
		}

	}

	static class Listeners {

		private final ClusterTransactionalTemplate<String, String> west;

		Listeners(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.west = west;
		}

		/** About 8 s per 5,000-record delivery. */
		@KafkaListener(id = "message", topics = "message-in", groupId = "message", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void message(Message<List<String>> message) throws InterruptedException {
			for (String value : message.getPayload()) {
				this.west.send(new ProducerRecord<>("message-in-out", value, value));
			}
			Thread.sleep(message.getPayload().size() * 8L / 5);
		}

		/** About 8 s per delivery: 2,500 records of 5,000 pass the filter. */
		@KafkaListener(id = "filtered", topics = "filtered-in", groupId = "filtered", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory", filter = "dropOddOffsets")
		@CrossClusterTransactional
		public void filtered(List<ConsumerRecord<String, String>> records) throws InterruptedException {
			for (ConsumerRecord<String, String> record : records) {
				this.west.send(new ProducerRecord<>("filtered-in-out", record.key(), record.value()));
			}
			Thread.sleep(records.size() * 16L / 5);
		}

	}

}
