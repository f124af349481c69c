package dev.tandem.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;
import dev.tandem.transaction.TransactionStatistics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Trying to break per-run transactional ids (issue 26 item 1) on one shared decision log (an
 * embedded Ratis peer) and two real 3-broker clusters: restarts that come in a row, a restart whose
 * start-up fails after it took the lease, and a decision of the legacy id format recovered by a run
 * with per-run ids. What must hold: an undecided transaction of a dead run is aborted (the last
 * stable offset moves on) once a later run of its instance has started, well before the brokers'
 * transaction timeout; a decided one is committed on every cluster.
 */
class RunIdsBreakerTests extends LeaseTrials {

	@Override
	String topicPrefix() {
		return "t-";
	}

	private void send(CrossClusterTransaction txn, String tag) {
		for (int i = 0; i < 3; i++) {
			txn.send("east", new ProducerRecord<>(this.topic, "k" + i, tag + "-east-" + i), STRING, STRING);
			txn.send("west", new ProducerRecord<>(this.topic, "k" + i, tag + "-west-" + i), STRING, STRING);
		}
	}

	/** Run A of the instance: one transaction killed after prepare (undecided, open on both clusters). */
	private String runKilledAfterPrepare(String instanceId) {
		CrossClusterTransactionManager doomed = started(builder(instanceId, crashAt(ProtocolStep.AFTER_PREPARE)));
		CrossClusterTransaction txn = doomed.begin();
		send(txn, "A");
		assertThat(catchThrowable(txn::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		doomed.abandon(); // kill -9: the transaction stays open on both clusters, the lease unreleased
		return txn.transactionId();
	}

	/** The committed values of the topic, or an exception while the last stable offset is pinned. */
	private List<String> committed(String cluster) {
		return ReadCommitted.records(kafka.cluster(cluster).bootstrapServers(), this.topic, Duration.ofSeconds(3))
			.stream()
			.map((record) -> new String(record.value(), StandardCharsets.UTF_8))
			.toList();
	}

	private void assertReadersMoveOnWithout(String deadTag, long sinceMs) throws Exception {
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		// one record per partition: all three visible only once no open transaction pins any partition
		await().atMost(RESUMES_WITHIN).ignoreExceptions().untilAsserted(() -> {
			assertThat(committed("east")).filteredOn("after-east"::equals).hasSize(3);
			assertThat(committed("west")).filteredOn("after-west"::equals).hasSize(3);
		});
		System.out.printf("[brk26] %s: readers moved on %d ms after the last run started%n", this.topic,
				System.currentTimeMillis() - sinceMs);
		assertThat(committed("east")).noneMatch((value) -> value.startsWith(deadTag + "-"));
		assertThat(committed("west")).noneMatch((value) -> value.startsWith(deadTag + "-"));
		assertThat(open("east")).isEmpty();
		assertThat(open("west")).isEmpty();
	}

	/**
	 * Trial 1: run A killed with an open undecided transaction; run B takes the lease once A's expired
	 * (the first step of its start-up) and dies right after; run C starts. C fences the ids of B,
	 * the run it saw holding the lease, and of A, in the lease's run history: A's transaction is
	 * aborted too.
	 */
	@Test
	void aRunKilledRightAfterTakingTheLeaseLeavesNoTransactionOfTheRunBeforeItOpen() throws Exception {
		String id = runKilledAfterPrepare("twice");
		String owner = this.topic + ".twice";
		// run B: what InstanceLeaseKeeper.acquire() does once A's lease expired, then a kill -9
		String runB = UUID.randomUUID().toString();
		await().atMost(LEASE.multipliedBy(4))
			.until(() -> log().renewLease(this.topic, "twice", runB, LEASE, Duration.ofSeconds(5)).isHeldBy(runB));
		System.out.printf("[brk26] open after A and B: east %s, west %s%n", open("east"), open("west"));
		long startedMs = System.currentTimeMillis();
		CrossClusterTransactionManager runC = started(builder("twice", ProtocolHook.NONE));
		assertThat(runC.leaseLostTo()).isNull();
		assertThat(log().state(id, Duration.ofSeconds(5))).isNotEqualTo(DecisionState.DECIDED);
		System.out.printf("[brk26] leases after C: %s; open: east %s, west %s%n",
				log().leases(this.topic, Duration.ofSeconds(5)).stream().filter((l) -> l.owner().equals(owner))
					.map(InstanceLease::toString).toList(), open("east"), open("west"));
		assertReadersMoveOnWithout("A", startedMs);
	}

	/**
	 * Trial 2: run A killed with an open undecided transaction; run B's start-up fails (a cluster
	 * does not answer, every cluster required). Found by this trial: B took the lease and its
	 * release removed it, so C fenced neither. Since run histories a release kept it, and since
	 * issue 26's crash-loop fix B fails before it takes the lease at all (marker topics first). Run
	 * C starts and fences A. A's transaction must be aborted.
	 */
	@Test
	void aRestartWhoseStartUpFailedLeavesNoTransactionOfTheRunBeforeItOpen() throws Exception {
		runKilledAfterPrepare("failed");
		Map<String, Object> unreachable = clientConfig("west");
		unreachable.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1");
		CrossClusterTransactionManager runB = builder("failed", ProtocolHook.NONE)
			.cluster("west", unreachable)
			.commitTimeout(Duration.ofSeconds(3))
			.requireAllClustersAtStart(true)
			.build();
		assertThat(catchThrowable(runB::start)).isNotNull();
		System.out.printf("[brk26] leases after B failed: %s%n", log().leases(this.topic, Duration.ofSeconds(5)));
		long startedMs = System.currentTimeMillis();
		started(builder("failed", ProtocolHook.NONE));
		System.out.printf("[brk26] open after C: east %s, west %s%n", open("east"), open("west"));
		assertReadersMoveOnWithout("A", startedMs);
	}

	/**
	 * Trial 3: a run with the legacy ids (leases off) decides a transaction and dies after the
	 * decision, with a second, undecided one open in its other slot; a run with per-run ids
	 * restarts the instance: the decided one commits on both clusters, the undecided one aborts.
	 */
	@Test
	void aLegacyRunsDecisionIsCommittedAndItsOpenTransactionAbortedByARunWithPerRunIds() throws Exception {
		CrossClusterTransactionManager legacy = started(builder("old", crashAt(ProtocolStep.AFTER_DECISION))
			.leaseTimeout(Duration.ZERO)
			.slots(2));
		CrossClusterTransaction undecided = legacy.begin();
		send(undecided, "U");
		CrossClusterTransaction decided = legacy.begin();
		send(decided, "D");
		assertThat(catchThrowable(decided::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		legacy.abandon();
		assertThat(log().state(decided.transactionId(), Duration.ofSeconds(5))).isEqualTo(DecisionState.DECIDED);
		System.out.printf("[brk26] legacy open: east %s, west %s%n", open("east"), open("west"));
		TransactionStatistics statistics = new TransactionStatistics();
		long startedMs = System.currentTimeMillis();
		started(builder("old", ProtocolHook.NONE).slots(2).listener(statistics));
		assertReadersMoveOnWithout("U", startedMs);
		assertThat(committed("east")).contains("D-east-0", "D-east-1", "D-east-2");
		assertThat(committed("west")).contains("D-west-0", "D-west-1", "D-west-2");
		assertThat(statistics.snapshot().heuristic()).isZero();
	}

	/**
	 * Trial 4: a takeover racing a restart. A survivor runs; run A of another instance dies after
	 * deciding one transaction (slot 1) with a second, undecided one open (slot 0); the restart of A
	 * starts at once, so it and the survivor both wait for A's lease to expire and race for it
	 * (claim against take). Whoever wins: the decided transaction commits on both clusters, the
	 * undecided one aborts, no heuristic outcome on either side.
	 */
	@Test
	void aTakeoverRacingARestartCommitsTheDecidedAndAbortsTheUndecided() throws Exception {
		TransactionStatistics survivorStatistics = new TransactionStatistics();
		started(builder("survivor", ProtocolHook.NONE).listener(survivorStatistics));
		CrossClusterTransactionManager doomed = started(builder("raced", crashAt(ProtocolStep.AFTER_DECISION)).slots(2));
		CrossClusterTransaction undecided = doomed.begin();
		send(undecided, "U");
		CrossClusterTransaction decided = doomed.begin();
		send(decided, "D");
		assertThat(catchThrowable(decided::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		doomed.abandon();
		TransactionStatistics restartStatistics = new TransactionStatistics();
		long startedMs = System.currentTimeMillis();
		started(builder("raced", ProtocolHook.NONE).slots(2).listener(restartStatistics));
		System.out.printf("[brk26] race: leases %s; survivor recovered %d, restart recovered %d%n",
				log().leases(this.topic, Duration.ofSeconds(5)), survivorStatistics.snapshot().recovered(),
				restartStatistics.snapshot().recovered());
		assertReadersMoveOnWithout("U", startedMs);
		assertThat(committed("east")).filteredOn((value) -> value.startsWith("D-")).hasSize(3);
		assertThat(committed("west")).filteredOn((value) -> value.startsWith("D-")).hasSize(3);
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
				log().state(decided.transactionId(), Duration.ofSeconds(5))).isEqualTo(DecisionState.COMPLETED));
		assertThat(survivorStatistics.snapshot().heuristic()).isZero();
		assertThat(restartStatistics.snapshot().heuristic()).isZero();
	}

}
