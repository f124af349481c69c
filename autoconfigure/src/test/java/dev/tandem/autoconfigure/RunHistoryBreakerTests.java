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
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Disabled;
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
import dev.tandem.transaction.HangingTransactions;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Trying to break run histories in the instance lease (issue 26; {@code docs/architecture.md}, "Run
 * histories") on one shared decision log (an embedded Ratis peer) and two real 3-broker clusters:
 * a chain of dead and failed runs between a dead run and the run that must fence it, a crash loop
 * longer than the history keeps, and the cost of the known gap (a released lease nobody claims).
 * What must hold: an undecided transaction of a dead run is aborted (the last stable offset moves
 * on) once a later run of its instance has started, well before the brokers' transaction timeout.
 */
class RunHistoryBreakerTests extends LeaseTrials {

	@Override
	String topicPrefix() {
		return "h-";
	}

	/** A run killed after prepare: one undecided transaction open on both clusters; its run id. */
	private String runKilledAfterPrepare(String instanceId, CrossClusterTransactionManagerBuilder builder, String tag)
			throws Exception {
		CrossClusterTransactionManager doomed = started(builder.protocolHook(crashAt(ProtocolStep.AFTER_PREPARE)));
		String runId = holder(instanceId);
		CrossClusterTransaction txn = doomed.begin();
		for (int i = 0; i < 3; i++) {
			txn.send("east", new ProducerRecord<>(this.topic, "k" + i, tag + "-east-" + i), STRING, STRING);
			txn.send("west", new ProducerRecord<>(this.topic, "k" + i, tag + "-west-" + i), STRING, STRING);
		}
		assertThat(catchThrowable(txn::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		doomed.abandon(); // kill -9: the transaction stays open on both clusters, the lease unreleased
		assertThat(open("east")).anyMatch((id) -> id.endsWith(runId));
		assertThat(open("west")).anyMatch((id) -> id.endsWith(runId));
		return runId;
	}

	private InstanceLease lease(String instanceId) throws Exception {
		String owner = this.topic + "." + instanceId;
		return log().leases(this.topic, Duration.ofSeconds(5))
			.stream()
			.filter((lease) -> lease.owner().equals(owner))
			.findFirst()
			.orElseThrow();
	}

	private String holder(String instanceId) throws Exception {
		return lease(instanceId).incarnation();
	}

	/** What InstanceLeaseKeeper.acquire() does once the lease is free; the run then dies (kill -9). */
	private String takeAndDie(String instanceId) {
		String run = UUID.randomUUID().toString();
		await().atMost(LEASE.multipliedBy(4)).until(() -> log()
			.renewLease(this.topic, instanceId, run, LEASE, Duration.ofSeconds(5))
			.isHeldBy(run));
		return run;
	}

	/** A start-up that fails after taking the lease and before fencing anything: it releases the lease. */
	private String takeAndRelease(String instanceId) throws Exception {
		String run = takeAndDie(instanceId);
		log().releaseLease(this.topic + "." + instanceId, run, Duration.ofSeconds(5));
		return run;
	}

	/** A real start-up that fails after taking the lease (west cannot be reached, every cluster required). */
	private void failedStartUp(String instanceId) {
		Map<String, Object> unreachable = clientConfig("west");
		unreachable.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1");
		CrossClusterTransactionManager failing = builder(instanceId, ProtocolHook.NONE).cluster("west", unreachable)
			.commitTimeout(Duration.ofSeconds(3))
			.requireAllClustersAtStart(true)
			.build();
		assertThat(catchThrowable(failing::start)).isNotNull();
	}

	/** The committed values of the topic, or an exception while the last stable offset is pinned. */
	private List<String> committed(String cluster, Duration wait) {
		return ReadCommitted.records(kafka.cluster(cluster).bootstrapServers(), this.topic, wait)
			.stream()
			.map((record) -> new String(record.value(), StandardCharsets.UTF_8))
			.toList();
	}

	/** A record committed by an independent producer after the dead run's transaction, on every partition. */
	/** Whether all three records committed after the dead run are visible (no partition pinned). */
	private boolean readersMovedOn(String cluster) {
		try {
			return committed(cluster, Duration.ofSeconds(2)).stream().filter(("after-" + cluster)::equals).count() == 3;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	private List<String> openOf(String cluster, String runId) throws Exception {
		return open(cluster).stream().filter((id) -> id.endsWith("." + runId)).toList();
	}

	/**
	 * Trial 1: a chain of runs between a dead run and the run that must fence it. Run A is killed
	 * with an undecided transaction open; run B takes the lease and dies; run C, a real start-up,
	 * fails after taking the lease (west cannot be reached) and releases it; run D takes it and
	 * dies; run E takes it and its start-up fails before fencing, releasing it. Run F starts:
	 * every one of A..E is in the history it reads, so A's transaction must be aborted on both
	 * clusters within a lease timeout and the readers' allowance. Observed: before F the lease held
	 * E (released) with 4 past runs, A among them; the readers moved on 1.8 s after F started.
	 */
	@Test
	void aChainOfDeadAndFailedRunsStillLeavesTheFirstDeadRunsTransactionToTheNextRun() throws Exception {
		String instance = "chain";
		String runA = runKilledAfterPrepare(instance, builder(instance, ProtocolHook.NONE), "A");
		takeAndDie(instance);
		failedStartUp(instance);
		takeAndDie(instance);
		takeAndRelease(instance);
		InstanceLease before = lease(instance);
		System.out.printf("[brk] chain: before F the lease holds %s (released %s), past runs %d, A in them: %s%n",
				before.incarnation(), before.released(), before.pastRuns().size(), before.runsToFence().contains(runA));
		System.out.printf("[brk] chain: A open east %s, west %s%n", openOf("east", runA), openOf("west", runA));
		long startedMs = System.currentTimeMillis();
		started(builder(instance, ProtocolHook.NONE));
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		await().atMost(RESUMES_WITHIN).until(() -> readersMovedOn("east") && readersMovedOn("west"));
		System.out.printf("[brk] chain: readers moved on %d ms after F started%n", System.currentTimeMillis() - startedMs);
		assertThat(openOf("east", runA)).isEmpty();
		assertThat(openOf("west", runA)).isEmpty();
		assertThat(committed("east", Duration.ofSeconds(3))).noneMatch((value) -> value.startsWith("A-"));
		assertThat(committed("west", Duration.ofSeconds(3))).noneMatch((value) -> value.startsWith("A-"));
	}

	/**
	 * Trial 2: a crash loop longer than the history keeps. Run A is killed with an undecided
	 * transaction open; then the instance's start-up fails {@code MAX_PAST_RUNS + 1} times in a row,
	 * each after taking the lease and before fencing (a cluster or the database down at start-up: a
	 * start-up fails in ensureMarkerTopics or the databases' start, before the pool fences). How many
	 * fit in the hour the history is meant to cover depends on the supervisor: Kubernetes'
	 * CrashLoopBackOff (10 s doubling to 5 min) allows about 16, one that restarts within seconds (a
	 * systemd unit with a short RestartSec and no start limit) 65 in minutes. The first is a real
	 * start-up, the others what its start-up does against the decision log. Then the instance
	 * starts for good: A's transaction must be aborted.
	 */
	@Test
	@Disabled("bug: after 65 start-ups that failed before fencing, the dead run A is pruned from the lease's "
			+ "history (64 past runs, A not among them): the next good start-up fences neither A's east nor its west "
			+ "id, both stay open (Ongoing), HangingTransactions lists nothing, and read_committed readers were still "
			+ "pinned 22.4 s after the good start (limit 21.5 s); only the brokers' transaction timeout (5 min here, "
			+ "15 min by default) ends it")
	void aCrashLoopLongerThanTheHistoryStillLeavesTheDeadRunsTransactionToTheNextRun() throws Exception {
		String instance = "loop";
		String runA = runKilledAfterPrepare(instance, builder(instance, ProtocolHook.NONE), "A");
		failedStartUp(instance);
		for (int i = 1; i <= InstanceLease.MAX_PAST_RUNS; i++) {
			takeAndRelease(instance);
		}
		InstanceLease before = lease(instance);
		System.out.printf("[brk] loop: before the good start the lease has %d past runs, A in them: %s; "
				+ "A open east %s, west %s%n", before.pastRuns().size(), before.runsToFence().contains(runA),
				openOf("east", runA), openOf("west", runA));
		long startedMs = System.currentTimeMillis();
		CrossClusterTransactionManager good = started(builder(instance, ProtocolHook.NONE));
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		HangingTransactions.Report hanging = good.hangingTransactions(Duration.ofSeconds(10));
		System.out.printf("[brk] loop: after the good start A open east %s, west %s; hanging listed %s%n",
				openOf("east", runA), openOf("west", runA),
				hanging.transactions().stream().map(HangingTransactions.Hanging::transactionalId).toList());
		boolean movedOn = readersMovedOnWithin(RESUMES_WITHIN);
		System.out.printf("[brk] loop: readers moved on within %s: %s (%d ms after the good start)%n", RESUMES_WITHIN,
				movedOn, System.currentTimeMillis() - startedMs);
		assertThat(movedOn).isTrue();
		assertThat(openOf("east", runA)).isEmpty();
		assertThat(openOf("west", runA)).isEmpty();
	}

	private boolean readersMovedOnWithin(Duration within) {
		try {
			await().atMost(within).until(() -> readersMovedOn("east") && readersMovedOn("west"));
			return true;
		}
		catch (ConditionTimeoutException ex) {
			return false;
		}
	}

	/**
	 * Trial 3: the cost of the known gap (a released lease is never claimed). Run A of an instance
	 * is killed with an undecided transaction open (transaction timeout 30 s); its restart fails
	 * after taking the lease (west cannot be reached) and releases it, and the instance never comes
	 * back; a survivor instance runs. The survivor never claims a released lease, so nobody fences
	 * A: the trial measures how long A's transaction pins the last stable offset (the brokers abort
	 * it at its transaction timeout, checked every 10 s by default) and that the survivor's
	 * {@code hangingTransactions} lists it meanwhile. What a user pays: the transaction timeout,
	 * 15 minutes by default. Observed: 6.5 s after the release the lease was still unclaimed and
	 * released, A's transactions open on both clusters, both pinned, and the survivor listed both
	 * as hanging; the readers moved on 39.9 s after A was killed (33.6 s after the release): A's
	 * 30 s timeout plus the brokers' abort check.
	 */
	@Test
	void aReleasedLeaseNobodyClaimsPinsTheDeadRunsTransactionForItsTransactionTimeout() throws Exception {
		Duration deadRunsTimeout = Duration.ofSeconds(30);
		long killedMs = System.currentTimeMillis();
		String runA = runKilledAfterPrepare("gone",
				builder("gone", ProtocolHook.NONE).transactionTimeout(deadRunsTimeout), "A");
		failedStartUp("gone");
		long releasedMs = System.currentTimeMillis();
		assertThat(lease("gone").released()).isTrue();
		// started after the release: a survivor running before might have claimed A's expired lease
		// first (then it fences A); the gap is the other order, the restart taking it first
		CrossClusterTransactionManager survivor = started(builder("survivor", ProtocolHook.NONE));
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		// for three lease timeouts after the release (the survivor checks the leases every 500 ms) nobody claims it
		await().during(LEASE.multipliedBy(3)).atMost(LEASE.multipliedBy(5)).until(() -> lease("gone").claimedBy() == null);
		InstanceLease gone = lease("gone");
		List<String> hanging = survivor.hangingTransactions(Duration.ofSeconds(10))
			.transactions()
			.stream()
			.map(HangingTransactions.Hanging::transactionalId)
			.toList();
		boolean pinnedEast = !readersMovedOn("east");
		boolean pinnedWest = !readersMovedOn("west");
		System.out.printf("[brk] gap: %d ms after the release: lease claimed by %s, released %s; A open east %s, "
				+ "west %s; pinned east %s, west %s; survivor lists hanging %s%n", System.currentTimeMillis() - releasedMs,
				gone.claimedBy(), gone.released(), openOf("east", runA), openOf("west", runA), pinnedEast, pinnedWest,
				hanging);
		assertThat(gone.claimedBy()).isNull();
		assertThat(pinnedWest).isTrue();
		assertThat(openOf("west", runA)).isNotEmpty();
		assertThat(hanging).containsAll(openOf("west", runA));
		// only the brokers end it: at the dead run's transaction timeout (plus their abort check)
		await().atMost(deadRunsTimeout.plus(Duration.ofSeconds(30)))
			.until(() -> readersMovedOn("east") && readersMovedOn("west"));
		long freedMs = System.currentTimeMillis();
		System.out.printf("[brk] gap: readers moved on %d ms after A was killed, %d ms after the release "
				+ "(A's transaction timeout %d ms)%n", freedMs - killedMs, freedMs - releasedMs, deadRunsTimeout.toMillis());
		assertThat(freedMs - killedMs).isGreaterThanOrEqualTo(deadRunsTimeout.toMillis() - 1000);
		assertThat(committed("west", Duration.ofSeconds(3))).noneMatch((value) -> value.startsWith("A-"));
	}

}
