package dev.tandem.coordinator.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.testing.CoordinatorCluster;
import dev.tandem.transaction.Decision;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Election liveness with pre-vote on a 4-peer coordinator (majority 3) in one JVM: pre-vote
 * must not keep a group that regained its majority from electing a leader (the liveness
 * concern KIP-996 discusses for KRaft), nor let terms climb while it has no majority.
 */
class ElectionLivenessTests {

	private static final Logger logger = LoggerFactory.getLogger(ElectionLivenessTests.class);

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	/** "A few election timeouts": five of the upper bound. */
	private static final Duration ELECTION_BOUND = CoordinatorCluster.ELECTION_TIMEOUT_MAX.multipliedBy(5);

	@TempDir
	Path dataDir;

	@AutoClose
	private CoordinatorCluster cluster;

	@Test
	void fourPeersElectALeaderWithinAFewElectionTimeoutsAfterAFollowerAndThenTheLeaderStopAndTheFollowerReturns() {
		this.cluster = CoordinatorCluster.start(this.dataDir, 4);
		String leader = this.cluster.awaitLeader(TIMEOUT);
		List<String> followers = this.cluster.othersThan(leader);
		String returning = followers.get(0);
		RatisDecisionLog client = this.cluster.client((builder) -> builder.initialLeader(leader));
		List<Decision> decided = new ArrayList<>();
		decide(client, decided, 0, 10);

		this.cluster.stop(returning);
		decide(client, decided, 10, 20);
		this.cluster.stop(leader);
		List<String> survivors = this.cluster.othersThan(returning);
		long term = this.cluster.server(survivors.get(0)).currentTerm();
		// Two of four: no majority, so no leader; with pre-vote no peer raises its term either
		await().during(ELECTION_BOUND)
			.atMost(ELECTION_BOUND.plus(TIMEOUT))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> this.cluster.statuses()
				.stream()
				.allMatch((status) -> status.term() == term && status.role() != PeerRole.LEADER));

		long restartNanos = System.nanoTime();
		this.cluster.restart(returning);
		long startedNanos = System.nanoTime();
		String newLeader = this.cluster.awaitLeader(TIMEOUT);
		long electedNanos = System.nanoTime();
		Duration election = Duration.ofNanos(electedNanos - startedNanos);
		logger.info("Peer '{}' restarted in {} ms; '{}' leads {} ms later (term {} -> {}), election timeout {}-{} ms",
				returning, TimeUnit.NANOSECONDS.toMillis(startedNanos - restartNanos), newLeader, election.toMillis(),
				term, this.cluster.server(newLeader).currentTerm(), CoordinatorCluster.ELECTION_TIMEOUT_MIN.toMillis(),
				CoordinatorCluster.ELECTION_TIMEOUT_MAX.toMillis());
		// Usually a survivor (its log is longer); under load a first leader can lose its term again
		// once the returning peer has caught up, so any running peer may lead by now.
		assertThat(newLeader).isNotEqualTo(leader);
		assertThat(this.cluster.server(newLeader).currentTerm()).isGreaterThan(term);
		assertThat(election).isLessThan(ELECTION_BOUND);

		decide(client, decided, 20, 30);
		assertThat(client.inDoubt("app.i1", TIMEOUT)).containsExactlyElementsOf(decided);
		await().atMost(TIMEOUT)
			.untilAsserted(() -> assertThat(this.cluster.server(returning).stateMachine().counts().decided())
				.isEqualTo(decided.size()));
	}

	private static void decide(RatisDecisionLog client, List<Decision> decided, int from, int to) {
		for (int i = from; i < to; i++) {
			Decision decision = decision("t-" + i, "app.i1", i);
			client.decide(decision, TIMEOUT);
			decided.add(decision);
		}
	}

}
