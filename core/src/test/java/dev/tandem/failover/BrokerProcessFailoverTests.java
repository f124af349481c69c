package dev.tandem.failover;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.KafkaProcessCluster;
import dev.tandem.test.KafkaProcessClustersExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failover when brokers die or move rather than step down: a real 3-broker cluster whose
 * brokers run as separate processes ({@link KafkaProcessCluster}: replication factor 3,
 * {@code min.insync.replicas=2}, {@code broker.session.timeout.ms=2000}), so that a broker
 * can be killed with {@code SIGKILL} and every broker can be moved to a new port.
 * <p>
 * The graceful twins (stop, leadership move) are in {@link LeaderFailoverTests}; the checks
 * are shared ({@link FailoverAssertions}).
 */
class BrokerProcessFailoverTests {

	private static final String CLUSTER = "east";

	/**
	 * A quarter of the profile's {@code delivery.timeout.ms} (120 s): a killed leader is
	 * fenced after {@code broker.session.timeout.ms}, and failover must not wait for records
	 * to expire. Generous for a loaded 2-core machine.
	 */
	private static final Duration FAILOVER_BOUND = Duration.ofMillis(FailoverProfile.DELIVERY_TIMEOUT_MS / 4);

	/** Moving every broker stops three processes and starts three new ones. */
	private static final Duration REPLACEMENT_BOUND = Duration.ofMinutes(3);

	@RegisterExtension
	static final KafkaProcessClustersExtension kafka = new KafkaProcessClustersExtension(
			KafkaProcessCluster.builder().name(CLUSTER));

	private static KafkaProcessCluster cluster;

	private final LeaderCacheRegistry registry = new LeaderCacheRegistry();

	private final RecordingListener events = new RecordingListener();

	@BeforeAll
	static void findCluster() {
		cluster = kafka.cluster(CLUSTER);
	}

	BrokerProcessFailoverTests() {
		this.registry.addListener(this.events);
	}

	@AfterEach
	void restartKilledBrokers() {
		for (Integer brokerId : cluster.brokerIds()) {
			if (!cluster.runningBrokerIds().contains(brokerId)) {
				cluster.restart(brokerId);
			}
		}
	}

	@Test
	void producerKeepsWorkingAfterItsPartitionLeaderIsKilled() throws Exception {
		TopicPartition partition = createTopic("killed-leader");
		try (SteadyProducer producer = steadyProducer(partition, cluster.bootstrapServers(), Map.of())) {
			FailoverAssertions.awaitAcknowledged(producer, 100, FAILOVER_BOUND);
			PartitionLeaderDescriptor before = producer.cache().partition(partition).orElseThrow();
			int oldLeader = cluster.leader(partition);
			assertThat(before.leaderId()).isEqualTo(oldLeader);
			cluster.kill(oldLeader);
			FailoverAssertions.awaitAcknowledged(producer, producer.acknowledged() + 200, FAILOVER_BOUND);
			producer.stop();
			int newLeader = cluster.leader(partition);
			assertThat(newLeader).isNotEqualTo(oldLeader).isNotEqualTo(KafkaProcessCluster.NO_LEADER);
			FailoverAssertions.assertFailedOver(producer, partition, before, newLeader, this.events, FAILOVER_BOUND);
			assertThat(producer.cache().reachability()).isEqualTo(BrokerReachability.REACHABLE);
			FailoverAssertions.assertEveryAcknowledgedRecordOnceAndInOrder(producer, cluster.bootstrapServers(),
					partition);
		}
	}

	/**
	 * Every broker moves to a new port (a whole cluster rescheduled under new addresses). A
	 * producer whose {@code bootstrap.servers} also lists the new addresses rebootstraps
	 * (KIP-899, {@code metadata.recovery.strategy=rebootstrap} from the profile) and carries on
	 * with nothing lost; one that knows only the old addresses cannot recover, and its leader
	 * cache says so ({@link BrokerReachability#UNREACHABLE}, logged) once every old broker is
	 * gone, before its first record expires after {@code delivery.timeout.ms}.
	 */
	@Test
	void afterEveryBrokerIsReplacedAProducerThatCanReachTheNewBrokersRecoversAndOneThatCannotSaysNoBrokerAnswers()
			throws Exception {
		TopicPartition recoveringPartition = createTopic("replaced-recovering");
		TopicPartition strandedPartition = createTopic("replaced-stranded");
		List<Integer> newPorts = KafkaProcessCluster.freePorts(cluster.brokerIds().size());
		String oldAddresses = cluster.bootstrapServers();
		String newAddresses = newPorts.stream().map((port) -> "localhost:" + port).collect(Collectors.joining(","));
		List<Integer> oldPorts = cluster.brokerIds().stream().map(cluster::port).toList();
		// the stranded producer gives up on a silent request after 3 s and on a record after 40 s
		Map<String, Object> impatient = Map.of(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, 3000,
				ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 40_000);
		try (SteadyProducer recovering = steadyProducer(recoveringPartition, oldAddresses + "," + newAddresses,
				Map.of()); SteadyProducer stranded = steadyProducer(strandedPartition, oldAddresses, impatient)) {
			FailoverAssertions.awaitAcknowledged(recovering, 100, FAILOVER_BOUND);
			FailoverAssertions.awaitAcknowledged(stranded, 100, FAILOVER_BOUND);
			CompletableFuture<String> replacement = CompletableFuture
				.supplyAsync(() -> cluster.replaceAllBrokers(newPorts));
			await().atMost(REPLACEMENT_BOUND).until(() -> oldPorts.stream().noneMatch(BrokerProcessFailoverTests::accepts));
			// every old broker is gone; the cache is checked as an actuator poll would
			await().atMost(FAILOVER_BOUND)
				.pollInterval(Duration.ofMillis(200))
				.until(() -> stranded.cache().reachability() == BrokerReachability.UNREACHABLE);
			// reported before the first record expired, not by the expiry
			assertThat(stranded.failures()).isEmpty();
			assertThat(replacement.get(REPLACEMENT_BOUND.toMillis(), TimeUnit.MILLISECONDS)).isEqualTo(newAddresses);

			FailoverAssertions.awaitAcknowledged(recovering, recovering.acknowledged() + 200, FAILOVER_BOUND);
			recovering.stop();
			assertThat(recovering.failures()).isEmpty();
			assertThat(recovering.cache().reachability()).isEqualTo(BrokerReachability.REACHABLE);
			assertThat(recovering.cache().partition(recoveringPartition).orElseThrow().leaderEndpoint())
				.isIn(newPorts.stream().map((port) -> "localhost:" + port).toList());
			FailoverAssertions.assertEveryAcknowledgedRecordOnceAndInOrder(recovering, newAddresses,
					recoveringPartition);

			await().atMost(Duration.ofMinutes(1)).until(() -> !stranded.failures().isEmpty());
			ClientLeadersDescriptor described = stranded.cache().describe();
			assertThat(described.brokers()).isEqualTo(BrokerReachability.UNREACHABLE);
			assertThat(described.unreachableSince()).isNotNull();
			assertThat(described.unreachableSince().toEpochMilli()).isLessThan(stranded.firstFailureMs());
			assertThat(stranded.failures()).allSatisfy((failure) -> assertThat(failure)
				.isInstanceOf(TimeoutException.class)
				.hasMessageContaining(strandedPartition.toString()));
			PartitionLeaderDescriptor strandedPartitionState = stranded.cache()
				.partition(strandedPartition)
				.orElseThrow();
			assertThat(strandedPartitionState.failures()).isPositive();
			assertThat(strandedPartitionState.lastError()).startsWith("TimeoutException");
			stranded.closeNow();
		}
	}

	private static boolean accepts(int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress("localhost", port), 1000);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static TopicPartition createTopic(String topic) {
		cluster.createTopic(topic, 1, (short) 3);
		return new TopicPartition(topic, 0);
	}

	private SteadyProducer steadyProducer(TopicPartition partition, String bootstrapServers,
			Map<String, Object> overrides) {
		Map<String, Object> properties = new HashMap<>();
		properties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		properties.putAll(overrides);
		return new SteadyProducer(this.registry, CLUSTER, FailoverProfile.standard().producerProperties(properties),
				partition);
	}

}
