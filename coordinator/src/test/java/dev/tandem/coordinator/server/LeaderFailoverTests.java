package dev.tandem.coordinator.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.testing.CoordinatorCluster;
import dev.tandem.coordinator.testing.DecisionWriters;
import dev.tandem.coordinator.testing.NetworkPartition;
import dev.tandem.transaction.Decision;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Leader loss under load on a 3-peer coordinator in one JVM: every decision a client saw
 * acknowledged is in the log exactly once, and clients carry on with the new leader. The
 * leader is first cut off from its peers by a {@link NetworkPartition} (it still hears
 * clients, so some writes reach a log they can never commit in), then stopped, like a crash.
 */
class LeaderFailoverTests {

	private static final Logger logger = LoggerFactory.getLogger(LeaderFailoverTests.class);

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	@TempDir
	Path dataDir;

	@AutoClose
	private NetworkPartition partition;

	@AutoClose
	private CoordinatorCluster cluster;

	@Test
	void leaderLostUnderLoadLosesNoAcknowledgedDecisionAndDuplicatesNone() {
		this.partition = NetworkPartition.install();
		this.cluster = CoordinatorCluster.start(this.dataDir, 3);
		String leader = this.cluster.awaitLeader(TIMEOUT);
		// Two clients, as two app instances; one starts at a follower and is redirected
		RatisDecisionLog first = this.cluster.client((builder) -> builder.initialLeader(leader)
			.requestTimeout(Duration.ofSeconds(1)));
		RatisDecisionLog second = this.cluster.client((builder) -> builder
			.initialLeader(this.cluster.othersThan(leader).get(0))
			.requestTimeout(Duration.ofSeconds(1)));
		DecisionWriters writers = DecisionWriters.start(List.of(first, second), 8, Duration.ofSeconds(5));
		await().atMost(TIMEOUT).until(() -> writers.acknowledged() >= 500);

		long ackedAtLoss = writers.acknowledged();
		long lossNanos = System.nanoTime();
		this.partition.isolate(leader);
		this.cluster.stop(leader);
		this.partition.heal();
		await().atMost(TIMEOUT).until(() -> writers.acknowledged() >= ackedAtLoss + 500);
		writers.close();
		String newLeader = this.cluster.awaitLeader(TIMEOUT);
		assertThat(newLeader).isNotEqualTo(leader);
		// The old leader returns: entries it appended but never committed are replaced
		this.cluster.restart(leader);

		assertThat(writers.unresolved()).isEmpty();
		assertThat(writers.changedDecisions()).isZero();
		Map<String, List<Decision>> acknowledged = writers.acknowledgedByOwner();
		long total = acknowledged.values().stream().mapToLong(List::size).sum();
		RatisDecisionLog reader = this.cluster.client((builder) -> builder.initialLeader(newLeader));
		acknowledged.forEach((owner, decisions) -> {
			List<Decision> present = reader.inDoubt(owner, TIMEOUT);
			assertThat(present).as("decisions of %s", owner).doesNotHaveDuplicates();
			assertThat(present).as("decisions of %s", owner).containsExactlyInAnyOrderElementsOf(decisions);
		});
		await().atMost(TIMEOUT)
			.untilAsserted(() -> assertThat(this.cluster.statuses()).allSatisfy((status) -> assertThat(
					this.cluster.server(status.peerId()).stateMachine().counts().decided())
				.as("decisions on %s", status.peerId())
				.isEqualTo(total)));

		List<Long> acks = writers.ackNanos();
		long firstAfterLoss = acks.stream().filter((nanos) -> nanos > lossNanos).findFirst().orElseThrow();
		List<String> clientStats = new ArrayList<>();
		for (RatisDecisionLog client : List.of(first, second)) {
			clientStats.add(client.leaderRedirects() + " redirects/" + client.failedAttempts() + " failed attempts");
		}
		logger.info("{} decisions acknowledged, each present once on all 3 peers after '{}' was cut off, stopped and "
				+ "restarted; first acknowledgement {} ms after the loss, longest gap between acknowledgements {} ms; "
				+ "{} unknown outcomes retried; clients: {}", total, leader,
				TimeUnit.NANOSECONDS.toMillis(firstAfterLoss - lossNanos), writers.longestGap().toMillis(),
				writers.unknownOutcomes(), clientStats);
	}

}
