package dev.tandem.coordinator.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.testing.CoordinatorCluster;
import dev.tandem.coordinator.testing.NetworkPartition;
import dev.tandem.transaction.Decision;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A follower that hears the leader's heartbeats but receives no entries (what issue 23 saw
 * after a whole-group restart) shows in its own {@link PeerStatus} and in the leader's, with
 * its lag in entries and the time it has trailed; once entries flow again it catches up and
 * both clear. A stopped follower (what a follower whose division Ratis closed looks like from
 * outside) shows in the leader's status.
 */
class LaggingFollowerTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final Duration THRESHOLD = Duration.ofSeconds(1);

	@TempDir
	Path dataDir;

	private NetworkPartition partition;

	private CoordinatorCluster cluster;

	@AfterEach
	void close() {
		if (this.partition != null) {
			this.partition.close();
		}
		if (this.cluster != null) {
			this.cluster.close();
		}
	}

	@Test
	void aFollowerThatReceivesNoEntriesShowsItsLagInItsOwnStatusAndTheLeadersUntilItCatchesUp() throws Exception {
		this.partition = NetworkPartition.install();
		this.cluster = CoordinatorCluster.start(this.dataDir, 3);
		String leader = this.cluster.awaitLeader(TIMEOUT);
		String lagging = this.cluster.othersThan(leader).get(0);
		String keepingUp = this.cluster.othersThan(leader).get(1);
		RatisDecisionLog client = this.cluster.client((builder) -> builder.initialLeader(leader));
		client.decide(decision("t-before", "app.i1", 0), TIMEOUT);
		await().atMost(TIMEOUT).untilAsserted(() -> assertThat(this.cluster.statuses())
			.allSatisfy((status) -> assertThat(status.behindLeaderMs()).isZero()));

		this.partition.holdEntriesTo(lagging);
		for (int i = 1; i <= 5; i++) {
			Decision decision = decision("t-" + i, "app.i1", i);
			assertThat(client.decide(decision, TIMEOUT)).isEqualTo(decision);
		}
		long leaderCommit = this.cluster.server(leader).status().commitIndex();
		await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
			PeerStatus follower = this.cluster.server(lagging).status();
			assertThat(follower.role()).isEqualTo(PeerRole.FOLLOWER);
			assertThat(follower.leaderId()).isEqualTo(leader);
			assertThat(follower.leaderCommitIndex()).isGreaterThanOrEqualTo(leaderCommit);
			assertThat(follower.followerLag()).isEqualTo(follower.leaderCommitIndex() - follower.appliedIndex())
				.isGreaterThanOrEqualTo(5);
			assertThat(follower.isBehindLeaderLongerThan(THRESHOLD)).isTrue();
			PeerStatus leading = this.cluster.server(leader).status();
			assertThat(leading.followersBehindLongerThan(THRESHOLD)).singleElement().satisfies((progress) -> {
				assertThat(progress.peerId()).isEqualTo(lagging);
				assertThat(progress.lag()).isGreaterThanOrEqualTo(5);
			});
			assertThat(leading.followers()).extracting(FollowerProgress::peerId).containsExactly(
					this.cluster.othersThan(leader).toArray(String[]::new));
			assertThat(this.cluster.server(keepingUp).status().behindLeaderMs()).isZero();
			assertThat(this.cluster.server(keepingUp).status().followerLag()).isZero();
		});

		this.partition.heal();
		await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
			PeerStatus follower = this.cluster.server(lagging).status();
			assertThat(follower.appliedIndex()).isGreaterThanOrEqualTo(leaderCommit);
			assertThat(follower.followerLag()).isZero();
			assertThat(follower.behindLeaderMs()).isZero();
			assertThat(this.cluster.server(leader).status().followers())
				.allSatisfy((progress) -> assertThat(progress.behindMs()).isZero());
		});
		assertThat(this.cluster.server(lagging).stateMachine().counts().decided()).isEqualTo(6);
		assertThat(this.partition.heldRequests()).isPositive();
	}

	@Test
	void everyFollowerKnowsTheLeadersCommitIndexAndTheLeaderEveryFollowersProgress() {
		this.cluster = CoordinatorCluster.start(this.dataDir, 3);
		String leader = this.cluster.awaitLeader(TIMEOUT);
		List<String> followers = this.cluster.othersThan(leader);
		await().atMost(TIMEOUT).untilAsserted(() -> {
			PeerStatus leading = this.cluster.server(leader).status();
			assertThat(leading.leaderCommitIndex()).isEqualTo(leading.commitIndex()).isNotNegative();
			assertThat(leading.followers()).extracting(FollowerProgress::peerId).containsExactlyElementsOf(followers);
			assertThat(leading.followers()).allSatisfy((progress) -> {
				assertThat(progress.commitIndex()).isEqualTo(leading.commitIndex());
				assertThat(progress.lag()).isZero();
			});
			for (String follower : followers) {
				PeerStatus status = this.cluster.server(follower).status();
				assertThat(status.followers()).isEmpty();
				assertThat(status.leaderCommitIndex()).isEqualTo(leading.commitIndex());
				assertThat(status.followerLag()).isZero();
			}
		});
	}

	@Test
	void aStoppedFollowerShowsInTheLeadersStatusAsTrailingEverLonger() throws Exception {
		this.cluster = CoordinatorCluster.start(this.dataDir, 3);
		String leader = this.cluster.awaitLeader(TIMEOUT);
		String stopped = this.cluster.othersThan(leader).get(0);
		RatisDecisionLog client = this.cluster.client((builder) -> builder.initialLeader(leader));
		this.cluster.stop(stopped);
		Decision decision = decision("t-1", "app.i1", 1);
		assertThat(client.decide(decision, TIMEOUT)).isEqualTo(decision);
		await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
			PeerStatus leading = this.cluster.server(leader).status();
			assertThat(leading.followersBehindLongerThan(THRESHOLD)).singleElement().satisfies((progress) -> {
				assertThat(progress.peerId()).isEqualTo(stopped);
				assertThat(progress.lag()).isEqualTo(leading.commitIndex() - progress.commitIndex()).isPositive();
			});
		});
	}

}
