package dev.tandem.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.errors.WakeupException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.kafka.core.ConsumerFactory;

import dev.tandem.autoconfigure.actuate.TandemActuatorAutoConfiguration;
import dev.tandem.autoconfigure.coordinator.TandemCoordinatorAutoConfiguration;
import dev.tandem.autoconfigure.failover.ReachabilityMonitor;
import dev.tandem.autoconfigure.failover.TandemFailoverAutoConfiguration;
import dev.tandem.autoconfigure.kafka.TandemKafkaAutoConfiguration;
import dev.tandem.autoconfigure.transaction.TandemTransactionAutoConfiguration;
import dev.tandem.failover.BrokerReachability;
import dev.tandem.failover.ClientType;
import dev.tandem.failover.LeaderCache;
import dev.tandem.failover.LeaderCacheRegistry;
import dev.tandem.test.EmbeddedKafkaCluster;
import dev.tandem.test.EmbeddedKafkaClusters;
import dev.tandem.test.EmbeddedKafkaClustersExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An idle consumer whose only broker goes away is found {@link BrokerReachability#UNREACHABLE}
 * by the background check alone (nobody reads its cache, and its empty polls never reach its
 * interceptor): counted in {@code tandem.failover.brokers.lost}, in the gauge
 * {@code tandem.failover.clients.unreachable}, and the cluster's health is DOWN naming the
 * client; all clear once the broker is back. Real single-broker KRaft cluster.
 */
class ReachabilityMonitorTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(
			EmbeddedKafkaClusters.builder().cluster("lone", 1));

	@TempDir
	Path dataDir;

	@BeforeAll
	static void createTopic() {
		kafka.cluster("lone").createTopic("idle", 1, (short) 1);
	}

	@Test
	void anIdleConsumerThatLostItsBrokerIsCountedAndMakesTheClusterDown() throws Exception {
		contextRunner().run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(ReachabilityMonitor.class);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			@SuppressWarnings("unchecked")
			ConsumerFactory<String, String> factory = context.getBean("loneKafkaConsumerFactory", ConsumerFactory.class);
			LeaderCacheRegistry leaders = context.getBean(LeaderCacheRegistry.class);
			EmbeddedKafkaCluster lone = kafka.cluster("lone");
			AtomicBoolean polling = new AtomicBoolean(true);
			AtomicBoolean assigned = new AtomicBoolean();
			try (Consumer<String, String> consumer = factory.createConsumer("idle-group", "idle")) {
				consumer.subscribe(List.of("idle"));
				Thread poller = new Thread(() -> {
					try {
						while (polling.get()) {
							consumer.poll(Duration.ofMillis(100));
							assigned.set(!consumer.assignment().isEmpty());
						}
					}
					catch (WakeupException ex) {
						// stopping
					}
				}, "idle-poller");
				poller.start();
				try {
					await().atMost(Duration.ofSeconds(30))
						.untilTrue(assigned);
					assertThat(lostCount(meters)).isZero();
					assertThat(health(context).getStatus()).isEqualTo(Status.UP);

					lone.stopBroker(lone.brokerIds().get(0));
					// only the monitor checks: no send, no non-empty poll, no endpoint or health read
					await().atMost(Duration.ofSeconds(30)).until(() -> lostCount(meters) == 1.0);
					assertThat(meters.get("tandem.failover.clients.unreachable").tag("cluster", "lone").gauge().value())
						.isEqualTo(1.0);
					LeaderCache idle = leaders.caches()
						.stream()
						.filter((cache) -> cache.clientType() == ClientType.CONSUMER)
						.findFirst()
						.orElseThrow();
					assertThat(idle.reachability()).isEqualTo(BrokerReachability.UNREACHABLE);
					Health down = health(context);
					assertThat(down.getStatus()).isEqualTo(Status.DOWN);
					assertThat(down.getDetails()).containsEntry("unreachableClients", List.of(idle.clientId()));

					lone.restartBroker(lone.brokerIds().get(0));
					await().atMost(Duration.ofSeconds(60))
						.until(() -> meters.get("tandem.failover.clients.unreachable").tag("cluster", "lone").gauge()
							.value() == 0.0);
					await().atMost(Duration.ofSeconds(30)).until(() -> health(context).getStatus().equals(Status.UP));
					assertThat(lostCount(meters)).isEqualTo(1.0);
				}
				finally {
					polling.set(false);
					consumer.wakeup();
					poller.join(30_000);
				}
			}
		});
	}

	@Test
	void aNegativeCheckIntervalFailsWhileBindingNamingTheProperty() {
		contextRunner().withPropertyValues("tandem.failover.reachability-check-interval=-1s").run((context) -> {
			assertThat(context).hasFailed();
			// rejected while binding the properties, before any bean connects to a cluster
			assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under 'tandem.failover'");
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("tandem.failover.reachability-check-interval must not be empty or negative but was -1s;");
		});
	}

	private static double lostCount(MeterRegistry meters) {
		Counter counter = meters.find("tandem.failover.brokers.lost").tag("cluster", "lone").counter();
		return (counter != null) ? counter.count() : 0;
	}

	private static Health health(org.springframework.context.ApplicationContext context) {
		CompositeHealthContributor clusters = context.getBean("kafkaClustersHealthContributor",
				CompositeHealthContributor.class);
		return ((HealthIndicator) clusters.getContributor("lone")).health();
	}

	private ApplicationContextRunner contextRunner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(TandemFailoverAutoConfiguration.class, TandemAutoConfiguration.class,
					TandemCoordinatorAutoConfiguration.class, TandemTransactionAutoConfiguration.class,
					TandemKafkaAutoConfiguration.class, TandemActuatorAutoConfiguration.class))
			.withBean(SimpleMeterRegistry.class)
			.withPropertyValues("tandem.clusters.lone.bootstrap-servers=" + kafka.cluster("lone").bootstrapServers(),
					"tandem.clusters.lone.consumer.request.timeout.ms=2000",
					"tandem.clusters.lone.consumer.default.api.timeout.ms=2000",
					"tandem.failover.reachability-check-interval=200ms", "tandem.transaction.enabled=false",
					"tandem.coordinator.data-dir=" + this.dataDir);
	}

}
