package dev.tandem.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.kafka.core.KafkaTemplate;

import dev.tandem.actuate.KafkaLeadersEndpoint;
import dev.tandem.autoconfigure.actuate.TandemActuatorAutoConfiguration;
import dev.tandem.autoconfigure.coordinator.TandemCoordinatorAutoConfiguration;
import dev.tandem.autoconfigure.failover.TandemFailoverAutoConfiguration;
import dev.tandem.autoconfigure.kafka.TandemKafkaAutoConfiguration;
import dev.tandem.autoconfigure.transaction.TandemTransactionAutoConfiguration;
import dev.tandem.failover.BrokerReachability;
import dev.tandem.failover.ClientType;
import dev.tandem.failover.ClusterLeadersDescriptor;
import dev.tandem.failover.PartitionLeaderDescriptor;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.transaction.CrossClusterTransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code /actuator/kafkaleaders} on a real 3-broker cluster: the leader cache of a Tandem client
 * shows a moved leader, with a higher leader epoch, within a second of the client's next send,
 * and under steady traffic within a second of the cluster reporting the move.
 */
class KafkaLeadersEndpointTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST3);

	@TempDir
	Path dataDir;

	@BeforeAll
	static void createTopics() {
		kafka.cluster("east").createTopic("leaders", 1, (short) 3);
		kafka.cluster("east").createTopic("steady", 1, (short) 3);
	}

	@Test
	void leaderMoveShowsWithinASecondWithAHigherEpoch() {
		contextRunner().run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(KafkaLeadersEndpoint.class);
			KafkaLeadersEndpoint endpoint = context.getBean(KafkaLeadersEndpoint.class);
			@SuppressWarnings("unchecked")
			KafkaTemplate<String, String> template = context.getBean("eastKafkaTemplate", KafkaTemplate.class);
			template.send("leaders", "k", "before").get();
			TopicPartition partition = new TopicPartition("leaders", 0);
			PartitionLeaderDescriptor before = await().atMost(Duration.ofSeconds(5))
				.until(() -> leader(endpoint, partition), Optional::isPresent)
				.orElseThrow();
			assertThat(before.leaderId()).isEqualTo(kafka.cluster("east").leader(partition));
			assertThat(endpoint.leaders().readiness()).containsKey("east");

			int newLeader = kafka.cluster("east").replicas(partition).stream()
				.filter((id) -> !id.equals(before.leaderId())).findFirst().orElseThrow();
			kafka.cluster("east").moveLeadership(partition, newLeader);
			template.send("leaders", "k", "after").get();
			await().atMost(Duration.ofSeconds(1)).untilAsserted(() -> {
				PartitionLeaderDescriptor after = leader(endpoint, partition).orElseThrow();
				assertThat(after.leaderId()).isEqualTo(newLeader);
				assertThat(after.leaderEpoch()).isNotNull().isGreaterThan(before.leaderEpoch());
			});
		});
	}

	/**
	 * Under steady traffic the endpoint needs no help from the test: within a second of the
	 * cluster reporting the new leader (every broker knows it), it shows it.
	 */
	@Test
	void underSteadyTrafficALeaderMoveShowsWithinASecondOfTheClusterReportingIt() {
		contextRunner().run((context) -> {
			KafkaLeadersEndpoint endpoint = context.getBean(KafkaLeadersEndpoint.class);
			@SuppressWarnings("unchecked")
			KafkaTemplate<String, String> template = context.getBean("eastKafkaTemplate", KafkaTemplate.class);
			TopicPartition partition = new TopicPartition("steady", 0);
			AtomicBoolean sending = new AtomicBoolean(true);
			AtomicLong acknowledged = new AtomicLong();
			List<Throwable> failures = new CopyOnWriteArrayList<>();
			Thread sender = new Thread(() -> {
				while (sending.get()) {
					try {
						template.send("steady", 0, "k", "v").get(30, TimeUnit.SECONDS);
						acknowledged.incrementAndGet();
					}
					catch (Exception ex) {
						failures.add(ex);
						return;
					}
				}
			}, "steady-sender");
			sender.start();
			try {
				await().atMost(Duration.ofSeconds(30))
					.until(() -> acknowledged.get() > 20 && leader(endpoint, partition).isPresent());
				PartitionLeaderDescriptor before = leader(endpoint, partition).orElseThrow();
				int newLeader = kafka.cluster("east").replicas(partition).stream()
					.filter((id) -> !id.equals(before.leaderId())).findFirst().orElseThrow();
				kafka.cluster("east").moveLeadership(partition, newLeader);
				await().atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
					PartitionLeaderDescriptor after = leader(endpoint, partition).orElseThrow();
					assertThat(after.leaderId()).isEqualTo(newLeader);
					assertThat(after.leaderEpoch()).isNotNull().isGreaterThan(before.leaderEpoch());
				});
				assertThat(endpoint.cluster("east").leaders().clients())
					.allSatisfy((client) -> assertThat(client.brokers()).isEqualTo(BrokerReachability.REACHABLE));
			}
			finally {
				sending.set(false);
				sender.join(30_000);
			}
			assertThat(failures).isEmpty();
		});
	}

	/**
	 * The transactional producers of cross-cluster transactions, an app's busiest clients, are
	 * in the leader cache like any other producer of the cluster.
	 */
	@Test
	void transactionalProducersShowTheirLeaders() {
		contextRunner()
			.withPropertyValues("tandem.transaction.enabled=true", "tandem.transaction.id-prefix=leaders",
					"tandem.transaction.instance-id=leaders-tests")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				KafkaLeadersEndpoint endpoint = context.getBean(KafkaLeadersEndpoint.class);
				context.getBean(CrossClusterTransactionTemplate.class).execute((transaction) -> {
					transaction.send("east", new ProducerRecord<>("leaders", "k".getBytes(StandardCharsets.UTF_8),
							"in a transaction".getBytes(StandardCharsets.UTF_8)));
					return null;
				});
				TopicPartition partition = new TopicPartition("leaders", 0);
				ClusterLeadersDescriptor east = endpoint.topic("east", "leaders");
				assertThat(east).isNotNull();
				assertThat(east.clients()).filteredOn((client) -> client.clientType() == ClientType.PRODUCER)
					.anySatisfy((client) -> {
						assertThat(client.clientId()).contains("leaders.east");
						assertThat(client.partitions()).anySatisfy((leader) -> {
							assertThat(leader.partition()).isEqualTo(0);
							assertThat(leader.leaderId()).isEqualTo(kafka.cluster("east").leader(partition));
						});
					});
			});
	}

	@Test
	void aConfiguredClusterNoClientReachedYetAnswersWithNoClientsAndClustersKeepTheirConfiguredOrder() {
		contextRunner().withPropertyValues("tandem.clusters.quiet.bootstrap-servers=" + kafka.cluster("east").bootstrapServers())
			.run((context) -> {
				KafkaLeadersEndpoint endpoint = context.getBean(KafkaLeadersEndpoint.class);
				KafkaLeadersEndpoint.ClusterView quiet = endpoint.cluster("quiet");
				assertThat(quiet).isNotNull();
				assertThat(quiet.leaders().cluster()).isEqualTo("quiet");
				assertThat(quiet.leaders().clients()).isEmpty();
				assertThat(endpoint.topic("quiet", "leaders").clients()).isEmpty();
				assertThat(endpoint.leaders().leaders().clusters()).containsOnlyKeys("east", "quiet");
				assertThat(endpoint.leaders().leaders().clusters().keySet()).containsExactly("east", "quiet");
				assertThat(endpoint.cluster("nowhere")).isNull();
			});
	}

	private ApplicationContextRunner contextRunner() {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(TandemFailoverAutoConfiguration.class, TandemAutoConfiguration.class,
					TandemCoordinatorAutoConfiguration.class, TandemTransactionAutoConfiguration.class,
					TandemKafkaAutoConfiguration.class, TandemActuatorAutoConfiguration.class))
			.withPropertyValues("tandem.clusters.east.bootstrap-servers=" + kafka.cluster("east").bootstrapServers(),
					"tandem.transaction.enabled=false", "management.endpoints.web.exposure.include=kafkaleaders",
					"tandem.coordinator.data-dir=" + this.dataDir);
	}

	private static Optional<PartitionLeaderDescriptor> leader(KafkaLeadersEndpoint endpoint, TopicPartition partition) {
		ClusterLeadersDescriptor east = endpoint.topic("east", partition.topic());
		if (east == null) {
			return Optional.empty();
		}
		return east.clients().stream()
			.flatMap((client) -> client.partitions().stream())
			.filter((p) -> p.partition() == partition.partition() && p.leaderId() != null)
			.findFirst();
	}

}
