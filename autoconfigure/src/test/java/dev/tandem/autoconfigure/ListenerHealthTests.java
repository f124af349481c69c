package dev.tandem.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;

import dev.tandem.actuate.KafkaTransactionsEndpoint;
import dev.tandem.autoconfigure.kafka.ListenerContainerStatus;
import dev.tandem.autoconfigure.kafka.ListenerContainerStatus.FailedRecord;
import dev.tandem.autoconfigure.kafka.ListenerContainerStatus.State;
import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Nothing stops silently: on real brokers, a Tandem listener container stopped by a failed record
 * turns the {@code tandemListeners} health DOWN naming the record, the property that decides and
 * how to go on, shows in {@code /actuator/kafkatransactions} and the
 * {@code tandem.listener.containers} meter, and logs one ERROR line; started again once the cause
 * is fixed it commits the record and health is UP. A listener whose records wait without a
 * commit turns DOWN as stalled within its threshold, and UP again once it commits.
 */
@ExtendWith(OutputCaptureExtension.class)
class ListenerHealthTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	static final AtomicBoolean poisonFails = new AtomicBoolean(true);

	static final CountDownLatch release = new CountDownLatch(1);

	@TempDir
	Path dataDir;

	@Test
	void failedRecordTurnsHealthDownNamingTheRecordUntilTheContainerStartsAgain(CapturedOutput output) {
		kafka.cluster("east").createTopic("health-orders", 1, (short) 1);
		kafka.cluster("west").createTopic("health-orders-out", 1, (short) 1);
		produce("health-orders", 10, 5);
		try (ConfigurableApplicationContext context = start(StopApp.class, "health-stop", "2m")) {
			KafkaListenerEndpointRegistry registry = context.getBean(KafkaListenerEndpointRegistry.class);
			await().atMost(Duration.ofSeconds(60))
				.until(() -> !registry.getListenerContainer("health-orders").isRunning());
			Health health = await().atMost(Duration.ofSeconds(1)).until(() -> health(context),
					(h) -> h.getStatus().equals(Status.DOWN));
			@SuppressWarnings("unchecked")
			Map<String, Object> orders = (Map<String, Object>) health.getDetails().get("health-orders");
			assertThat(orders).containsEntry("state", "failed").containsEntry("cluster", "east")
				.containsEntry("group", "health-orders");
			FailedRecord failed = (FailedRecord) orders.get("failedRecord");
			assertThat(failed.topic()).isEqualTo("health-orders");
			assertThat(failed.partition()).isZero();
			assertThat(failed.offset()).isEqualTo(5);
			assertThat(failed.attempts()).isEqualTo(1);
			assertThat(failed.exception()).isEqualTo("java.lang.IllegalStateException: poison record 5");
			assertThat(failed.property()).isEqualTo("tandem.listener.failed-record");
			assertThat(failed.remedy()).contains("start listener container 'health-orders' again")
				.contains("tandem.listener.failed-record=dead-letter");

			ListenerContainerStatus endpoint = context.getBean(KafkaTransactionsEndpoint.class).transactions()
				.listeners()
				.get(0);
			assertThat(endpoint.state()).isEqualTo(State.FAILED);
			KafkaTransactionsEndpoint.LeasesDescriptor leases = context.getBean(KafkaTransactionsEndpoint.class)
				.transactions()
				.leases();
			assertThat(leases.unavailable()).isNull();
			assertThat(leases.instances()).singleElement().satisfies((lease) -> {
				assertThat(lease.owner()).isEqualTo("listener-health-tests.health-stop");
				assertThat(lease.self()).isTrue();
				assertThat(lease.expired()).isFalse();
				assertThat(lease.claimedBy()).isNull();
				assertThat(lease.run()).isNotBlank();
			});
			assertThat(endpoint.failedRecord().offset()).isEqualTo(5);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("tandem.listener.containers").tag("state", "failed").gauge().value()).isEqualTo(1.0);
			assertThat(meters.get("tandem.listener.containers").tag("state", "running").gauge().value()).isZero();
			// One ERROR line of Tandem's own, and no stack trace of Spring Kafka's at ERROR (other libraries'
			// lines, such as a Ratis JMX name left by an earlier test's coordinator, are not this test's)
			assertThat(output.getOut().lines().filter((line) -> line.contains(" ERROR ")
					&& line.contains("org.springframework.kafka"))).isEmpty();
			assertThat(output.getOut().lines().filter((line) -> line.contains(" ERROR ")
					&& line.contains("ListenerContainerMonitor"))).singleElement(
					org.assertj.core.api.InstanceOfAssertFactories.STRING)
				.contains("Listener container 'health-orders' of cluster 'east' (group 'health-orders') stopped: "
						+ "record health-orders-0@5 "
						+ "failed 1 attempt(s) (java.lang.IllegalStateException: poison record 5); its offset is not "
						+ "committed. To go on, fix the cause and start listener container 'health-orders' again");
			assertThat(committed("health-orders")).isEqualTo(5);

			poisonFails.set(false);
			registry.getListenerContainer("health-orders").start();
			await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
				.until(() -> committed("health-orders") == 10);
			await().atMost(Duration.ofSeconds(10)).until(() -> health(context).getStatus().equals(Status.UP));
			assertThat(meters.get("tandem.listener.containers").tag("state", "running").gauge().value()).isEqualTo(1.0);
			assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), "health-orders-out")).hasSize(10)
				.doesNotHaveDuplicates();
		}
	}

	@Test
	void recordsWaitingWithoutACommitTurnHealthDownAsStalledWithinTheThresholdAndUpOnceCommitted() {
		kafka.cluster("east").createTopic("health-slow", 1, (short) 1);
		kafka.cluster("west").createTopic("health-slow-out", 1, (short) 1);
		produce("health-slow", 3, -1);
		try (ConfigurableApplicationContext context = start(StallApp.class, "health-stall", "2s")) {
			Health health = await().atMost(Duration.ofSeconds(20)).until(() -> health(context),
					(h) -> h.getStatus().equals(Status.DOWN));
			@SuppressWarnings("unchecked")
			Map<String, Object> slow = (Map<String, Object>) health.getDetails().get("health-slow");
			assertThat(slow).containsEntry("state", "stalled").containsEntry("cluster", "east");
			assertThat((Long) slow.get("waitingRecords")).isPositive();
			assertThat((Long) slow.get("waitingMs")).isGreaterThanOrEqualTo(2000);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("tandem.listener.containers").tag("state", "stalled").gauge().value()).isEqualTo(1.0);
			assertThat(meters.get("tandem.listener.records.waiting").gauge().value()).isPositive();
			assertThat(committed("health-slow")).isZero();

			release.countDown();
			await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500))
				.until(() -> committed("health-slow") == 3);
			await().atMost(Duration.ofSeconds(10)).until(() -> health(context).getStatus().equals(Status.UP));
			assertThat(context.getBean(KafkaTransactionsEndpoint.class).transactions().listeners())
				.singleElement()
				.satisfies((status) -> assertThat(status.state()).isEqualTo(State.RUNNING));
		}
	}

	private ConfigurableApplicationContext start(Class<?> app, String instanceId, String stallThreshold) {
		return new SpringApplicationBuilder(app).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.transaction.id-prefix=listener-health-tests", "tandem.transaction.instance-id=" + instanceId,
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"),
					"tandem.listener.failed-record=stop", "tandem.listener.attempts=1", "tandem.listener.back-off=0",
					"tandem.listener.stall-threshold=" + stallThreshold,
					"management.endpoint.health.show-details=always",
					"management.endpoints.web.exposure.include=kafkatransactions,health",
					"spring.kafka.listener.observation-enabled=false")
			.run();
	}

	private static Health health(ApplicationContext context) {
		return context.getBean("tandemListenersHealthContributor", HealthIndicator.class).health(true);
	}

	private static long committed(String group) {
		Map<TopicPartition, OffsetAndMetadata> offsets = ReadCommitted
			.groupOffsets(kafka.cluster("east").bootstrapServers(), group, group);
		OffsetAndMetadata offset = offsets.get(new TopicPartition(group, 0));
		return (offset != null) ? offset.offset() : 0;
	}

	private static void produce(String topic, int count, int poison) {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < count; i++) {
				producer.send(new ProducerRecord<>(topic, "k" + i, ((i == poison) ? "poison-" : "v") + i));
			}
			producer.flush();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import(StopListener.class)
	static class StopApp {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import(StallListener.class)
	static class StallApp {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	static class StopListener {

		private final ClusterTransactionalTemplate<String, String> west;

		StopListener(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.west = west;
		}

		@KafkaListener(id = "health-orders", topics = "health-orders", groupId = "health-orders",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void order(ConsumerRecord<String, String> record) {
			if (record.value().startsWith("poison") && poisonFails.get()) {
				throw new IllegalStateException("poison record " + record.key().substring(1));
			}
			this.west.send("health-orders-out", record.key(), record.value());
		}

	}

	static class StallListener {

		private final ClusterTransactionalTemplate<String, String> west;

		StallListener(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.west = west;
		}

		@KafkaListener(id = "health-slow", topics = "health-slow", groupId = "health-slow",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void slow(ConsumerRecord<String, String> record) throws InterruptedException {
			assertThat(release.await(2, TimeUnit.MINUTES)).isTrue();
			this.west.send("health-slow-out", record.key(), record.value());
		}

	}

}
