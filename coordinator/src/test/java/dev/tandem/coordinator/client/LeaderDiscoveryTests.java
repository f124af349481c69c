package dev.tandem.coordinator.client;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.tandem.coordinator.testing.CoordinatorCluster;
import dev.tandem.transaction.DecisionState;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leader discovery from NotLeader hints (the KIP-951 idea applied to the coordinator's quorum)
 * and reads spread over followers, on a 3-peer coordinator in one JVM. The clients' retry
 * backoff is set to 1-2 s so that any retry that waited for it would show in the latency.
 */
class LeaderDiscoveryTests {

	private static final Logger logger = LoggerFactory.getLogger(LeaderDiscoveryTests.class);

	private static final Duration TIMEOUT = Duration.ofSeconds(20);


	@TempDir
	Path dataDir;

	@AutoClose
	private CoordinatorCluster cluster;

	@Test
	void clientThatStartsAtAFollowerReachesTheLeaderWithOneRedirectAndNoBackoff() {
		this.cluster = CoordinatorCluster.start(this.dataDir, 3);
		String leader = this.cluster.awaitLeader(TIMEOUT);
		String follower = this.cluster.othersThan(leader).get(0);
		RatisDecisionLog direct = this.cluster.client((builder) -> builder.initialLeader(leader).retry(
				Duration.ofSeconds(1), Duration.ofSeconds(2), 20));
		RatisDecisionLog redirected = this.cluster.client((builder) -> builder.initialLeader(follower).retry(
				Duration.ofSeconds(1), Duration.ofSeconds(2), 20));

		long directNanos = timeDecide(direct, "t-direct");
		long redirectedNanos = timeDecide(redirected, "t-redirected");
		long warmNanos = timeDecide(redirected, "t-warm");

		logger.info("First decide: {} ms straight to the leader, {} ms through follower '{}' and its NotLeader hint; "
				+ "next decide {} ms", millis(directNanos), millis(redirectedNanos), follower, millis(warmNanos));
		assertThat(redirected.leaderRedirects()).isEqualTo(1);
		assertThat(redirected.failedAttempts()).isZero();
		assertThat(redirected.leaderId()).isEqualTo(leader);
		assertThat(direct.leaderRedirects()).isZero();
		// How long the redirect took is logged; timing claims belong in the benchmark, not here.
	}

	@Test
	void afterALeadershipTransferTheNextWriteFollowsTheHintToTheNewLeader() throws Exception {
		this.cluster = CoordinatorCluster.start(this.dataDir, 3);
		String leader = this.cluster.awaitLeader(TIMEOUT);
		long term = this.cluster.server(leader).currentTerm();
		RatisDecisionLog client = this.cluster.client((builder) -> builder.initialLeader(leader).retry(
				Duration.ofSeconds(1), Duration.ofSeconds(2), 20));
		timeDecide(client, "t-before");

		long transferStart = System.nanoTime();
		String newLeader = this.cluster.server(leader).transferLeadership(TIMEOUT).orElseThrow();
		long transferNanos = System.nanoTime() - transferStart;
		long followNanos = timeDecide(client, "t-after");

		logger.info("Leadership moved '{}' -> '{}' in {} ms; the next decide took {} ms ({} redirect, {} failed attempts)",
				leader, newLeader, millis(transferNanos), millis(followNanos), client.leaderRedirects(),
				client.failedAttempts());
		assertThat(newLeader).isNotEqualTo(leader);
		assertThat(this.cluster.readyLeader()).contains(newLeader);
		assertThat(this.cluster.server(newLeader).currentTerm()).isEqualTo(term + 1);
		assertThat(client.leaderId()).isEqualTo(newLeader);
		// One hint normally (the old leader names the new one); two when the old leader, just
		// stepped down, does not know the new leader yet and names another follower, which then
		// names the new leader (seen under load: n2 -> n1 -> n3).
		assertThat(client.leaderRedirects()).isLessThanOrEqualTo(2);
		// No retry waited for the backoff (1 s here): before leader-change failures got quick
		// retries, a new leader not yet ready sent 1 run in 6 into it (3.6 s). The follow time
		// itself is logged, not asserted: timing claims belong in the benchmark.
		assertThat(client.backoffRetries()).isZero();
		assertThat(this.cluster.server(leader).transferLeadership(TIMEOUT)).isEmpty();
	}

	@Test
	void readsSpreadOverFollowersFallBackToTheLeaderWhenAFollowerIsDown() {
		this.cluster = CoordinatorCluster.start(this.dataDir, 3);
		String leader = this.cluster.awaitLeader(TIMEOUT);
		RatisDecisionLog writer = this.cluster.client((builder) -> builder.initialLeader(leader));
		RatisDecisionLog reader = this.cluster.client((builder) -> builder.initialLeader(leader)
			.readFromFollowers(true));
		for (int i = 0; i < 20; i++) {
			writer.decide(decision("t-" + i, "app.i1", i), TIMEOUT);
			assertThat(reader.state("t-" + i, TIMEOUT)).isEqualTo(DecisionState.DECIDED);
		}
		assertThat(reader.followerReads()).isEqualTo(20);
		assertThat(reader.followerReadFallbacks()).isZero();

		List<String> followers = this.cluster.othersThan(leader);
		this.cluster.stop(followers.get(0));
		for (int i = 0; i < 20; i++) {
			assertThat(reader.state("t-" + i, TIMEOUT)).isEqualTo(DecisionState.DECIDED);
		}
		logger.info("Reads with follower '{}' down: {} served by followers, {} fell back to the leader",
				followers.get(0), reader.followerReads() - 20, reader.followerReadFallbacks());
		assertThat(reader.followerReads()).isEqualTo(30);
		assertThat(reader.followerReadFallbacks()).isEqualTo(10);
	}

	private static long timeDecide(RatisDecisionLog client, String transactionId) {
		long start = System.nanoTime();
		client.decide(decision(transactionId, "app.i1", 1), TIMEOUT);
		return System.nanoTime() - start;
	}

	private static long millis(long nanos) {
		return TimeUnit.NANOSECONDS.toMillis(nanos);
	}

}
