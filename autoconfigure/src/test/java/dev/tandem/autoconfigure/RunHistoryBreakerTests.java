package dev.tandem.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.ProtocolHook;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Trying to break run histories in the instance lease (issue 26; {@code docs/architecture.md}, "Run
 * histories") on one shared decision log (an embedded Ratis peer) and two real 3-broker clusters:
 * a chain of dead and failed runs between a dead run and the run that must fence it, a crash loop
 * of failed start-ups, and a failed restart that never comes back.
 * What must hold: an undecided transaction of a dead run is aborted (the last stable offset moves
 * on) once a later run of its instance has started, well before the brokers' transaction timeout.
 */
class RunHistoryBreakerTests extends LeaseTrials {

	@Override
	String topicPrefix() {
		return "h-";
	}

	/** A start-up that fails after taking the lease and before fencing anything: it releases the lease. */
	private String takeAndRelease(String instanceId) throws Exception {
		String run = takeAndDie(instanceId);
		log().releaseLease(this.topic + "." + instanceId, run, Duration.ofSeconds(5));
		return run;
	}

	/**
	 * A real start-up that fails because west cannot be reached (every cluster required): it fails
	 * creating the marker topics, before it takes the lease.
	 */
	private void failedStartUp(String instanceId) {
		Map<String, Object> unreachable = clientConfig("west");
		unreachable.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:1");
		CrossClusterTransactionManager failing = builder(instanceId, ProtocolHook.NONE).cluster("west", unreachable)
			.commitTimeout(Duration.ofSeconds(3))
			.requireAllClustersAtStart(true)
			.build();
		assertThat(catchThrowable(failing::start)).isNotNull();
	}

	/**
	 * Trial 1: a chain of runs between a dead run and the run that must fence it. Run A is killed
	 * with an undecided transaction open; run B takes the lease and dies; run C, a real start-up,
	 * fails (west cannot be reached: since the fix, before it takes the lease); run D takes it and
	 * dies; run E takes it and releases it (the log-level steps of a run that released it). Run F starts:
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
	 * Trial 2: a crash loop. Run A is killed with an undecided transaction open; then the
	 * instance's start-up fails again and again. Found by this trial before the fix: 65 start-ups
	 * that failed after taking the lease and released it pruned A from the 64-run history, so the
	 * good start-up fenced nothing and A's transaction pinned the readers until the brokers'
	 * transaction timeout. Now a start-up that fails where it needs no lease (a cluster or a
	 * database that does not answer: the marker topics and the databases' check come first) leaves
	 * the lease untouched, and one that fails after taking the lease from a dead run leaves it to
	 * expire, so a loop adds at most one run per lease timeout, and the history keeps an hour of
	 * those at the default lease timeout. Here: three real start-ups that fail before the lease,
	 * then three that fail after taking it (the decision log fails the start-up recovery's read);
	 * then the instance starts for good: A's transaction must be aborted.
	 */
	@Test
	void aCrashLoopOfFailedStartUpsStillLeavesTheDeadRunsTransactionToTheNextRun() throws Exception {
		String instance = "loop";
		String runA = runKilledAfterPrepare(instance, builder(instance, ProtocolHook.NONE), "A");
		InstanceLease afterA = lease(instance);
		for (int i = 0; i < 3; i++) {
			failedStartUp(instance);
		}
		assertThat(lease(instance)).isEqualTo(afterA); // not taken, not released, not a run more in the history
		List<String> failedRuns = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			failedRuns.add(startUpFailingAfterTheTake(instance));
			InstanceLease kept = lease(instance);
			assertThat(kept.incarnation()).isEqualTo(failedRuns.get(i));
			assertThat(kept.released()).isFalse();
		}
		InstanceLease before = lease(instance);
		System.out.printf("[brk] loop: before the good start the lease has %d past runs, A in them: %s; "
				+ "A open east %s, west %s%n", before.pastRuns().size(), before.runsToFence().contains(runA),
				openOf("east", runA), openOf("west", runA));
		assertThat(before.pastRuns().stream().map(InstanceLease.PastRun::incarnation))
			.containsExactly(runA, failedRuns.get(0), failedRuns.get(1));
		// what the count of the history must hold: an hour of failed start-ups, one per default lease timeout
		assertThat((long) InstanceLease.MAX_PAST_RUNS).isGreaterThanOrEqualTo(
				InstanceLease.RUN_HISTORY_MS / CrossClusterTransactionManagerBuilder.DEFAULT_LEASE_TIMEOUT.toMillis());
		long startedMs = System.currentTimeMillis();
		started(builder(instance, ProtocolHook.NONE));
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
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
	 * Trial 3: a restart that fails and never comes back. Run A of an instance is killed with an
	 * undecided transaction open (transaction timeout 30 s); its restart fails after taking the
	 * lease (the decision log fails its start-up recovery) and the instance never comes back; a
	 * survivor instance runs. Before the fix the failed restart released the lease, a released
	 * lease is never claimed, and A's transaction pinned the readers until its transaction timeout
	 * (observed: 39.9 s after A was killed; 15 minutes at the default timeout). Now the failed
	 * restart leaves the lease to expire: the survivor claims it and fences A (in the claimed
	 * lease's history) well before A's transaction timeout.
	 */
	@Test
	void aRestartThatFailsAndNeverReturnsLeavesTheDeadRunsTransactionToASurvivor() throws Exception {
		Duration deadRunsTimeout = Duration.ofSeconds(30);
		long killedMs = System.currentTimeMillis();
		String runA = runKilledAfterPrepare("gone",
				builder("gone", ProtocolHook.NONE).transactionTimeout(deadRunsTimeout), "A");
		String runB = startUpFailingAfterTheTake("gone");
		assertThat(lease("gone").released()).isFalse();
		CrossClusterTransactionManager survivor = started(builder("survivor", ProtocolHook.NONE));
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		await().atMost(RESUMES_WITHIN).until(() -> readersMovedOn("east") && readersMovedOn("west"));
		long freedMs = System.currentTimeMillis();
		InstanceLease gone = lease("gone");
		System.out.printf("[brk] failed restart: readers moved on %d ms after A was killed (A's transaction timeout %d ms);"
				+ " lease of gone held by %s (B %s), claimed by %s, taken over %s%n", freedMs - killedMs,
				deadRunsTimeout.toMillis(), gone.incarnation(), runB, gone.claimedBy(), gone.takenOver());
		assertThat(gone.incarnation()).isEqualTo(runB);
		assertThat(gone.claimedBy()).isEqualTo(this.topic + ".survivor");
		assertThat(openOf("east", runA)).isEmpty();
		assertThat(openOf("west", runA)).isEmpty();
		assertThat(freedMs - killedMs).isLessThan(deadRunsTimeout.toMillis());
		assertThat(survivor.hangingTransactions(Duration.ofSeconds(10)).transactions()).isEmpty();
		assertThat(committed("east", Duration.ofSeconds(3))).noneMatch((value) -> value.startsWith("A-"));
		assertThat(committed("west", Duration.ofSeconds(3))).noneMatch((value) -> value.startsWith("A-"));
	}

}
