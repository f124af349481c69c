package dev.tandem.coordinator;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.CoordinatorServerBuilder;
import dev.tandem.coordinator.server.DecisionStateMachine;
import dev.tandem.coordinator.state.DecisionTable;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLogException;
import dev.tandem.transaction.DecisionState;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.retry.RetryPolicies;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Integration tests of {@link EmbeddedCoordinator}: a real single Ratis peer on disk and a
 * {@link RatisDecisionLog} over gRPC.
 */
class EmbeddedCoordinatorTests {

	private static final Logger logger = LoggerFactory.getLogger(EmbeddedCoordinatorTests.class);

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	/** Only explicit snapshots: no automatic ones, none on stop. */
	private static final Consumer<CoordinatorServerBuilder> NO_SNAPSHOTS = (server) -> server
		.snapshotThreshold(Long.MAX_VALUE)
		.snapshotOnStop(false);

	@TempDir
	Path dataDir;

	private EmbeddedCoordinator coordinator;

	@AfterEach
	void close() {
		if (this.coordinator != null) {
			this.coordinator.close();
		}
	}

	@Test
	void decideStateInDoubtAndCompleteGoThroughRaft() {
		RatisDecisionLog log = start().decisionLog();
		Decision older = decision("t-1", "app.i1", 100);
		Decision newer = decision("t-2", "app.i1", 200);
		assertThat(log.decide(newer, TIMEOUT)).isEqualTo(newer);
		assertThat(log.decide(older, TIMEOUT)).isEqualTo(older);
		assertThat(log.state("t-1", TIMEOUT)).isEqualTo(DecisionState.DECIDED);
		assertThat(log.state("never", TIMEOUT)).isEqualTo(DecisionState.UNKNOWN);
		assertThat(log.inDoubt("app.i1", TIMEOUT)).containsExactly(older, newer);
		assertThat(log.inDoubt("app.i2", TIMEOUT)).isEmpty();
		log.complete("t-1");
		await().atMost(TIMEOUT).untilAsserted(() -> assertThat(log.state("t-1", TIMEOUT)).isEqualTo(DecisionState.COMPLETED));
		assertThat(log.inDoubt("app.i1", TIMEOUT)).containsExactly(newer);
		// the embedded peer took every command in-process, none went through its gRPC port
		assertThat(log.commandsSentInProcess()).isEqualTo(log.commandsSent()).isEqualTo(3);
	}

	@Test
	void aRetriedDecideReturnsTheDecisionAndAnotherDecisionOfTheIdIsRefused() {
		RatisDecisionLog log = start().decisionLog();
		Decision first = decision("t-1", "app.i1", 100);
		log.decide(first, TIMEOUT);
		assertThat(log.decide(decision("t-1", "app.i1", 100), TIMEOUT)).isEqualTo(first);
		assertThatExceptionOfType(DecisionLogException.class)
			.isThrownBy(() -> log.decide(decision("t-1", "app.i1", 555), TIMEOUT))
			.withMessageContaining("decided already with another decision");
		assertThat(log.inDoubt("app.i1", TIMEOUT)).containsExactly(first);
	}

	@Test
	void decideAfterAbortFailsAndAbortAfterDecideChangesNothing() {
		RatisDecisionLog log = start().decisionLog();
		log.abort("t-aborted", "app.i1", TIMEOUT);
		assertThatIllegalStateException().isThrownBy(() -> log.decide(decision("t-aborted", "app.i1", 1), TIMEOUT))
			.withMessageContaining("aborted");
		log.decide(decision("t-decided", "app.i1", 2), TIMEOUT);
		log.abort("t-decided", "app.i1", TIMEOUT);
		assertThat(log.state("t-aborted", TIMEOUT)).isEqualTo(DecisionState.ABORTED);
		assertThat(log.state("t-decided", TIMEOUT)).isEqualTo(DecisionState.DECIDED);
	}

	@Test
	void purgeRemovesFinishedRecordsOlderThanTheRetention() {
		RatisDecisionLog log = start().decisionLog();
		log.decide(decision("t-1", "app.i1", 1), TIMEOUT);
		log.decide(decision("t-2", "app.i1", 2), TIMEOUT);
		log.complete("t-1");
		log.abort("t-3", "app.i1", TIMEOUT);
		await().atMost(TIMEOUT).untilAsserted(() -> assertThat(log.state("t-1", TIMEOUT)).isEqualTo(DecisionState.COMPLETED));
		assertThat(log.purge(Duration.ofHours(1), TIMEOUT)).isZero();
		AtomicInteger purged = new AtomicInteger();
		await().atMost(TIMEOUT).untilAsserted(() -> {
			purged.addAndGet(log.purge(Duration.ZERO, TIMEOUT));
			assertThat(purged).hasValue(2);
		});
		assertThat(log.state("t-1", TIMEOUT)).isEqualTo(DecisionState.UNKNOWN);
		assertThat(log.state("t-3", TIMEOUT)).isEqualTo(DecisionState.UNKNOWN);
		assertThat(log.state("t-2", TIMEOUT)).isEqualTo(DecisionState.DECIDED);
	}

	@Test
	void restartOnTheSameDataDirReplaysTheLogAndKeepsEveryDecision() {
		RatisDecisionLog log = start(NO_SNAPSHOTS).decisionLog();
		int count = 1000;
		List<Decision> decisions = decideConcurrently(log, 8, count / 8);
		for (int i = 0; i < count; i += 2) {
			log.complete(decisions.get(i).transactionId());
		}
		this.coordinator.close();
		long startNanos = System.nanoTime();
		RatisDecisionLog reopened = start(NO_SNAPSHOTS).decisionLog();
		logger.info("Restart with {} decisions in the log took {} ms", count, (System.nanoTime() - startNanos) / 1_000_000);
		assertThat(this.coordinator.server().stateMachine().loadedSnapshotIndex()).isEqualTo(-1);
		assertThat(this.coordinator.server().stateMachine().appliedDecisions()).isEqualTo(count);
		assertThat(reopened.counts(TIMEOUT)).isEqualTo(new DecisionTable.Counts(count / 2, count / 2, 0));
		for (int i = 0; i < count; i++) {
			assertThat(reopened.state(decisions.get(i).transactionId(), TIMEOUT))
				.isEqualTo((i % 2 == 0) ? DecisionState.COMPLETED : DecisionState.DECIDED);
		}
		List<Decision> inDoubt = new ArrayList<>();
		for (int thread = 0; thread < 8; thread++) {
			inDoubt.addAll(reopened.inDoubt("owner-" + thread, TIMEOUT));
		}
		assertThat(inDoubt).hasSize(count / 2).allSatisfy((decision) -> assertThat(decisions.indexOf(decision) % 2).isOne());
	}

	@Test
	void restartAfterASnapshotRestoresFromTheSnapshot() throws Exception {
		RatisDecisionLog log = start(NO_SNAPSHOTS).decisionLog();
		List<Decision> decisions = decideConcurrently(log, 4, 100);
		long snapshotIndex = this.coordinator.server().takeSnapshot(TIMEOUT);
		assertThat(snapshotIndex).isPositive();
		Decision afterSnapshot = decision("after-snapshot", "owner-0", 9_999_999);
		log.decide(afterSnapshot, TIMEOUT);
		this.coordinator.close();

		long startNanos = System.nanoTime();
		RatisDecisionLog reopened = start(NO_SNAPSHOTS).decisionLog();
		logger.info("Restart from a snapshot of {} decisions took {} ms", decisions.size(),
				(System.nanoTime() - startNanos) / 1_000_000);
		DecisionStateMachine stateMachine = this.coordinator.server().stateMachine();
		assertThat(stateMachine.loadedSnapshotIndex()).isEqualTo(snapshotIndex);
		assertThat(stateMachine.loadedSnapshotRecords()).isEqualTo(decisions.size());
		assertThat(stateMachine.appliedDecisions()).as("decisions replayed from the log").isOne();
		assertThat(reopened.counts(TIMEOUT).decided()).isEqualTo(decisions.size() + 1);
		assertThat(reopened.inDoubt("owner-0", TIMEOUT)).endsWith(afterSnapshot).hasSize(101);
	}

	@Test
	void concurrentDecidesAreDurableAndShareLogEntries() {
		RatisDecisionLog log = start().decisionLog();
		DecisionStateMachine stateMachine = this.coordinator.server().stateMachine();
		long entriesBefore = stateMachine.appliedEntries();
		int threads = 8;
		int perThread = 200;
		long startNanos = System.nanoTime();
		List<Decision> decisions = decideConcurrently(log, threads, perThread);
		double seconds = (System.nanoTime() - startNanos) / 1e9;
		long entries = stateMachine.appliedEntries() - entriesBefore;
		logger.info("{} concurrent decisions in {} s ({} /s) in {} log entries ({} decisions per entry)",
				decisions.size(), String.format("%.2f", seconds), (long) (decisions.size() / seconds), entries,
				String.format("%.1f", (double) decisions.size() / entries));
		assertThat(stateMachine.appliedDecisions()).isEqualTo(threads * perThread);
		assertThat(entries).isLessThan(threads * perThread);
		assertThat(log.counts(TIMEOUT).decided()).isEqualTo(threads * perThread);
		for (int thread = 0; thread < threads; thread++) {
			assertThat(log.inDoubt("owner-" + thread, TIMEOUT)).hasSize(perThread);
		}
	}

	@Test
	void sequentialDecideLatencyIsLow() {
		RatisDecisionLog log = start().decisionLog();
		int count = 300;
		long[] micros = new long[count];
		for (int i = 0; i < count; i++) {
			long startNanos = System.nanoTime();
			log.decide(decision("seq-" + i, "app.i1", i), TIMEOUT);
			micros[i] = (System.nanoTime() - startNanos) / 1000;
		}
		java.util.Arrays.sort(micros);
		logger.info("Sequential decide latency: p50 {} us, p99 {} us, max {} us", micros[count / 2],
				micros[count * 99 / 100], micros[count - 1]);
		assertThat(micros[count / 2]).isLessThan(Duration.ofSeconds(1).toNanos() / 1000);
	}

	@Test
	void closeFlushesQueuedCompletions() {
		RatisDecisionLog log = start().decisionLog();
		for (int i = 0; i < 50; i++) {
			log.decide(decision("t-" + i, "app.i1", i), TIMEOUT);
		}
		for (int i = 0; i < 50; i++) {
			log.complete("t-" + i);
		}
		this.coordinator.close();
		RatisDecisionLog reopened = start().decisionLog();
		assertThat(reopened.inDoubt("app.i1", TIMEOUT)).isEmpty();
		assertThat(reopened.counts(TIMEOUT).completed()).isEqualTo(50);
	}

	@Test
	void callsFailWithDecisionLogExceptionWhenTheCoordinatorIsDown() throws Exception {
		this.coordinator = EmbeddedCoordinator.builder(this.dataDir)
			.client((client) -> client.retry(Duration.ofMillis(20), Duration.ofMillis(50), 3)
				.requestTimeout(Duration.ofMillis(200)))
			.start();
		RatisDecisionLog log = this.coordinator.decisionLog();
		log.decide(decision("t-1", "app.i1", 1), TIMEOUT);
		this.coordinator.server().close();
		Duration shortTimeout = Duration.ofMillis(300);
		assertThatExceptionOfType(DecisionLogException.class)
			.isThrownBy(() -> log.decide(decision("t-2", "app.i1", 2), shortTimeout));
		assertThatExceptionOfType(DecisionLogException.class).isThrownBy(() -> log.state("t-1", shortTimeout));
	}

	@Test
	void malformedCommandIsRefusedBeforeItReachesTheLog() throws Exception {
		start().decisionLog().decide(decision("t-1", "app.i1", 1), TIMEOUT);
		DecisionStateMachine stateMachine = this.coordinator.server().stateMachine();
		long entries = stateMachine.appliedEntries();
		try (RaftClient raw = RaftClient.newBuilder()
			.setRaftGroup(this.coordinator.server().group().toRaftGroup())
			.setProperties(new RaftProperties())
			.setRetryPolicy(RetryPolicies.noRetry())
			.build()) {
			assertThatExceptionOfType(StateMachineException.class)
				.isThrownBy(() -> raw.io().send(Message.valueOf("not a command")))
				.withMessageContaining("version");
		}
		assertThat(stateMachine.appliedEntries()).isEqualTo(entries);
		assertThat(this.coordinator.decisionLog().state("t-1", TIMEOUT)).isEqualTo(DecisionState.DECIDED);
	}

	@Test
	void callsAfterCloseFail() {
		RatisDecisionLog log = start().decisionLog();
		this.coordinator.close();
		assertThatExceptionOfType(DecisionLogException.class).isThrownBy(() -> log.complete("t"));
		assertThatExceptionOfType(DecisionLogException.class)
			.isThrownBy(() -> log.decide(decision("t", "o", 1), TIMEOUT));
		assertThatExceptionOfType(DecisionLogException.class).isThrownBy(() -> log.state("t", TIMEOUT));
		this.coordinator.close();
	}

	private EmbeddedCoordinator start() {
		return start(null);
	}

	private EmbeddedCoordinator start(@Nullable Consumer<CoordinatorServerBuilder> server) {
		try {
			this.coordinator = EmbeddedCoordinator.builder(this.dataDir).server(server).start();
			return this.coordinator;
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static List<Decision> decideConcurrently(RatisDecisionLog log, int threads, int perThread) {
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch go = new CountDownLatch(1);
			List<Future<List<Decision>>> futures = new ArrayList<>();
			for (int thread = 0; thread < threads; thread++) {
				int t = thread;
				Callable<List<Decision>> task = () -> {
					go.await();
					List<Decision> decided = new ArrayList<>();
					for (int i = 0; i < perThread; i++) {
						Decision decision = decision("txn-" + t + "-" + i, "owner-" + t, i);
						assertThat(log.decide(decision, TIMEOUT)).isEqualTo(decision);
						decided.add(decision);
					}
					return decided;
				};
				futures.add(executor.submit(task));
			}
			go.countDown();
			List<Decision> all = new ArrayList<>();
			for (Future<List<Decision>> future : futures) {
				all.addAll(future.get());
			}
			return all;
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
		finally {
			executor.shutdownNow();
		}
	}

}
