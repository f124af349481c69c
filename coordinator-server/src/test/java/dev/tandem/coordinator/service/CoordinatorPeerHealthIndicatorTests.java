package dev.tandem.coordinator.service;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.tandem.coordinator.server.FollowerProgress;
import dev.tandem.coordinator.server.PeerRole;
import dev.tandem.coordinator.server.PeerStatus;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Unit tests of {@link CoordinatorPeerHealthIndicator} over given peer statuses (the
 * three-peer behaviour is in {@code CoordinatorServerApplicationTests}).
 */
class CoordinatorPeerHealthIndicatorTests {

	private static final Map<String, String> PEERS = Map.of("n1", "127.0.0.1:1", "n2", "127.0.0.1:2", "n3",
			"127.0.0.1:3");

	private static final Duration THRESHOLD = Duration.ofSeconds(10);

	@Test
	void aFollowerThatKeepsUpIsUpAndShowsItsLag() {
		Health health = health(follower(414, 413, 200));
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("leaderCommitIndex", 414L)
			.containsEntry("followerLag", 1L)
			.containsEntry("behindLeaderMs", 200L)
			.containsEntry("catchUpThresholdMs", 10_000L)
			.doesNotContainKeys("followers", "laggingFollowers");
	}

	@Test
	void aFollowerBehindTheLeaderForLongerThanTheThresholdIsDegraded() {
		Health health = health(follower(418, 413, 20_001));
		assertThat(health.getStatus()).isEqualTo(CoordinatorPeerHealthIndicator.DEGRADED);
		assertThat(health.getDetails()).containsEntry("followerLag", 5L)
			.containsEntry("behindLeaderMs", 20_001L)
			.containsEntry("leader", "n2");
	}

	@Test
	void aLeaderListsItsFollowersAndTheLaggingOnesButStaysUp() {
		PeerStatus leader = new PeerStatus("n2", PeerRole.LEADER, 3, "n2", true, 418, 418, 418, 418, 0,
				List.of(new FollowerProgress("n1", 413, 5, 20_001), new FollowerProgress("n3", 418, 0, 0)));
		Health health = health(leader);
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("laggingFollowers", List.of("n1"))
			.containsEntry("followers",
					List.of(Map.of("peerId", "n1", "commitIndex", 413L, "lag", 5L, "behindMs", 20_001L),
							Map.of("peerId", "n3", "commitIndex", 418L, "lag", 0L, "behindMs", 0L)))
			.containsEntry("leaderCommitIndex", 418L)
			.doesNotContainKeys("followerLag", "behindLeaderMs");
	}

	@Test
	void aPeerWithoutALeaderIsOutOfServiceAndAStoppedOneDown() {
		PeerStatus candidate = new PeerStatus("n1", PeerRole.CANDIDATE, 4, null, false, 418, 418, 418, -1, 0,
				List.of());
		assertThat(health(candidate).getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
		assertThat(health(candidate).getDetails()).doesNotContainKeys("leader", "leaderCommitIndex", "followerLag");
		PeerStatus stopped = new PeerStatus("n1", PeerRole.STOPPED, 0, null, false, -1, -1, -1, -1, 0, List.of());
		assertThat(health(stopped).getStatus()).isEqualTo(Status.DOWN);
	}

	@Test
	void theThresholdMustBePositive() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new CoordinatorPeerHealthIndicator(() -> follower(1, 1, 0), PEERS, Duration.ZERO))
			.withMessageContaining("catchUpThreshold");
	}

	private static PeerStatus follower(long leaderCommit, long applied, long behindMs) {
		return new PeerStatus("n1", PeerRole.FOLLOWER, 3, "n2", false, applied, applied, applied, leaderCommit, behindMs,
				List.of());
	}

	private static Health health(PeerStatus status) {
		return new CoordinatorPeerHealthIndicator(() -> status, PEERS, THRESHOLD).health();
	}

}
