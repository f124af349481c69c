package dev.tandem.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
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
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A batch listener too slow for Tandem's 5,000-record deliveries: 2 ms of work per record, so a
 * full delivery takes about 10 s against a {@code max.poll.interval.ms} of 6 s. Without a
 * bound, the group removes the consumer during every full delivery, its transaction cannot commit
 * its offsets, and the same records come again forever (found by trying it). With the delivery
 * budget, the first overrun caps the consumer's deliveries and every record is copied once.
 * Real brokers.
 */
class SlowListenerTests {

	static final int RECORDS = 6000;

	static final String TOPIC = "slow-in";

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@TempDir
	Path dataDir;

	@BeforeAll
	static void createTopics() {
		kafka.cluster("east").createTopic(TOPIC, 1, (short) 1);
		kafka.cluster("west").createTopic(TOPIC + "-out", 1, (short) 1);
	}

	@Test
	void aListenerSlowerThanTheMaxPollIntervalPerDeliveryIsGivenFewerRecordsAndCopiesEveryOneOnce() {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < RECORDS; i++) {
				producer.send(new ProducerRecord<>(TOPIC, "k" + i, "v" + i));
			}
		}
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
			.web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.clusters.east.consumer.max.poll.interval.ms=6000", "tandem.transaction.id-prefix=slow",
					"tandem.transaction.instance-id=slow-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"), "tandem.listener.back-off=0")
			.run()) {
			await().atMost(Duration.ofSeconds(150))
				.pollInterval(Duration.ofMillis(500))
				.until(() -> ReadCommitted.committedRecords(kafka.cluster("east").bootstrapServers(), "slow",
						TOPIC) == RECORDS);
			List<String> copied = ReadCommitted.values(kafka.cluster("west").bootstrapServers(), TOPIC + "-out");
			assertThat(copied).hasSize(RECORDS).doesNotHaveDuplicates();
			List<Integer> sizes = new ArrayList<>(Slow.deliveries);
			assertThat(sizes.get(0)).as("the first delivery, before anything was measured: over the budget").isGreaterThan(3000);
			assertThat(sizes.subList(1, sizes.size())).as("deliveries after the first overran the interval")
				.isNotEmpty()
				.allSatisfy((size) -> assertThat(size).isLessThan(2000));
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import(Slow.class)
	static class App {

	}

	static class Slow {

		static final List<Integer> deliveries = Collections.synchronizedList(new ArrayList<>());

		private final ClusterTransactionalTemplate<String, String> west;

		Slow(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.west = west;
		}

		@KafkaListener(id = "slow", topics = TOPIC, groupId = "slow", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void copy(List<ConsumerRecord<String, String>> records) throws InterruptedException {
			deliveries.add(records.size());
			for (ConsumerRecord<String, String> record : records) {
				this.west.send(new ProducerRecord<>(TOPIC + "-out", record.key(), record.value()));
			}
			Thread.sleep(2L * records.size());
		}

	}

}
