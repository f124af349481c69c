package dev.tandem.autoconfigure;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.DecisionLogException;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.ForwardingDecisionLog;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;
import dev.tandem.transaction.TransactionListener;
import dev.tandem.transaction.TransactionState;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Leases and takeover under the races a breaker found (each first failed on the code before its
 * fix), on two real 3-broker clusters and a real Ratis peer: a paused run, a paused claimant, an
 * instance id that prefixes another, a restart with fewer slots while a cluster is down, a takeover
 * that keeps failing. The atomicity tests assert a transaction's records visible on both clusters
 * or on neither.
 */
class LeaseBreakerTests extends LeaseTrials {

	private static String deadBootstrap;

	@Override
	String topicPrefix() {
		return "b-";
	}

	@BeforeAll
	static void reserveADeadAddress() throws Exception {
		try (ServerSocket socket = new ServerSocket(0)) {
			deadBootstrap = "localhost:" + socket.getLocalPort();
		}
	}

	/** {@link #builder(String, ProtocolHook)}, commits bounded by 4 s, west at an address nobody answers if not reachable. */
	private CrossClusterTransactionManagerBuilder builder(String instanceId, boolean westReachable) {
		CrossClusterTransactionManagerBuilder builder = builder(instanceId, ProtocolHook.NONE)
			.commitTimeout(Duration.ofSeconds(4));
		if (!westReachable) {
			Map<String, Object> west = clientConfig("west");
			west.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, deadBootstrap);
			builder.cluster("west", west);
		}
		return builder;
	}

	private List<String> committed(String cluster) {
		return ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), this.topic);
	}

	private void send(CrossClusterTransaction txn, String cluster, String prefix) {
		for (int i = 0; i < 3; i++) {
			txn.send(cluster, new ProducerRecord<>(this.topic, "k" + i, prefix + i), STRING, STRING);
		}
	}

	private void assertAtomic(String eastPrefix, String westPrefix) {
		List<String> east = committed("east").stream().filter((v) -> v.startsWith(eastPrefix)).toList();
		List<String> west = committed("west").stream().filter((v) -> v.startsWith(westPrefix)).toList();
		System.out.printf("BREAKER %s: east=%s west=%s%n", this.topic, east, west);
		assertThat(east.isEmpty()).as("atomicity: east=%s west=%s", east, west).isEqualTo(west.isEmpty());
	}

	/**
	 * Bug A (liveness, wrong report). A decided transaction ran on slot 1 (west first); the instance
	 * restarts with ONE slot while west is down. Recovery of the decision is pending on [west, east],
	 * and ParticipantPool.start then tries to abort the "orphaned" open transaction of unused slot 1
	 * on east, the decided transaction's own east participant: open() refuses (east is pending) and
	 * the whole start fails with ClusterUnavailableException naming east, a cluster that is up.
	 */
	@Test
	void aRestartWithFewerSlotsWhileAClusterIsDownStartsAndLeavesTheDecidedParticipantToRecovery() {
		AtomicReference<String> doomedId = new AtomicReference<>();
		ProtocolHook crash = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_DECISION && transactionId.equals(doomedId.get())) {
				throw new ProtocolHook.SimulatedCrashException(step);
			}
		};
		CrossClusterTransactionManager first = started(builder("shrunk", true).slots(2).protocolHook(crash));
		first.begin(); // holds slot 0
		CrossClusterTransaction txn = first.begin(); // slot 1
		doomedId.set(txn.transactionId());
		send(txn, "west", "west-"); // west first: recovery tries it first
		send(txn, "east", "east-");
		assertThat(catchThrowable(txn::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		assertThat(log().state(txn.transactionId(), Duration.ofSeconds(5))).isEqualTo(DecisionState.DECIDED);
		first.abandon(); // kill -9

		// Restart with one slot while west is unreachable: the start should go on without west.
		Throwable startFailure = catchThrowable(() -> started(builder("shrunk", false).slots(1)));
		System.out.println("BREAKER restart with fewer slots, west down: " + startFailure);
		assertThat(startFailure).as("a cluster down at start-up must not stop the start").isNull();
	}

	/**
	 * Bug D. Instance ids "web" and "web.1" of one app. When "web" dies, its claimant fences every
	 * ONGOING transactional id starting with "<prefix>.<cluster>.web." - which includes the live
	 * "web.1"'s ids: its decided transaction, committed on east, is aborted on west.
	 */
	@Test
	void takingOverInstanceWebNeverFencesTheLiveInstanceWebDot1() throws Exception {
		started(builder("survivor", true));
		CountDownLatch midCommit = new CountDownLatch(1);
		CountDownLatch goOn = new CountDownLatch(1);
		AtomicReference<String> slowId = new AtomicReference<>();
		ProtocolHook slowCommit = (transactionId, step) -> {
			if (step == ProtocolStep.MID_COMMIT && transactionId.equals(slowId.get())) {
				midCommit.countDown();
				try {
					goOn.await(120, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		};
		CrossClusterTransactionManager live = started(builder("web.1", true).protocolHook(slowCommit));
		CrossClusterTransactionManager dies = started(builder("web", true));
		CrossClusterTransaction txn = live.begin();
		slowId.set(txn.transactionId());
		send(txn, "east", "east-");
		send(txn, "west", "west-");
		CompletableFuture<Throwable> commit = CompletableFuture.supplyAsync(() -> catchThrowable(txn::commit));
		assertThat(midCommit.await(30, TimeUnit.SECONDS)).isTrue(); // decided, east committed, west not yet
		dies.abandon(); // "web" never returns
		await().atMost(Duration.ofSeconds(30)).until(() -> {
			InstanceLease lease = lease("web");
			return lease != null && lease.takenOver();
		});
		goOn.countDown();
		Throwable outcome = commit.get(60, TimeUnit.SECONDS);
		System.out.println("BREAKER web.1's commit ended with: " + outcome);
		assertAtomic("east-", "west-");
	}

	/**
	 * Bug F (wrong report). Same set-up as E: the claimant's takeover throws every time, and since
	 * the stale-decision check runs after it in the same try block, the claimant (the only live
	 * instance) never reports the dead instance's decision as stale, however old it gets.
	 */
	@Test
	void aFailingTakeoverStillReportsTheStaleDecisions() throws Exception {
		CrossClusterTransactionManager claimant = started(builder("partitioned", false)
			.staleDecisionAge(Duration.ofSeconds(1)));
		AtomicReference<String> doomedId = new AtomicReference<>();
		ProtocolHook crash = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_DECISION && transactionId.equals(doomedId.get())) {
				throw new ProtocolHook.SimulatedCrashException(step);
			}
		};
		CrossClusterTransactionManager doomed = started(builder("pod-3", true).protocolHook(crash));
		CrossClusterTransaction txn = doomed.begin();
		doomedId.set(txn.transactionId());
		send(txn, "east", "east-");
		send(txn, "west", "west-");
		assertThat(catchThrowable(txn::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		doomed.abandon();
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(claimant.staleDecisions())
			.as("decided, never completed, its takeover failing")
			.anySatisfy((stale) -> assertThat(stale.transactionId()).isEqualTo(txn.transactionId())));
	}

	/**
	 * Bug B. A run pauses between prepare and decision longer than its lease (a GC pause, a VM
	 * stall: no renewal meanwhile). The instance is restarted elsewhere; that new run cannot reach
	 * west at start-up and starts without it (so only east's transactional ids are fenced). The
	 * paused run wakes up: the log accepts its decision, since decide checks only whether the
	 * owner's lease is CLAIMED, not which run holds it; the run's commit fails on east (fenced) and
	 * succeeds on west.
	 */
	@Test
	void aPausedRunCannotDecideOnceANewRunOfItsInstanceHoldsTheLease() throws Exception {
		FreezableLog zombieLog = new FreezableLog(log());
		CountDownLatch wake = new CountDownLatch(1);
		AtomicReference<String> pausedId = new AtomicReference<>();
		ProtocolHook pause = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_PREPARE && transactionId.equals(pausedId.get())) {
				zombieLog.frozen.set(true); // the whole process is paused: no renewal either
				try {
					wake.await(120, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				zombieLog.frozen.set(false);
			}
		};
		CrossClusterTransactionManager zombie = started(builder("pod-0", true).decisionLog(zombieLog).protocolHook(pause));
		CrossClusterTransaction txn = zombie.begin();
		pausedId.set(txn.transactionId());
		send(txn, "east", "east-");
		send(txn, "west", "west-");
		CompletableFuture<Throwable> commit = CompletableFuture.supplyAsync(() -> catchThrowable(txn::commit));
		await().atMost(Duration.ofSeconds(30)).until(() -> zombieLog.frozen.get());
		InstanceLease paused = lease("pod-0");
		await().atMost(Duration.ofSeconds(10)).until(() -> System.currentTimeMillis() > paused.expiresAtMs() + 200);

		// The instance is restarted (new incarnation); this run cannot reach west at start-up.
		CrossClusterTransactionManager restarted = started(builder("pod-0", false));
		assertThat(restarted.leaseLostTo()).isNull();

		wake.countDown(); // the paused run wakes up and goes on with its commit
		Throwable outcome = commit.get(60, TimeUnit.SECONDS);
		System.out.println("BREAKER paused run's commit ended with: " + outcome);
		System.out.println("BREAKER decision state: " + log().state(txn.transactionId(), Duration.ofSeconds(5)));
		assertAtomic("east-", "west-");
	}

	/**
	 * Bug C. A claimant pauses in the middle of a takeover (after committing the dead instance's
	 * decided transactions, before fencing its transactional ids) for longer than its own lease. The
	 * dead instance is restarted meanwhile: its new run gets a fresh lease (the claimant is no longer
	 * live) and commits a transaction. The claimant wakes up and fences the ids, which are the new
	 * run's now, aborting the new run's decided transaction on the cluster it had not committed yet.
	 */
	@Test
	void aClaimantThatPausedMidTakeoverNeverFencesTheRestartedRunsDecidedTransaction() throws Exception {
		// The claimant: its listener's onRecovered runs between recover and fence in takeOver.
		FreezableLog claimantLog = new FreezableLog(log());
		CountDownLatch claimantWake = new CountDownLatch(1);
		AtomicBoolean claimantPaused = new AtomicBoolean();
		TransactionListener pauseAfterRecovery = new TransactionListener() {
			@Override
			public void onRecovered(String transactionId) {
				if (Thread.currentThread().getName().startsWith("tandem-lease-") && claimantPaused.compareAndSet(false, true)) {
					claimantLog.frozen.set(true);
					try {
						claimantWake.await(120, TimeUnit.SECONDS);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
					claimantLog.frozen.set(false);
				}
			}
		};
		started(builder("claimant", true).decisionLog(claimantLog).listener(pauseAfterRecovery));

		// The instance that dies with a decided transaction.
		AtomicReference<String> doomedId = new AtomicReference<>();
		ProtocolHook crash = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_DECISION && transactionId.equals(doomedId.get())) {
				throw new ProtocolHook.SimulatedCrashException(step);
			}
		};
		CrossClusterTransactionManager doomed = started(builder("pod-1", true).protocolHook(crash));
		CrossClusterTransaction dead = doomed.begin();
		doomedId.set(dead.transactionId());
		send(dead, "east", "dead-east-");
		send(dead, "west", "dead-west-");
		assertThat(catchThrowable(dead::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		doomed.abandon();

		await().atMost(Duration.ofSeconds(30)).untilTrue(claimantPaused); // mid-takeover, paused
		InstanceLease claimantLease = lease("claimant");
		await().atMost(Duration.ofSeconds(10))
			.until(() -> System.currentTimeMillis() > claimantLease.expiresAtMs() + 200); // the claimant's own lease expires

		// The dead instance is restarted: it gets its lease back since the claimant is not live.
		CountDownLatch midCommit = new CountDownLatch(1);
		CountDownLatch goOn = new CountDownLatch(1);
		AtomicReference<String> newId = new AtomicReference<>();
		ProtocolHook slowCommit = (transactionId, step) -> {
			if (step == ProtocolStep.MID_COMMIT && transactionId.equals(newId.get())) {
				midCommit.countDown();
				try {
					goOn.await(120, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		};
		CrossClusterTransactionManager restarted = started(builder("pod-1", true).protocolHook(slowCommit));
		System.out.println("BREAKER lease after restart: " + lease("pod-1"));
		CrossClusterTransaction txn = restarted.begin();
		newId.set(txn.transactionId());
		send(txn, "east", "new-east-");
		send(txn, "west", "new-west-");
		CompletableFuture<Throwable> commit = CompletableFuture.supplyAsync(() -> catchThrowable(txn::commit));
		assertThat(midCommit.await(30, TimeUnit.SECONDS)).isTrue(); // decided, east committed, west not yet

		claimantWake.countDown(); // the claimant wakes up: it must see its claim lapsed and not fence
		await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(6)).until(() -> !claimantLog.frozen.get());
		goOn.countDown();
		Throwable outcome = commit.get(60, TimeUnit.SECONDS);
		System.out.println("BREAKER restarted run's commit ended with: " + outcome);
		System.out.println("BREAKER decision state: " + log().state(txn.transactionId(), Duration.ofSeconds(5)));
		assertAtomic("new-east-", "new-west-");
	}

	/**
	 * The window bug C left open (issue 26 item 1): the claimant passes its re-check (its claim and its own
	 * lease are valid) and pauses right after it, before it fences, for longer than its own lease. The dead
	 * instance is restarted meanwhile and its new run commits a transaction. The claimant wakes up and fences:
	 * with transactional ids shared by every run of an instance it aborted the new run's decided transaction
	 * on the cluster not committed yet; with per-run ids it fences the dead run's ids only, and the new run's
	 * transaction commits on both clusters.
	 */
	@Test
	void aClaimantThatPausesAfterItsRecheckNeverFencesTheRestartedRunsTransaction() throws Exception {
		// The claimant pauses inside the read of its re-check (stillEntitled), the answer already read.
		CountDownLatch claimantWake = new CountDownLatch(1);
		CountDownLatch fenced = new CountDownLatch(1);
		AtomicBoolean pauseNextRead = new AtomicBoolean();
		AtomicBoolean claimantPaused = new AtomicBoolean();
		FreezableLog claimantLog = new FreezableLog(log()) {

			@Override
			public List<InstanceLease> leases(String idPrefix, Duration timeout) {
				List<InstanceLease> answer = super.leases(idPrefix, timeout);
				if (Thread.currentThread().getName().startsWith("tandem-lease-") && pauseNextRead.compareAndSet(true, false)) {
					this.frozen.set(true); // the whole process is paused: no renewal either
					claimantPaused.set(true);
					try {
						claimantWake.await(120, TimeUnit.SECONDS);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
					this.frozen.set(false);
				}
				return answer;
			}

			@Override
			public void releaseLease(String owner, String by, Duration timeout) {
				super.releaseLease(owner, by, timeout);
				if (!by.equals(owner)) {
					fenced.countDown(); // takeOver releases the claimed lease right after fencing
				}
			}

		};
		TransactionListener pauseAtTheRecheck = new TransactionListener() {
			@Override
			public void onRecovered(String transactionId) {
				if (Thread.currentThread().getName().startsWith("tandem-lease-")) {
					pauseNextRead.set(true); // the next read of this thread is stillEntitled's
				}
			}
		};
		started(builder("claimant", true).decisionLog(claimantLog).listener(pauseAtTheRecheck));

		// The instance that dies with a decided transaction, and an open one on its other slot.
		AtomicReference<String> doomedId = new AtomicReference<>();
		ProtocolHook crash = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_DECISION && transactionId.equals(doomedId.get())) {
				throw new ProtocolHook.SimulatedCrashException(step);
			}
		};
		CrossClusterTransactionManager doomed = started(builder("pod-1", true).protocolHook(crash));
		String deadRun = lease("pod-1").incarnation();
		CrossClusterTransaction dead = doomed.begin();
		doomedId.set(dead.transactionId());
		send(dead, "east", "dead-east-");
		send(dead, "west", "dead-west-");
		assertThat(catchThrowable(dead::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		doomed.abandon();

		await().atMost(Duration.ofSeconds(30)).untilTrue(claimantPaused); // re-check passed, paused before fencing
		InstanceLease claimantLease = lease("claimant");
		await().atMost(Duration.ofSeconds(10))
			.until(() -> System.currentTimeMillis() > claimantLease.expiresAtMs() + 200); // the claimant's own lease expires

		// The dead instance is restarted: a fresh lease (the claimant is not live), transactional ids of its own.
		CountDownLatch midCommit = new CountDownLatch(1);
		CountDownLatch goOn = new CountDownLatch(1);
		AtomicReference<String> newId = new AtomicReference<>();
		ProtocolHook slowCommit = (transactionId, step) -> {
			if (step == ProtocolStep.MID_COMMIT && transactionId.equals(newId.get())) {
				midCommit.countDown();
				try {
					goOn.await(120, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		};
		CrossClusterTransactionManager restarted = started(builder("pod-1", true).protocolHook(slowCommit));
		String newRun = lease("pod-1").incarnation();
		assertThat(newRun).isNotEqualTo(deadRun);
		assertThat(restarted.transactionalId("west", 0)).isEqualTo(this.topic + ".west.pod-1.0." + newRun);
		assertThat(doomed.transactionalId("west", 0)).isEqualTo(this.topic + ".west.pod-1.0." + deadRun);
		CrossClusterTransaction txn = restarted.begin();
		newId.set(txn.transactionId());
		send(txn, "east", "new-east-");
		send(txn, "west", "new-west-");
		CompletableFuture<Throwable> commit = CompletableFuture.supplyAsync(() -> catchThrowable(txn::commit));
		assertThat(midCommit.await(30, TimeUnit.SECONDS)).isTrue(); // decided, one cluster committed, not the other

		claimantWake.countDown(); // the claimant wakes up and fences, its re-check long stale
		assertThat(fenced.await(60, TimeUnit.SECONDS)).as("the claimant fenced and released").isTrue();
		goOn.countDown();
		assertThat(commit.get(60, TimeUnit.SECONDS)).isNull();
		assertThat(txn.state()).isEqualTo(TransactionState.COMMITTED);
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
			assertThat(committed("east")).filteredOn((v) -> v.startsWith("new-east-"))
				.containsExactlyInAnyOrder("new-east-0", "new-east-1", "new-east-2");
			assertThat(committed("west")).filteredOn((v) -> v.startsWith("new-west-"))
				.containsExactlyInAnyOrder("new-west-0", "new-west-1", "new-west-2");
			// the dead run's decided transaction, committed by whoever came first
			assertThat(committed("east")).filteredOn((v) -> v.startsWith("dead-east-")).hasSize(3);
			assertThat(committed("west")).filteredOn((v) -> v.startsWith("dead-west-")).hasSize(3);
		});
	}

	/**
	 * A decision log whose lease renewals fail while frozen (the process is paused); it never
	 * closes the shared log.
	 */
	static class FreezableLog extends ForwardingDecisionLog {

		final AtomicBoolean frozen = new AtomicBoolean();

		FreezableLog(DecisionLog delegate) {
			super(delegate);
		}

		@Override
		public InstanceLease renewLease(String idPrefix, String instanceId, String incarnation, Duration duration,
				Duration timeout) {
			if (this.frozen.get()) {
				throw new DecisionLogException("paused");
			}
			return super.renewLease(idPrefix, instanceId, incarnation, duration, timeout);
		}

		@Override
		public @Nullable InstanceLease renewHeldLease(String idPrefix, String instanceId, String incarnation,
				Duration duration, Duration timeout) {
			if (this.frozen.get()) {
				throw new DecisionLogException("paused");
			}
			return super.renewHeldLease(idPrefix, instanceId, incarnation, duration, timeout);
		}

		@Override
		public void close() {
		}

	}

}
