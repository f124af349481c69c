package dev.tandem.test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link EmbeddedKafkaClusters} and {@link EmbeddedKafkaCluster} on two real
 * 3-broker clusters shared by all tests of the class.
 *
 * @author Tandem
 */
class EmbeddedKafkaClustersTests {

	private static final Logger logger = LoggerFactory.getLogger(EmbeddedKafkaClustersTests.class);

	private static EmbeddedKafkaClusters clusters;

	@BeforeAll
	static void startTwoClustersOfThreeBrokers() {
		long started = System.nanoTime();
		clusters = EmbeddedKafkaClusters.builder().cluster("east", 3).cluster("west", 3).build().start();
		logger.info("Measured: two 3-broker clusters started in {} ms",
				Duration.ofNanos(System.nanoTime() - started).toMillis());
	}

	@AfterAll
	static void closeClusters() {
		long started = System.nanoTime();
		clusters.close();
		logger.info("Measured: two 3-broker clusters closed in {} ms",
				Duration.ofNanos(System.nanoTime() - started).toMillis());
	}

	@Test
	void clustersAreIndependent() throws Exception {
		EmbeddedKafkaCluster east = clusters.cluster("east");
		EmbeddedKafkaCluster west = clusters.cluster("west");
		east.createTopic("only-on-east", 1, (short) 3);
		assertThat(east.admin().listTopics().names().get()).contains("only-on-east");
		assertThat(west.admin().listTopics().names().get()).doesNotContain("only-on-east");
		assertThat(east.admin().describeCluster().clusterId().get())
			.isNotEqualTo(west.admin().describeCluster().clusterId().get());
		assertThat(east.bootstrapServers()).isNotEqualTo(west.bootstrapServers());
		assertThat(clusters.bootstrapServers()).containsExactly(Map.entry("east", east.bootstrapServers()),
				Map.entry("west", west.bootstrapServers()));
		assertThat(east.brokerIds()).containsExactly(0, 1, 2);
		assertThat(west.brokerIds()).containsExactly(0, 1, 2);
	}

	@Test
	void recordsRoundTripOnEachCluster() throws Exception {
		for (EmbeddedKafkaCluster cluster : clusters.clusters()) {
			cluster.createTopic("round-trip", 3, (short) 3);
			KafkaTestRecords.produce(cluster, "round-trip", 20);
			List<ConsumerRecord<String, String>> records = KafkaTestRecords.consume(cluster, "round-trip", 20);
			assertThat(records).hasSize(20);
			assertThat(records).extracting(ConsumerRecord::value).doesNotHaveDuplicates();
		}
	}

	@Test
	void clusterKeepsServingAcksAllWhileABrokerIsDownAndTheBrokerRejoinsTheIsrAfterRestart() throws Exception {
		EmbeddedKafkaCluster east = clusters.cluster("east");
		east.createTopic("broker-down", 3, (short) 3, Map.of("min.insync.replicas", "2"));
		TopicPartition partition = new TopicPartition("broker-down", 0);
		int stopped = east.leader(partition);
		east.stopBroker(stopped);
		assertThat(east.runningBrokerIds()).hasSize(2).doesNotContain(stopped);
		assertThat(east.leader(partition)).isNotEqualTo(stopped).isNotEqualTo(EmbeddedKafkaCluster.NO_LEADER);
		assertThat(east.inSyncReplicas(partition)).hasSize(2).doesNotContain(stopped);
		List<RecordMetadata> acknowledged = KafkaTestRecords.produce(east, "broker-down", 30);
		assertThat(acknowledged).hasSize(30);
		long restarting = System.nanoTime();
		east.restartBroker(stopped);
		logger.info("Measured: broker {} of cluster 'east' restarted (registered and unfenced) in {} ms", stopped,
				Duration.ofNanos(System.nanoTime() - restarting).toMillis());
		assertThat(east.runningBrokerIds()).containsExactly(0, 1, 2);
		await().atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(List.of(0, 1, 2))
				.allSatisfy((p) -> assertThat(east.inSyncReplicas(new TopicPartition("broker-down", p)))
					.contains(stopped)));
		logger.info("Measured: broker {} of cluster 'east' back in the ISR of every partition {} ms after restart",
				stopped, Duration.ofNanos(System.nanoTime() - restarting).toMillis());
		assertThat(KafkaTestRecords.consume(east, "broker-down", 30)).hasSize(30);
	}

	@Test
	void moveLeadershipMakesTheRequestedBrokerTheLeader() {
		EmbeddedKafkaCluster west = clusters.cluster("west");
		west.createTopic("moved-partition", 2, (short) 3);
		TopicPartition partition = new TopicPartition("moved-partition", 0);
		int previous = west.leader(partition);
		int target = west.replicas(partition).stream().filter((id) -> id != previous).findFirst().orElseThrow();
		west.moveLeadership(partition, target);
		assertThat(west.leader(partition)).isEqualTo(target);
		assertThat(west.replicas(partition)).hasSize(3).first().isEqualTo(target);
	}

	@Test
	void moveLeadershipOfATopicGivesEveryPartitionAnotherInSyncLeader() {
		EmbeddedKafkaCluster west = clusters.cluster("west");
		west.createTopic("moved-topic", 3, (short) 3);
		Map<TopicPartition, Integer> previous = Map.of(new TopicPartition("moved-topic", 0),
				west.leader(new TopicPartition("moved-topic", 0)), new TopicPartition("moved-topic", 1),
				west.leader(new TopicPartition("moved-topic", 1)), new TopicPartition("moved-topic", 2),
				west.leader(new TopicPartition("moved-topic", 2)));
		Map<TopicPartition, Integer> moved = west.moveLeadership("moved-topic");
		assertThat(moved).hasSize(3);
		moved.forEach((partition, leader) -> {
			assertThat(leader).isNotEqualTo(previous.get(partition));
			assertThat(west.leader(partition)).isEqualTo(leader);
		});
	}

	@Test
	void moveLeadershipRejectsABrokerThatIsNotAReplica() {
		EmbeddedKafkaCluster west = clusters.cluster("west");
		west.createTopic("single-replica", 1, (short) 1);
		TopicPartition partition = new TopicPartition("single-replica", 0);
		int notAReplica = west.brokerIds().stream().filter((id) -> id != west.leader(partition)).findFirst().orElseThrow();
		assertThatIllegalArgumentException().isThrownBy(() -> west.moveLeadership(partition, notAReplica))
			.withMessageContaining("is not a replica");
		assertThatIllegalArgumentException().isThrownBy(() -> west.moveLeadership("single-replica"))
			.withMessageContaining("single replica");
	}

	@Test
	void unknownClusterOrBrokerIsRejected() {
		assertThatIllegalArgumentException().isThrownBy(() -> clusters.cluster("north"))
			.withMessageContaining("east")
			.withMessageContaining("west");
		assertThatIllegalArgumentException().isThrownBy(() -> clusters.cluster("east").stopBroker(7))
			.withMessageContaining("no broker 7");
	}

}
