package dev.tandem.coordinator.server;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.testing.CoordinatorCluster;
import dev.tandem.coordinator.testing.NetworkPartition;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLogException;
import dev.tandem.transaction.DecisionState;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Linearizable reads served by followers (ReadIndex, Raft thesis §6.4; KIP-996 for KRaft) and
 * by a leader that lost its majority, on a 3-peer coordinator in one JVM.
 */
class FollowerReadTests {

	private static final Logger logger = LoggerFactory.getLogger(FollowerReadTests.class);

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	@TempDir
	Path dataDir;

	@AutoClose
	private NetworkPartition partition;

	@AutoClose
	private CoordinatorCluster cluster;

	@Test
	void readAfterWriteThroughEachFollowerSeesEveryAcknowledgedDecision() {
		this.cluster = CoordinatorCluster.start(this.dataDir, 3);
		String leader = this.cluster.awaitLeader(TIMEOUT);
		RatisDecisionLog writer = this.cluster.client((builder) -> builder.initialLeader(leader));
		List<String> followers = this.cluster.othersThan(leader);
		List<RatisDecisionLog> readers = followers.stream()
			.map((follower) -> this.cluster.client((builder) -> builder.readFrom(follower)))
			.toList();
		int writes = 100;
		int staleLocalReads = 0;
		List<Decision> decided = new ArrayList<>();
		for (int i = 0; i < writes; i++) {
			Decision decision = decision("t-" + i, "app.i1", i);
			writer.decide(decision, TIMEOUT);
			decided.add(decision);
			for (String follower : followers) {
				// What a plain local read on the follower would have answered at this moment
				if (this.cluster.server(follower).stateMachine().counts().decided() < i + 1) {
					staleLocalReads++;
				}
			}
			for (RatisDecisionLog reader : readers) {
				assertThat(reader.state(decision.transactionId(), TIMEOUT)).as("read of %s", decision.transactionId())
					.isEqualTo(DecisionState.DECIDED);
			}
		}
		for (RatisDecisionLog reader : readers) {
			assertThat(reader.inDoubt("app.i1", TIMEOUT)).isEqualTo(decided);
		}
		logger.info("{} linearizable reads on followers {} saw every acknowledged decision; a local read on the "
				+ "follower right after the acknowledgement would have missed {} of them", writes * followers.size(),
				followers, staleLocalReads);
	}

	@Test
	void leaderCutOffFromTheMajorityNeverServesAStaleRead() throws Exception {
		this.partition = NetworkPartition.install();
		this.cluster = CoordinatorCluster.start(this.dataDir, 3);
		String oldLeader = this.cluster.awaitLeader(TIMEOUT);
		long oldTerm = this.cluster.server(oldLeader).currentTerm();
		RatisDecisionLog writer = this.cluster.client((builder) -> builder.initialLeader(oldLeader));
		RatisDecisionLog oldLeaderReader = this.cluster.client((builder) -> builder.readFrom(oldLeader)
			.requestTimeout(Duration.ofSeconds(1))
			.retry(Duration.ofMillis(50), Duration.ofMillis(200), 100));
		writer.decide(decision("t-before", "app.i1", 1), TIMEOUT);
		assertThat(oldLeaderReader.state("t-before", TIMEOUT)).isEqualTo(DecisionState.DECIDED);

		this.partition.isolate(oldLeader);
		String newLeader = await().atMost(TIMEOUT)
			.until(() -> this.cluster.statuses()
				.stream()
				.filter((status) -> status.role() == PeerRole.LEADER && status.leaderReady() && status.term() > oldTerm)
				.map(PeerStatus::peerId)
				.findFirst(), java.util.Optional::isPresent)
			.orElseThrow();
		assertThat(newLeader).isNotEqualTo(oldLeader);
		RatisDecisionLog newWriter = this.cluster.client((builder) -> builder.initialLeader(newLeader));
		newWriter.decide(decision("t-after", "app.i1", 2), TIMEOUT);
		// The old leader really holds old data: a stale read would answer UNKNOWN
		assertThat(this.cluster.server(oldLeader).stateMachine().counts().decided()).isEqualTo(1);
		assertThat(this.cluster.server(newLeader).stateMachine().counts().decided()).isEqualTo(2);

		// It cannot confirm a read index with a majority, so it does not answer
		PeerStatus oldLeaderStatus = this.cluster.server(oldLeader).status();
		long start = System.nanoTime();
		assertThatExceptionOfType(DecisionLogException.class)
			.isThrownBy(() -> oldLeaderReader.state("t-after", Duration.ofSeconds(2)));
		assertThatExceptionOfType(DecisionLogException.class)
			.isThrownBy(() -> oldLeaderReader.state("t-before", Duration.ofSeconds(1)));
		logger.info("Old leader '{}' ({} when asked, {} now) refused reads for {} ms while cut off ({}); new leader '{}'",
				oldLeader, oldLeaderStatus.role(), this.cluster.server(oldLeader).status().role(),
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start),
				this.cluster.server(oldLeader).stateMachine().leaderReads(), newLeader);
		// A read sent while cut off either fails or, once healed, answers with the new data
		CompletableFuture<DecisionState> pending = CompletableFuture
			.supplyAsync(() -> oldLeaderReader.state("t-after", TIMEOUT));
		this.partition.heal();
		DecisionState late = pending.handle((state, failure) -> (failure != null) ? null : state).get();
		logger.info("Read sent to '{}' during the partition answered {} after healing", oldLeader,
				(late != null) ? late : "with a failure");
		assertThat(late).isIn(DecisionState.DECIDED, null);
		await().atMost(TIMEOUT)
			.untilAsserted(() -> assertThat(oldLeaderReader.state("t-after", TIMEOUT)).isEqualTo(DecisionState.DECIDED));
		assertThat(this.cluster.server(oldLeader).status().leaderId()).isEqualTo(newLeader);
	}

}
