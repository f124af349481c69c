package dev.tandem.mirror;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import dev.tandem.mirror.app.MirrorHealthIndicator;
import dev.tandem.mirror.app.MirrorProperties;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactionManager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The mirror's lag is live: on real brokers, while the target cluster is down, the lag grows with
 * the records waiting on the source (it is read from the source alone, so a target call that
 * blocks cannot freeze it) and the health turns DOWN past its threshold; once the target is
 * back, everything is mirrored once and the lag returns to 0.
 */
class MirrorLagTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	// Stops a broker: clusters of its own.
	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = EmbeddedKafkaClustersExtension.perClass(ClusterPreset.EAST1_WEST1);

	// one coordinator for every manager here: a shared log, whose leases see a duplicate instance
	@RegisterExtension
	static final MirrorTestFixture fixture = MirrorTestFixture.eastToWest(kafka, "mirror-lag-tests");

	@Test
	void lagGrowsWithTheWaitingRecordsWhileTheTargetIsDownAndHealthTurnsDownPastItsThreshold() throws Exception {
		fixture.east().createTopic("lag-orders", 1, (short) 1);
		produce(0, 100);
		CrossClusterTransactionManager manager = fixture.manager("lag-0")
			.commitTimeout(Duration.ofSeconds(3))
			.build();
		manager.start();
		MirrorSettings settings = MirrorSettings.builder("east", List.of("west"))
			.topics(List.of("lag-orders"))
			.groups(List.of("readers")) // so that the follower calls the target at every sync
			.consumerGroup("mirror-lag-tests")
			.groupSyncInterval(Duration.ofMillis(200))
			.topicRefreshInterval(Duration.ofSeconds(1))
			.build();
		MirrorProperties.Health thresholds = new MirrorProperties.Health();
		thresholds.setMaxLagRecords(100);
		try (manager; Mirror mirror = new Mirror(manager, settings)) {
			mirror.start();
			MirrorHealthIndicator health = new MirrorHealthIndicator(mirror, thresholds);
			await().atMost(WAIT).until(() -> mirror.status().recordsMirrored() == 100 && mirror.status().lagRecords() == 0
					&& health.health(true).getStatus().equals(Status.UP));

			int broker = fixture.west().brokerIds().get(0);
			fixture.west().stopBroker(broker);
			try {
				produce(100, 250);
				await().atMost(WAIT).until(() -> mirror.status().lagRecords() == 150);
				produce(250, 400);
				await().atMost(WAIT).until(() -> mirror.status().lagRecords() == 300);
				Health down = health.health(true);
				assertThat(down.getStatus()).isEqualTo(Status.DOWN);
				assertThat(down.getDetails()).containsEntry("lagRecords", 300L);
				assertThat(mirror.status().partitions()).singleElement()
					.satisfies((partition) -> assertThat(partition.sourceEndOffset()).isEqualTo(400));
			}
			finally {
				fixture.west().restartBroker(broker);
			}
			await().atMost(WAIT).until(() -> mirror.status().lagRecords() == 0
					&& health.health(true).getStatus().equals(Status.UP));
			// Lag 0: the last copies' transaction committed. Its commit markers are written after
			// the commit's answer, so a read_committed reader gets them a moment later; a transaction
			// left open would hold them back for the transaction timeout (15 min), far past this wait.
			await().atMost(Duration.ofSeconds(10))
				.until(() -> ReadCommitted.values(fixture.west().bootstrapServers(), "east.lag-orders").size() >= 400);
			assertThat(ReadCommitted.values(fixture.west().bootstrapServers(), "east.lag-orders")).hasSize(400)
				.doesNotHaveDuplicates();
		}
	}

	private static void produce(int from, int to) {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", fixture.east().bootstrapServers()), new StringSerializer(), new StringSerializer())) {
			for (int i = from; i < to; i++) {
				producer.send(new ProducerRecord<>("lag-orders", 0, "k" + i, "v" + i));
			}
			producer.flush();
		}
	}

}
