package dev.tandem.autoconfigure;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;

import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationFailureAnalyzer;
import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Dead-letter topics on real brokers: with {@code tandem.listener.failed-record=dead-letter} a
 * missing dead-letter topic fails start-up naming the topic and the fix, or is created with the
 * source topic's partitions when {@code tandem.listener.dead-letter.create-topics=true}; a dead
 * letter to a cluster that cannot be reached fails its attempt within the commit timeout, and the
 * record is delivered again with its offset uncommitted.
 */
class DeadLetterTopicsTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	static final List<Long> poisonCalls = new CopyOnWriteArrayList<>();

	@TempDir
	Path dataDir;

	@BeforeAll
	static void createTopics() {
		kafka.cluster("east").createTopic("payments", 3, (short) 1);
		kafka.cluster("west").createTopic("payments-out", 3, (short) 1);
	}

	@Test
	void missingDeadLetterTopicFailsStartUpNamingTheTopicAndTheFix() throws Exception {
		kafka.cluster("east").createTopic("invoices", 2, (short) 1);
		assertThatThrownBy(() -> start("dlt-missing", "invoices").close()).satisfies((failure) -> {
			FailureAnalysis analysis = new TandemConfigurationFailureAnalyzer().analyze(failure);
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).contains("tandem.listener.dead-letter.create-topics")
				.contains("Dead-letter topic 'invoices-dlt' does not exist on cluster 'east'")
				.contains("listener 'invoices' consumes 'invoices'");
			assertThat(analysis.getAction()).contains("tandem.listener.dead-letter.create-topics=true");
			assertThat(rootCause(failure)).isInstanceOf(TandemConfigurationException.class);
		});
		assertThat(topicPartitions("invoices-dlt")).isZero();
	}

	@Test
	void missingDeadLetterTopicIsCreatedWithTheSourcesPartitionsAndReceivesTheFailedRecord() throws Exception {
		produce("payments", "k1", "v1");
		produce("payments", "k2", "poison-2");
		try (ConfigurableApplicationContext context = start("dlt-create", "payments",
				"tandem.listener.dead-letter.create-topics=true")) {
			assertThat(topicPartitions("payments-dlt")).isEqualTo(3);
			await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
				.until(() -> ReadCommitted.values(kafka.cluster("east").bootstrapServers(), "payments-dlt").size() == 1);
			assertThat(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), "payments-dlt"))
				.containsExactly("poison-2");
		}
	}

	@Test
	void deadLetterToAnUnreachableClusterFailsTheAttemptWithinTheCommitTimeoutAndDeliversTheRecordAgain()
			throws Exception {
		kafka.cluster("east").createTopic("refunds", 1, (short) 1);
		produce("refunds", "k0", "v0");
		produce("refunds", "k1", "poison-1");
		try (ConfigurableApplicationContext context = start("dlt-gone", "refunds",
				"tandem.clusters.gone.bootstrap-servers=localhost:" + closedPort(),
				"tandem.listener.dead-letter.cluster=gone", "tandem.transaction.commit-timeout=2s")) {
			await().atMost(Duration.ofSeconds(90)).until(() -> poisonCalls.size() >= 3);
			List<Long> calls = List.copyOf(poisonCalls);
			for (int i = 1; i < calls.size(); i++) {
				// one attempt (back-off 0) and a dead letter that fails within the 2 s commit timeout
				assertThat(calls.get(i) - calls.get(i - 1)).isLessThan(TimeUnit.SECONDS.toNanos(5));
			}
			Map<TopicPartition, OffsetAndMetadata> offsets = ReadCommitted
				.groupOffsets(kafka.cluster("east").bootstrapServers(), "refunds", "refunds");
			assertThat(offsets.get(new TopicPartition("refunds", 0)).offset()).isEqualTo(1);
			assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), "payments-out"))
				.doesNotContain("poison-1");
		}
	}

	private ConfigurableApplicationContext start(String instanceId, String topic, String... more) {
		return new SpringApplicationBuilder(DeadLetterApp.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.transaction.id-prefix=dead-letter-topics-tests", "tandem.transaction.instance-id=" + instanceId,
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"),
					"tandem.listener.failed-record=dead-letter", "tandem.listener.attempts=1",
					"tandem.listener.back-off=0", "listener.topic=" + topic,
					"spring.kafka.listener.observation-enabled=false")
			.properties(more)
			.run();
	}

	private static int topicPartitions(String topic) throws Exception {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()))) {
			if (!admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(topic)) {
				return 0;
			}
			TopicDescription description = admin.describeTopics(List.of(topic)).topicNameValues().get(topic)
				.get(30, TimeUnit.SECONDS);
			return description.partitions().size();
		}
	}

	private static void produce(String topic, String key, String value) {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			producer.send(new ProducerRecord<>(topic, 0, key, value));
			producer.flush();
		}
	}

	private static int closedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause != null && !(cause instanceof TandemConfigurationException)) {
			cause = cause.getCause();
		}
		return cause;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import(Listener.class)
	static class DeadLetterApp {

	}

	static class Listener {

		private final ClusterTransactionalTemplate<String, String> west;

		Listener(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.west = west;
		}

		@KafkaListener(id = "${listener.topic}", topics = "${listener.topic}", groupId = "${listener.topic}",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void handle(ConsumerRecord<String, String> record) {
			if (record.value().startsWith("poison")) {
				poisonCalls.add(System.nanoTime());
				throw new IllegalStateException("poison record " + record.key());
			}
			this.west.send("payments-out", record.key(), record.value());
		}

	}

}
