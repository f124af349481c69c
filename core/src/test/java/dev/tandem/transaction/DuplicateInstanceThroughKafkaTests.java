package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Instances that do not share a decision log (each its own, as with the embedded coordinator) on
 * a real 3-broker cluster: a second running instance with the same id is refused at start-up
 * through the heartbeat topic; a restart after a crash waits for the dead run's heartbeat to
 * expire; a restart after a clean close does not wait.
 */
class DuplicateInstanceThroughKafkaTests {

	private static final StringSerializer STRING = new StringSerializer();

	private static final Duration LEASE = Duration.ofMillis(1500);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST3);

	private final List<CrossClusterTransactionManager> managers = new ArrayList<>();

	private String topic = "";

	@BeforeEach
	void createTopic(TestInfo info) {
		this.topic = "t-" + info.getTestMethod().orElseThrow().getName();
		kafka.cluster("east").createTopic(this.topic, 3, (short) 3);
	}

	@AfterEach
	void closeManagers() {
		this.managers.forEach(CrossClusterTransactionManager::close);
	}

	/** A manager on a decision log of its own, as every instance has with the embedded coordinator. */
	private CrossClusterTransactionManager started() {
		Map<String, Object> east = new HashMap<>();
		east.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("east").bootstrapServers());
		CrossClusterTransactionManager manager = CrossClusterTransactionManager.builder()
			.cluster("east", east)
			.idPrefix("guard")
			.instanceId(this.topic)
			.decisionLog(new InMemoryDecisionLog())
			.commitTimeout(Duration.ofSeconds(10))
			.leaseTimeout(LEASE)
			.duplicateCheckThroughKafka(true)
			.build();
		this.managers.add(manager);
		manager.start();
		return manager;
	}

	private void commitOne(CrossClusterTransactionManager manager, String value) {
		CrossClusterTransaction txn = manager.begin();
		txn.send("east", new ProducerRecord<>(this.topic, "k", value), STRING, STRING);
		txn.commit();
	}

	@Test
	void aSecondRunningInstanceWithTheSameIdIsRefusedAtStartUp() {
		CrossClusterTransactionManager first = started();
		assertThatExceptionOfType(DuplicateInstanceException.class).isThrownBy(this::started)
			.satisfies((ex) -> assertThat(ex.getOwner()).isEqualTo(first.owner()))
			.withMessageContaining("tandem-instances");
		commitOne(first, "first-still-works");
		// commitTransaction() returns before the commit markers reach the partitions
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
				ReadCommitted.values(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("first-still-works"));
	}

	@Test
	void aRestartAfterACrashWaitsForTheDeadRunsHeartbeatAndAfterACleanCloseDoesNot() {
		started().abandon(); // kill -9: its last heartbeat stays, unrenewed
		CrossClusterTransactionManager restarted = started(); // not taken for a duplicate once it expired
		commitOne(restarted, "after-crash");
		restarted.close();
		CrossClusterTransactionManager again = started();
		commitOne(again, "after-clean-close");
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
				ReadCommitted.values(kafka.cluster("east").bootstrapServers(), this.topic))
			.containsExactly("after-crash", "after-clean-close"));
	}

}
