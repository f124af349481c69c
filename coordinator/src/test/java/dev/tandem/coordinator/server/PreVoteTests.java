package dev.tandem.coordinator.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.testing.CoordinatorCluster;
import dev.tandem.coordinator.testing.DecisionWriters;
import dev.tandem.coordinator.testing.NetworkPartition;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Pre-vote (Raft thesis §9.6; KIP-650/KIP-996 for KRaft) on a 3-peer coordinator in one JVM: a
 * follower cut off by a {@link NetworkPartition} while clients keep writing, then healed.
 */
class PreVoteTests {

	private static final Logger logger = LoggerFactory.getLogger(PreVoteTests.class);

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	/** At least ten election timeouts (of the upper bound). */
	private static final Duration ISOLATION = CoordinatorCluster.ELECTION_TIMEOUT_MAX.multipliedBy(10);

	@TempDir
	Path dataDir;

	@AutoClose
	private NetworkPartition partition;

	@AutoClose
	private CoordinatorCluster cluster;

	@Test
	void followerIsolatedForTenElectionTimeoutsNeitherDeposesTheLeaderNorRaisesTheTermAndCatchesUpAfterHealing() {
		this.partition = NetworkPartition.install();
		this.cluster = CoordinatorCluster.start(this.dataDir, 3);
		String leader = this.cluster.awaitLeader(TIMEOUT);
		String follower = this.cluster.othersThan(leader).get(0);
		long term = this.cluster.server(leader).currentTerm();
		RatisDecisionLog client = this.cluster.client((builder) -> builder.initialLeader(leader));
		DecisionWriters writers = DecisionWriters.start(List.of(client), 8, Duration.ofSeconds(5));
		await().atMost(TIMEOUT).until(() -> writers.acknowledged() >= 200);

		this.partition.isolate(follower);
		long ackedAtIsolation = writers.acknowledged();
		// Checked every 20 ms for ten election timeouts: same leader, same term on every peer
		await().during(ISOLATION)
			.atMost(ISOLATION.plus(TIMEOUT))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.cluster.statuses()
				.stream()
				.allMatch((status) -> status.term() == term
						&& (status.peerId().equals(follower) || leader.equals(status.leaderId()))));
		PeerStatus isolated = this.cluster.server(follower).status();
		PeerStatus leading = this.cluster.server(leader).status();
		long ackedDuringIsolation = writers.acknowledged() - ackedAtIsolation;
		logger.info("After {} ms of isolation: {} Raft requests held, {} decisions acknowledged meanwhile, "
				+ "isolated peer {} at applied index {} (leader at {})", ISOLATION.toMillis(),
				this.partition.heldRequests(), ackedDuringIsolation, isolated.role(), isolated.appliedIndex(),
				leading.appliedIndex());
		assertThat(this.partition.heldRequests()).isPositive();
		assertThat(ackedDuringIsolation).isPositive();
		assertThat(isolated.appliedIndex()).isLessThan(leading.appliedIndex());

		this.partition.heal();
		long leaderIndexAtHeal = this.cluster.server(leader).status().commitIndex();
		await().atMost(TIMEOUT).until(() -> this.cluster.server(follower).status().appliedIndex() >= leaderIndexAtHeal);
		long ackedAtHeal = writers.acknowledged();
		await().atMost(TIMEOUT).until(() -> writers.acknowledged() >= ackedAtHeal + 200);
		writers.close();

		assertThat(this.cluster.readyLeader()).contains(leader);
		assertThat(this.cluster.statuses()).allSatisfy((status) -> {
			assertThat(status.term()).as("term of %s", status.peerId()).isEqualTo(term);
			assertThat(status.leaderId()).as("leader seen by %s", status.peerId()).isEqualTo(leader);
		});
		assertThat(writers.unresolved()).isEmpty();
		assertThat(writers.changedDecisions()).isZero();
		long acknowledged = writers.acknowledged();
		await().atMost(TIMEOUT)
			.untilAsserted(() -> assertThat(this.cluster.statuses()).allSatisfy((status) -> assertThat(
					this.cluster.server(status.peerId()).stateMachine().counts().decided())
				.as("decisions on %s", status.peerId())
				.isEqualTo(acknowledged)));
		Duration longestGap = writers.longestGap();
		logger.info("{} decisions acknowledged ({} unknown outcomes retried); longest gap between acknowledged "
				+ "writes: {} ms", acknowledged, writers.unknownOutcomes(), longestGap.toMillis());
		assertThat(longestGap).isLessThan(Duration.ofSeconds(1));
	}

}
