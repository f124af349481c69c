package dev.tandem.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringSerializer;
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
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.BatchListenerFailedException;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.autoconfigure.transaction.DeadLetterPublisher;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A failing record costs only itself: on real brokers, {@code @CrossClusterTransactional}
 * listeners on east write to west; poison records throw. Batch listeners are narrowed to the
 * failing record (by bisection, or by the index of a {@link BatchListenerFailedException}), the
 * good records commit once, each poison record lands once in its dead-letter topic with its
 * offset, and every offset is committed; with {@code failed-record=stop} the container stops
 * with the poison record's offset uncommitted.
 */
class FailedRecordTests {

	static final int RECORDS = 500;

	static final Set<Integer> POISON = Set.of(3, 61, 62, 150, 299, 400, 499);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@TempDir
	Path dataDir;

	@Test
	void batchesWithPoisonRecordsCommitTheGoodOnesOnceAndDeadLetterThePoisonOnesWithTheirOffsets() throws Exception {
		for (String topic : List.of("orders", "orders-indexed", "singles")) {
			kafka.cluster("east").createTopic(topic, 1, (short) 1);
			kafka.cluster("east").createTopic(topic + "-dlt", 1, (short) 1);
			kafka.cluster("west").createTopic(topic + "-out", 1, (short) 1);
		}
		kafka.cluster("east").createTopic("singles-audit", 1, (short) 1);
		produce("orders", RECORDS, POISON);
		produce("orders-indexed", RECORDS, POISON);
		produce("singles", 20, Set.of(7));
		try (ConfigurableApplicationContext context = start(DeadLetterApp.class, "dead-letter", "app-dlt")) {
			await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(500))
				.until(() -> committedOffset("orders") == RECORDS && committedOffset("orders-indexed") == RECORDS
						&& committedOffset("singles") == 20);
			for (String topic : List.of("orders", "orders-indexed")) {
				List<String> written = ReadCommitted.values(kafka.cluster("west").bootstrapServers(), topic + "-out");
				assertThat(written).hasSize(RECORDS - POISON.size()).doesNotHaveDuplicates()
					.noneMatch((value) -> value.startsWith("poison"));
				List<String> deadLetters = ReadCommitted.values(kafka.cluster("east").bootstrapServers(), topic + "-dlt");
				assertThat(deadLetters).hasSize(POISON.size()).doesNotHaveDuplicates()
					.allMatch((value) -> value.startsWith("poison"));
			}
			assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), "singles-out")).hasSize(19)
				.doesNotHaveDuplicates()
				.doesNotContain("poison-7");
			assertThat(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), "singles-audit")).hasSize(19)
				.doesNotContain("poison-7");
			List<ConsumerRecord<byte[], byte[]>> single = ReadCommitted.records(kafka.cluster("east").bootstrapServers(),
					"singles-dlt", ReadCommitted.DEFAULT_TIMEOUT);
			assertThat(single).hasSize(1);
			assertThat(utf8(single.get(0).value())).isEqualTo("poison-7");
			assertThat(header(single.get(0), "kafka_dlt-original-topic")).isEqualTo("singles");
			assertThat(header(single.get(0), DeadLetterPublisher.ORIGINAL_CLUSTER_HEADER)).isEqualTo("east");
			assertThat(header(single.get(0), "kafka_dlt-exception-message")).isEqualTo("poison record 7");
		}
	}

	@Test
	void failedRecordStopsTheContainerWithItsOffsetUncommittedAndTheRecordsBeforeItCommitted() throws Exception {
		kafka.cluster("east").createTopic("stops", 1, (short) 1);
		kafka.cluster("east").createTopic("stops-dlt", 1, (short) 1);
		kafka.cluster("west").createTopic("stops-out", 1, (short) 1);
		produce("stops", 10, Set.of(5));
		try (ConfigurableApplicationContext context = start(StopApp.class, "stop", "app-stop")) {
			KafkaListenerEndpointRegistry registry = context.getBean(KafkaListenerEndpointRegistry.class);
			await().atMost(Duration.ofSeconds(60)).until(() -> !registry.getListenerContainer("stops").isRunning());
			assertThat(ReadCommitted.groupOffsets(kafka.cluster("east").bootstrapServers(), "stops", "stops")
				.get(new TopicPartition("stops", 0)).offset()).isEqualTo(5);
			assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), "stops-out"))
				.containsExactly("v0", "v1", "v2", "v3", "v4");
			assertThat(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), "stops-dlt")).isEmpty();
		}
	}

	private ConfigurableApplicationContext start(Class<?> app, String action, String instanceId) {
		return new SpringApplicationBuilder(app).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.clusters.east.consumer.max.poll.records=50",
					"tandem.transaction.id-prefix=failed-record-tests", "tandem.transaction.instance-id=" + instanceId,
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"),
					"tandem.listener.failed-record=" + action, "tandem.listener.attempts=2",
					"tandem.listener.back-off=0", "spring.kafka.listener.observation-enabled=false")
			.run();
	}

	private static void produce(String topic, int count, Set<Integer> poison) {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < count; i++) {
				producer.send(new ProducerRecord<>(topic, "k" + i, (poison.contains(i) ? "poison-" : "v") + i));
			}
			producer.flush();
		}
	}

	private static long committedOffset(String group) throws Exception {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()))) {
			Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata()
				.get(30, TimeUnit.SECONDS);
			return offsets.values().stream().filter(java.util.Objects::nonNull).mapToLong(OffsetAndMetadata::offset).sum();
		}
	}

	private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
		Header header = record.headers().lastHeader(name);
		return (header != null) ? utf8(header.value()) : null;
	}

	private static String utf8(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	static boolean poison(ConsumerRecord<String, String> record) {
		return record.value().startsWith("poison");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import(Listeners.class)
	static class DeadLetterApp {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import(StopListener.class)
	static class StopApp {

	}

	static class Listeners {

		private final ClusterTransactionalTemplate<String, String> west;

		private final ClusterTransactionalTemplate<String, String> east;

		Listeners(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				@Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east) {
			this.west = west;
			this.east = east;
		}

		/** Throws a plain exception: Tandem bisects the batch. */
		@KafkaListener(id = "orders", topics = "orders", groupId = "orders", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void orders(List<ConsumerRecord<String, String>> records) {
			for (ConsumerRecord<String, String> record : records) {
				this.west.send("orders-out", record.key(), record.value());
				if (poison(record)) {
					throw new IllegalArgumentException("poison record " + record.key().substring(1));
				}
			}
		}

		/** Names the failing record's index, as Spring Kafka recommends. */
		@KafkaListener(id = "orders-indexed", topics = "orders-indexed", groupId = "orders-indexed", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void ordersIndexed(List<String> values) {
			for (int i = 0; i < values.size(); i++) {
				if (values.get(i).startsWith("poison")) {
					throw new BatchListenerFailedException("poison record", new IllegalArgumentException("poison"), i);
				}
				this.west.send("orders-indexed-out", values.get(i));
			}
		}

		/** A record listener: the poison record's sends are aborted, it lands in the DLT once. */
		@KafkaListener(id = "singles", topics = "singles", groupId = "singles",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void single(ConsumerRecord<String, String> record) {
			this.west.send("singles-out", record.key(), record.value());
			this.east.send("singles-audit", record.key(), record.value());
			if (poison(record)) {
				throw new IllegalArgumentException("poison record " + record.key().substring(1));
			}
		}

	}

	static class StopListener {

		private final ClusterTransactionalTemplate<String, String> west;

		StopListener(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.west = west;
		}

		@KafkaListener(id = "stops", topics = "stops", groupId = "stops", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void stops(List<ConsumerRecord<String, String>> records) {
			for (ConsumerRecord<String, String> record : records) {
				this.west.send("stops-out", record.key(), record.value());
				if (poison(record)) {
					throw new IllegalStateException("poison record " + record.key().substring(1));
				}
			}
		}

	}

}
