package dev.tandem.test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link KafkaProcessCluster} on one real cluster (1 controller, 3 brokers, each in
 * its own JVM) shared by the tests of the class.
 *
 * @author Tandem
 */
class KafkaProcessClusterTests {

	private static final Duration CONVERGE = Duration.ofSeconds(60);

	private static KafkaProcessCluster cluster;

	@BeforeAll
	static void startOneControllerAndThreeBrokers() {
		cluster = KafkaProcessCluster.builder().name("process").latencyProxies(true).build().start();
	}

	/**
	 * Closing is part of the contract: no node process and no file may outlive the cluster.
	 */
	@AfterAll
	static void closeKillsEveryNodeAndDeletesTheDirectory() {
		Path directory = cluster.directory();
		assertThat(directory).isNotNull().isDirectory();
		cluster.close();
		assertThat(ProcessHandle.current().children().filter(ProcessHandle::isAlive)).isEmpty();
		assertThat(directory).doesNotExist();
		cluster.close();
	}

	@Test
	void everyBrokerRunsInItsOwnProcessOnItsOwnPort() {
		assertThat(cluster.brokerIds()).containsExactly(0, 1, 2);
		assertThat(cluster.runningBrokerIds()).containsExactly(0, 1, 2);
		List<Integer> ports = cluster.brokerIds().stream().map(cluster::port).toList();
		assertThat(ports).doesNotHaveDuplicates();
		assertThat(cluster.bootstrapServers()).isEqualTo(
				String.join(",", ports.stream().map((port) -> "localhost:" + port).toList()));
		// the controller and the three brokers
		assertThat(ProcessHandle.current().children().filter(ProcessHandle::isAlive).count()).isEqualTo(4);
	}

	@Test
	void acknowledgedRecordsSurviveAKilledLeaderAndTheBrokerComesBackOnItsPort() throws Exception {
		cluster.createTopic("killed-leader", 1, (short) 3, Map.of("min.insync.replicas", "2"));
		TopicPartition partition = new TopicPartition("killed-leader", 0);
		produce("killed-leader", 0, 50);
		int killed = cluster.leader(partition);
		int port = cluster.port(killed);
		cluster.kill(killed);
		assertThat(cluster.runningBrokerIds()).doesNotContain(killed);
		assertThat(accepts(port)).isFalse();
		await().atMost(CONVERGE).until(() -> {
			int leader = cluster.leader(partition);
			return leader != killed && leader != KafkaProcessCluster.NO_LEADER;
		});
		produce("killed-leader", 50, 50);
		assertThat(ReadCommitted.values(cluster.bootstrapServers(), "killed-leader"))
			.containsExactlyElementsOf(IntStream.range(0, 100).mapToObj(Integer::toString).toList());
		cluster.restart(killed);
		assertThat(cluster.port(killed)).isEqualTo(port);
		assertThat(cluster.runningBrokerIds()).contains(killed);
		await().atMost(CONVERGE).untilAsserted(() -> assertThat(cluster.inSyncReplicas(partition)).contains(killed));
	}

	@Test
	void gracefulStopMovesLeadershipAtOnceAndRestartKeepsThePort() throws Exception {
		cluster.createTopic("graceful", 1, (short) 3);
		TopicPartition partition = new TopicPartition("graceful", 0);
		int stopped = cluster.leader(partition);
		int port = cluster.port(stopped);
		cluster.stop(stopped);
		// a controlled shutdown hands leadership over before the process exits
		assertThat(cluster.leader(partition)).isNotEqualTo(stopped).isNotEqualTo(KafkaProcessCluster.NO_LEADER);
		assertThat(cluster.inSyncReplicas(partition)).doesNotContain(stopped);
		cluster.restart(stopped);
		assertThat(cluster.port(stopped)).isEqualTo(port);
		await().atMost(CONVERGE).untilAsserted(() -> assertThat(cluster.inSyncReplicas(partition)).contains(stopped));
	}

	@Test
	void replacingAllBrokersMovesThemToTheGivenPortsWithTheirData() throws Exception {
		cluster.createTopic("replaced", 3, (short) 3);
		produce("replaced", 0, 30);
		String oldBootstrap = cluster.bootstrapServers();
		String oldClientBootstrap = cluster.clientBootstrapServers();
		List<Integer> oldPorts = cluster.brokerIds().stream().map(cluster::port).toList();
		List<Integer> newPorts = KafkaProcessCluster.freePorts(3);
		assertThat(newPorts).doesNotContainAnyElementsOf(oldPorts);
		String newBootstrap = cluster.replaceAllBrokers(newPorts);
		assertThat(newBootstrap).isNotEqualTo(oldBootstrap).isEqualTo(cluster.bootstrapServers());
		assertThat(cluster.brokerIds().stream().map(cluster::port).toList()).isEqualTo(newPorts);
		assertThat(oldPorts).noneMatch(KafkaProcessClusterTests::accepts);
		assertThat(ReadCommitted.values(newBootstrap, "replaced")).hasSize(30)
			.containsExactlyInAnyOrderElementsOf(IntStream.range(0, 30).mapToObj(Integer::toString).toList());
		// the proxies moved with their brokers: the old client addresses are gone too
		assertThat(cluster.clientBootstrapServers()).isNotEqualTo(oldClientBootstrap);
		assertThat(ReadCommitted.values(cluster.clientBootstrapServers(), "replaced")).hasSize(30);
	}

	@Test
	void clientsReachTheBrokersThroughTheLatencyProxiesAndPayTheRoundTrip() throws Exception {
		cluster.createTopic("delayed", 3, (short) 3);
		List<Integer> proxyPorts = cluster.brokerIds().stream().map((id) -> cluster.latencyProxy(id).port()).toList();
		assertThat(cluster.clientBootstrapServers())
			.isEqualTo(String.join(",", proxyPorts.stream().map((port) -> "localhost:" + port).toList()));
		// a client connected through a proxy is told the proxies' addresses, never the brokers'
		try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
				cluster.clientBootstrapServers()))) {
			assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).extracting(Node::port)
				.containsExactlyInAnyOrderElementsOf(proxyPorts);
		}
		Map<String, Object> properties = new HashMap<>();
		properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.clientBootstrapServers());
		properties.put(ProducerConfig.ACKS_CONFIG, "all");
		long forwardedBefore = cluster.brokerIds().stream().mapToLong((id) -> cluster.latencyProxy(id).forwardedBytes()).sum();
		cluster.clientLatency(Duration.ofMillis(100), Duration.ZERO);
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(),
				new StringSerializer())) {
			producer.send(new ProducerRecord<>("delayed", 0, null, "warm-up")).get(60, TimeUnit.SECONDS);
			long started = System.nanoTime();
			producer.send(new ProducerRecord<>("delayed", 0, null, "timed")).get(60, TimeUnit.SECONDS);
			// a lower bound: the produce request and its response each wait 100 ms in the proxy
			assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
		}
		finally {
			cluster.clientLatency(Duration.ZERO, Duration.ZERO);
		}
		assertThat(cluster.brokerIds().stream().mapToLong((id) -> cluster.latencyProxy(id).forwardedBytes()).sum())
			.isGreaterThan(forwardedBefore);
		assertThat(ReadCommitted.values(cluster.bootstrapServers(), "delayed")).containsExactly("warm-up", "timed");
	}

	@Test
	void moveLeadershipOfATopicGivesEveryPartitionAnotherInSyncLeader() {
		cluster.createTopic("moved", 6, (short) 3);
		Map<TopicPartition, Integer> before = new HashMap<>();
		for (int i = 0; i < 6; i++) {
			before.put(new TopicPartition("moved", i), cluster.leader(new TopicPartition("moved", i)));
		}
		Map<TopicPartition, Integer> moved = cluster.moveLeadership("moved");
		assertThat(moved).hasSize(6);
		moved.forEach((partition, leader) -> {
			assertThat(leader).isNotEqualTo(before.get(partition));
			assertThat(cluster.leader(partition)).isEqualTo(leader);
			assertThat(cluster.replicas(partition).get(0)).isEqualTo(leader);
		});
	}

	@Test
	void rollingRestartAppliesChangedPropertiesToEveryBroker() throws Exception {
		cluster.rollingRestart(Map.of("replica.fetch.backoff.ms", 1000));
		assertThat(cluster.runningBrokerIds()).containsExactly(0, 1, 2);
		for (int brokerId : cluster.brokerIds()) {
			ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(brokerId));
			assertThat(cluster.admin().describeConfigs(List.of(broker)).all().get().get(broker)
				.get("replica.fetch.backoff.ms").value()).isEqualTo("1000");
		}
	}

	@Test
	void operationsRejectUnknownBrokersAndBadPortLists() {
		assertThatIllegalArgumentException().isThrownBy(() -> cluster.kill(7)).withMessageContaining("no broker 7");
		assertThatIllegalArgumentException().isThrownBy(() -> cluster.replaceAllBrokers(List.of(20_000)))
			.withMessageContaining("3 brokers but 1 ports");
		assertThatIllegalArgumentException().isThrownBy(() -> KafkaProcessCluster.freePorts(0));
		assertThatIllegalArgumentException().isThrownBy(() -> cluster.clientLatency(Duration.ofMillis(-1), Duration.ZERO))
			.withMessageContaining("oneWay must be between 0 and 10000 ms");
	}

	private static void produce(String topic, int from, int count) throws Exception {
		Map<String, Object> properties = new HashMap<>();
		properties.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
		properties.put(ProducerConfig.ACKS_CONFIG, "all");
		properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(),
				new StringSerializer())) {
			List<Future<RecordMetadata>> sends = new ArrayList<>();
			for (int i = from; i < from + count; i++) {
				sends.add(producer.send(new ProducerRecord<>(topic, Integer.toString(i))));
			}
			for (Future<RecordMetadata> send : sends) {
				send.get(60, TimeUnit.SECONDS);
			}
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

}
