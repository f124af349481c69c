package dev.tandem.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.ObjectProvider;
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

import dev.tandem.actuate.KafkaTransactionsEndpoint;
import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactional;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A {@code @KafkaListener} on east annotated {@code @CrossClusterTransactional} routes records to
 * west (and an audit copy to east) and commits its offsets on east, exactly once across a hard
 * stop of the application right after a transaction's decision. Subclasses provide the clusters.
 */
abstract class AbstractExactlyOnceListenerTests {

	static final int RECORDS = 120;

	@TempDir
	Path dataDir;

	abstract String bootstrapServers(String cluster);

	@Test
	void listenerConsumeTransformProduceSurvivesAHardRestartExactlyOnce() throws Exception {
		createTopic("east", "in");
		createTopic("east", "in-batch");
		createTopic("east", "audit");
		createTopic("west", "out");
		createTopic("west", "out-batch");
		produce("in", RECORDS);
		produce("in-batch", RECORDS);

		CrashAfterDecision.crashAt.set(5);
		CrashAfterDecision.crashed.set(false);
		ConfigurableApplicationContext first = start();
		await().atMost(Duration.ofSeconds(60)).untilTrue(CrashAfterDecision.crashed);
		first.close();

		ConfigurableApplicationContext second = start();
		try {
			await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
				.until(() -> readCommitted("west", "out").size() >= RECORDS
						&& readCommitted("west", "out-batch").size() >= RECORDS
						&& committedOffset("in") == RECORDS && committedOffset("in-batch") == RECORDS);
			List<String> out = readCommitted("west", "out");
			assertThat(out).hasSize(RECORDS).doesNotHaveDuplicates();
			assertThat(readCommitted("west", "out-batch")).hasSize(RECORDS).doesNotHaveDuplicates();
			assertThat(readCommitted("east", "audit")).hasSize(RECORDS).doesNotHaveDuplicates();
			assertThat(out).allMatch((value) -> value.startsWith("routed-"));
			KafkaTransactionsEndpoint.TransactionsDescriptor status = second.getBean(KafkaTransactionsEndpoint.class)
				.transactions();
			assertThat(status.counts().committed()).isPositive();
			// the crashed transaction, and any other the two listeners had decided when the crash
			// abandoned the manager (the record listener's one, the batch pipeline's up to two)
			assertThat(status.counts().recovered()).isBetween(1L, 3L);
		}
		finally {
			second.close();
		}
	}

	private ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(ListenerApp.class).web(WebApplicationType.NONE)
			.properties("tandem.clusters.east.bootstrap-servers=" + bootstrapServers("east"),
					"tandem.clusters.west.bootstrap-servers=" + bootstrapServers("west"),
					"tandem.clusters.east.consumer.auto.offset.reset=earliest",
					"tandem.clusters.east.consumer.max.poll.records=20",
					"tandem.transaction.id-prefix=listener-tests", "tandem.transaction.instance-id=app-0",
					// the restarted run waits for the crashed run's lease and heartbeat to expire
					"tandem.transaction.lease-timeout=3s",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"),
					"management.endpoints.web.exposure.include=kafkatransactions,health",
					"spring.kafka.bootstrap-servers=" + bootstrapServers("east"))
			.run();
	}

	private void createTopic(String cluster, String topic) throws Exception {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers(cluster)))) {
			int brokers = admin.describeCluster().nodes().get().size();
			admin.createTopics(List.of(new NewTopic(topic, 3, (short) Math.min(3, brokers)))).all().get(30, TimeUnit.SECONDS);
		}
	}

	private void produce(String topic, int count) throws Exception {
		Map<String, Object> config = Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers("east"));
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < count; i++) {
				producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
			}
			producer.flush();
		}
	}

	private long committedOffset(String topic) throws Exception {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers("east")))) {
			Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets("router-" + topic)
				.partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
			return offsets.entrySet().stream().filter((e) -> e.getKey().topic().equals(topic))
				.mapToLong((e) -> e.getValue().offset()).sum();
		}
	}

	private List<String> readCommitted(String cluster, String topic) {
		return ReadCommitted.values(bootstrapServers(cluster), topic);
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import({ Router.class, CrashAfterDecision.class })
	static class ListenerApp {

	}

	static class Router {

		private final ClusterTransactionalTemplate<String, String> west;

		private final ClusterTransactionalTemplate<String, String> east;

		Router(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				@Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east) {
			this.west = west;
			this.east = east;
		}

		@KafkaListener(id = "router-in", topics = "in", groupId = "router-in",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void route(ConsumerRecord<String, String> record) {
			this.west.send("out", record.key(), "routed-" + record.value());
			this.east.send("audit", record.key(), record.value());
		}

		@KafkaListener(id = "router-in-batch", topics = "in-batch", groupId = "router-in-batch", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void routeBatch(List<ConsumerRecord<String, String>> records) {
			for (ConsumerRecord<String, String> record : records) {
				this.west.send("out-batch", record.key(), "routed-" + record.value());
			}
		}

	}

	/**
	 * Stops the app as a crash would, right after the decision of the n-th two-phase transaction:
	 * producers abandoned with the decided transaction open, nothing more committed.
	 */
	static class CrashAfterDecision {

		static final AtomicInteger crashAt = new AtomicInteger();

		static final AtomicBoolean crashed = new AtomicBoolean();

		@Bean
		ProtocolHook crashHook(ObjectProvider<CrossClusterTransactionManager> manager) {
			AtomicInteger decisions = new AtomicInteger();
			return (transactionId, step) -> {
				if (step == ProtocolStep.AFTER_DECISION && decisions.incrementAndGet() == crashAt.get()
						&& crashed.compareAndSet(false, true)) {
					manager.getObject().abandon();
					throw new ProtocolHook.SimulatedCrashException(step);
				}
			};
		}

	}

}
