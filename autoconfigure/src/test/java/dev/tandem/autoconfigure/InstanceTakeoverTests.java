package dev.tandem.autoconfigure;

import java.time.Duration;
import java.util.List;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

import dev.tandem.actuate.HangingTransactionsGauge;
import dev.tandem.actuate.KafkaTransactionsEndpoint;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.DuplicateInstanceException;
import dev.tandem.transaction.HangingTransactions;
import dev.tandem.transaction.InDoubtTransactionException;
import dev.tandem.transaction.LeaseClaimedException;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;
import dev.tandem.transaction.Settlement;
import dev.tandem.transaction.TransactionIds;
import dev.tandem.transaction.TransactionState;
import dev.tandem.transaction.TransactionStatistics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Instances of one app on one shared decision log (an embedded Ratis peer standing in for the
 * remote coordinator), on two real 3-broker clusters: an instance killed at a protocol step that
 * never comes back is taken over by the other one once its lease expires; a second running
 * instance with the same instance id is refused at start-up.
 */
class InstanceTakeoverTests extends LeaseTrials {

	private final TransactionStatistics survivorStatistics = new TransactionStatistics();

	@Override
	String topicPrefix() {
		return "t-";
	}

	private CrossClusterTransactionManager manager(String instanceId, ProtocolHook hook,
			TransactionStatistics statistics) {
		return started(builder(instanceId, hook).listener(statistics));
	}

	/** Runs one transaction of 3 records per cluster on an instance that dies at the given step. */
	private String killedAt(ProtocolStep step) {
		CrossClusterTransactionManager doomed = manager("doomed", crashAt(step), new TransactionStatistics());
		CrossClusterTransaction txn = doomed.begin();
		for (int i = 0; i < 3; i++) {
			txn.send("east", new ProducerRecord<>(this.topic, "k" + i, "east-" + i), STRING, STRING);
			txn.send("west", new ProducerRecord<>(this.topic, "k" + i, "west-" + i), STRING, STRING);
		}
		assertThat(catchThrowable(txn::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		doomed.abandon(); // kill -9: producers left with the transaction open, lease not released
		return txn.transactionId();
	}

	private List<String> committed(String cluster) {
		return ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), this.topic);
	}

	@Test
	void aDecidedTransactionOfAnInstanceThatNeverReturnsIsCommittedEverywhereByAnotherInstance() throws Exception {
		CrossClusterTransactionManager survivor = manager("survivor", ProtocolHook.NONE, this.survivorStatistics);
		String id = killedAt(ProtocolStep.AFTER_DECISION);
		assertThat(log().state(id, Duration.ofSeconds(5))).isEqualTo(DecisionState.DECIDED);
		long killedAtMs = System.currentTimeMillis();
		await().atMost(RESUMES_WITHIN).untilAsserted(() -> {
			assertThat(committed("east")).containsExactlyInAnyOrder("east-0", "east-1", "east-2");
			assertThat(committed("west")).containsExactlyInAnyOrder("west-0", "west-1", "west-2");
		});
		long stallMs = System.currentTimeMillis() - killedAtMs;
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(log().state(id, Duration.ofSeconds(5))).isEqualTo(DecisionState.COMPLETED));
		assertThat(this.survivorStatistics.snapshot().recovered()).isEqualTo(1);
		assertThat(this.survivorStatistics.snapshot().heuristic()).isZero();
		assertThat(lease("doomed").claimedBy()).isEqualTo(survivor.owner());
		assertThat(lease("doomed").takenOver()).isTrue();
		// the same in the app's actuator: who is alive, who took over whom
		KafkaTransactionsEndpoint.LeasesDescriptor leases = new KafkaTransactionsEndpoint(survivor,
				this.survivorStatistics, log(), Duration.ofSeconds(5))
			.transactions()
			.leases();
		assertThat(leases.unavailable()).isNull();
		assertThat(leases.instances()).filteredOn((lease) -> lease.owner().equals(this.topic + ".doomed"))
			.singleElement()
			.satisfies((lease) -> {
				assertThat(lease.self()).isFalse();
				assertThat(lease.expired()).isTrue();
				assertThat(lease.claimedBy()).isEqualTo(survivor.owner());
				assertThat(lease.takenOver()).isTrue();
				assertThat(lease.released()).isFalse();
				assertThat(lease.pastRuns()).as("the doomed instance's one run holds it").isEmpty();
			});
		assertThat(leases.instances()).filteredOn(KafkaTransactionsEndpoint.LeaseDescriptor::self)
			.singleElement()
			.satisfies((lease) -> {
				assertThat(lease.owner()).isEqualTo(survivor.owner());
				assertThat(lease.expired()).isFalse();
			});
		System.out.printf("decided transaction of a dead instance visible everywhere %d ms after the kill (lease %d ms)%n",
				stallMs, LEASE.toMillis());
	}

	/** A started instance of the app that reads but takes nothing over (leases off). */
	private CrossClusterTransactionManager observer() {
		CrossClusterTransactionManager observer = CrossClusterTransactionManager.builder()
			.cluster("east", clientConfig("east"))
			.cluster("west", clientConfig("west"))
			.idPrefix(this.topic)
			.instanceId("observer")
			.decisionLog(log())
			.transactionTimeout(Duration.ofMinutes(5))
			.leaseTimeout(Duration.ZERO)
			.build();
		observer.start();
		this.managers.add(observer);
		return observer;
	}

	@Test
	void anOpenTransactionOfAnInstanceKilledWithoutASurvivorIsListedAsHangingWithinOneLeaseTimeout() {
		// an instance of the app that reads but takes nothing over (leases off): no survivor
		CrossClusterTransactionManager observer = observer();
		io.micrometer.core.instrument.simple.SimpleMeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
		HangingTransactionsGauge gauge = new HangingTransactionsGauge(observer, meters, Duration.ofMillis(200),
				Duration.ofSeconds(5));
		killedAt(ProtocolStep.AFTER_PREPARE);
		long killedAtMs = System.currentTimeMillis();
		await().atMost(LEASE.plus(Duration.ofSeconds(10))).untilAsserted(() -> {
			HangingTransactions.Report report = observer.hangingTransactions(Duration.ofSeconds(5));
			assertThat(report.unavailable()).isEmpty();
			assertThat(report.transactions()).extracting(HangingTransactions.Hanging::cluster)
				.containsExactlyInAnyOrder("east", "west");
		});
		long listedAfterMs = System.currentTimeMillis() - killedAtMs;
		await().atMost(Duration.ofSeconds(5))
			.until(() -> meters.get("tandem.transaction.hanging").gauge().value() == 2.0);
		assertThat(listedAfterMs).isLessThan(LEASE.plus(Duration.ofSeconds(10)).toMillis());
		assertThat(observer.hangingTransactions(Duration.ofSeconds(5)).transactions()).allSatisfy((hanging) -> {
			assertThat(hanging.owner()).isEqualTo(this.topic + ".doomed");
			assertThat(hanging.transactionalId()).startsWith(this.topic + "." + hanging.cluster() + ".doomed.");
			assertThat(hanging.state()).isEqualTo("Ongoing");
			assertThat(hanging.partitions()).isPositive();
			assertThat(hanging.reason()).contains("lease expired").contains("nobody claimed it");
		});
		// the same in the app's actuator
		assertThat(new KafkaTransactionsEndpoint(observer, new TransactionStatistics(), log(), Duration.ofSeconds(5))
			.transactions()
			.hanging()
			.transactions()).extracting(HangingTransactions.Hanging::owner)
			.containsOnly(this.topic + ".doomed")
			.hasSize(2);
		HangingTransactions.Hanging east = observer.hangingTransactions(Duration.ofSeconds(5)).transactions()
			.stream()
			.filter((hanging) -> hanging.cluster().equals("east"))
			.findFirst()
			.orElseThrow();
		// it pins the last stable offset of the partitions it holds: a record committed after it there is
		// not visible (one per partition of the topic is written)
		commitAfter("east", "later-east");
		assertThat(committed("east")).hasSizeLessThan(3);
		// an operator's abort (not decided): the LSO moves on, the doomed records stay invisible
		new KafkaTransactionsEndpoint(observer, new TransactionStatistics(), log(), Duration.ofSeconds(5))
			.abortHanging("east", east.transactionalId());
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(committed("east")).containsExactlyInAnyOrder("later-east", "later-east",
					"later-east"));
		HangingTransactions.Hanging west = observer.hangingTransactions(Duration.ofSeconds(5)).transactions()
			.stream()
			.filter((hanging) -> hanging.cluster().equals("west"))
			.findFirst()
			.orElseThrow();
		// west still hangs (the marker topic's LSO too, which other tests read): abort it as well
		observer.abortHanging("west", west.transactionalId(), Duration.ofSeconds(5));
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(observer.hangingTransactions(Duration.ofSeconds(5)).transactions()).isEmpty());
		assertThat(committed("west")).isEmpty();
		await().atMost(Duration.ofSeconds(5))
			.until(() -> meters.get("tandem.transaction.hanging").gauge().value() == 0.0);
		gauge.close();
	}

	@Test
	void aHangingParticipantOfADecidedTransactionIsNeverAbortedByHand() {
		CrossClusterTransactionManager observer = observer();
		String id = killedAt(ProtocolStep.AFTER_DECISION);
		HangingTransactions.Hanging west = await().atMost(LEASE.plus(Duration.ofSeconds(10)))
			.until(() -> observer.hangingTransactions(Duration.ofSeconds(5)).transactions()
				.stream()
				.filter((hanging) -> hanging.cluster().equals("west"))
				.findFirst()
				.orElse(null), java.util.Objects::nonNull);
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> new KafkaTransactionsEndpoint(observer, new TransactionStatistics(), log(),
					Duration.ofSeconds(5))
				.abortHanging("west", west.transactionalId()))
			.withMessageContaining("participant of decided transaction " + id)
			.withMessageContaining("must commit");
		assertThat(log().state(id, Duration.ofSeconds(5))).isEqualTo(DecisionState.DECIDED);
		// what resolves it: the decision's commit, settled by hand
		assertThat(observer.settle(id, Settlement.COMMIT)).isEqualTo(TransactionState.COMMITTED);
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			assertThat(observer.hangingTransactions(Duration.ofSeconds(5)).transactions()).isEmpty();
			assertThat(committed("east")).containsExactlyInAnyOrder("east-0", "east-1", "east-2");
			assertThat(committed("west")).containsExactlyInAnyOrder("west-0", "west-1", "west-2");
		});
	}

	@Test
	void aTransactionKilledMidCommitEndsCommittedOnEveryCluster() {
		manager("survivor", ProtocolHook.NONE, this.survivorStatistics);
		killedAt(ProtocolStep.MID_COMMIT);
		await().atMost(RESUMES_WITHIN).untilAsserted(() -> {
			assertThat(committed("east")).containsExactlyInAnyOrder("east-0", "east-1", "east-2");
			assertThat(committed("west")).containsExactlyInAnyOrder("west-0", "west-1", "west-2");
		});
		assertThat(this.survivorStatistics.snapshot().heuristic()).isZero();
	}

	@Test
	void anUndecidedTransactionOfAnInstanceThatNeverReturnsIsAbortedAndStopsHoldingBackReaders() {
		manager("survivor", ProtocolHook.NONE, this.survivorStatistics);
		String id = killedAt(ProtocolStep.AFTER_PREPARE);
		commitAfter("east", "after-east");
		commitAfter("west", "after-west");
		// Until the dead instance's open transactions abort, the last stable offset stays before
		// them and read_committed readers see nothing later; the takeover fences them.
		await().atMost(RESUMES_WITHIN).untilAsserted(() -> {
			assertThat(committed("east")).containsExactly("after-east", "after-east", "after-east");
			assertThat(committed("west")).containsExactly("after-west", "after-west", "after-west");
		});
		assertThat(log().state(id, Duration.ofSeconds(5))).isIn(DecisionState.UNKNOWN, DecisionState.ABORTED);
	}

	/**
	 * A clean close (a scale-down, a rolling deploy) while a decided transaction is committed on
	 * east but cannot commit on west yet: the instance never returns. Released, its lease would
	 * never be claimed, and west's participant would stay open until the brokers' transaction
	 * timeout aborted it there (5 minutes here): east committed, west aborted. The close leaves the
	 * lease to expire instead, and the survivor commits west.
	 */
	@Test
	void aCleanCloseWithADecidedTransactionNotYetCommittedLeavesItToASurvivor() throws Exception {
		CrossClusterTransactionManager survivor = manager("survivor", ProtocolHook.NONE, this.survivorStatistics);
		List<Integer> west = kafka.cluster("west").brokerIds();
		ProtocolHook stopWest = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_DECISION) {
				kafka.cluster("west").stopBroker(west.get(1));
				kafka.cluster("west").stopBroker(west.get(2));
			}
		};
		CrossClusterTransactionManager closing = started(
				builder("closing", stopWest).commitTimeout(Duration.ofSeconds(3)).listener(new TransactionStatistics()));
		CrossClusterTransaction txn = closing.begin();
		try {
			for (int i = 0; i < 3; i++) {
				txn.send("east", new ProducerRecord<>(this.topic, "k" + i, "east-" + i), STRING, STRING);
				txn.send("west", new ProducerRecord<>(this.topic, "k" + i, "west-" + i), STRING, STRING);
			}
			assertThat(catchThrowable(txn::commit)).isInstanceOf(InDoubtTransactionException.class);
			assertThat(closing.inDoubtTransactionIds()).containsExactly(txn.transactionId());
			closing.close(); // clean, and never started again
		}
		finally {
			kafka.cluster("west").restartBroker(west.get(1));
			kafka.cluster("west").restartBroker(west.get(2));
		}
		assertThat(lease("closing").released()).as("left to expire, not released").isFalse();
		await().atMost(RESUMES_WITHIN).untilAsserted(() -> {
			assertThat(committed("east")).containsExactlyInAnyOrder("east-0", "east-1", "east-2");
			assertThat(committed("west")).containsExactlyInAnyOrder("west-0", "west-1", "west-2");
		});
		assertThat(lease("closing").claimedBy()).isEqualTo(survivor.owner());
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(log().state(txn.transactionId(), Duration.ofSeconds(5)))
				.isEqualTo(DecisionState.COMPLETED));
		assertThat(this.survivorStatistics.snapshot().heuristic()).isZero();
	}

	@Test
	void aSecondRunningInstanceWithTheSameIdIsRefusedAtStartUp() {
		CrossClusterTransactionManager first = manager("router-0", ProtocolHook.NONE, new TransactionStatistics());
		assertThatExceptionOfType(DuplicateInstanceException.class)
			.isThrownBy(() -> manager("router-0", ProtocolHook.NONE, new TransactionStatistics()))
			.withMessageContaining("router-0")
			.satisfies((ex) -> assertThat(ex.getOwner()).isEqualTo(first.owner()));
		// The first keeps working, alone.
		CrossClusterTransaction txn = first.begin();
		txn.send("east", new ProducerRecord<>(this.topic, "k", "east-ok"), STRING, STRING);
		txn.send("west", new ProducerRecord<>(this.topic, "k", "west-ok"), STRING, STRING);
		txn.commit();
		// commitTransaction() returns before the commit markers reach the partitions
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
			assertThat(committed("east")).containsExactly("east-ok");
			assertThat(committed("west")).containsExactly("west-ok");
		});
	}

	@Test
	void aRestartAfterACrashWaitsForTheDeadRunsLeaseAndRecoversItsDecision() {
		String id = killedAt(ProtocolStep.AFTER_DECISION);
		CrossClusterTransactionManager restarted = manager("doomed", ProtocolHook.NONE, this.survivorStatistics);
		assertThat(restarted.leaseLostTo()).isNull();
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
			assertThat(committed("east")).containsExactlyInAnyOrder("east-0", "east-1", "east-2");
			assertThat(committed("west")).containsExactlyInAnyOrder("west-0", "west-1", "west-2");
		});
		assertThat(log().state(id, Duration.ofSeconds(5))).isIn(DecisionState.DECIDED, DecisionState.COMPLETED);
	}

	@Test
	void aRunWhoseLeaseWasTakenOverCanNoLongerDecideButANewRunCan() {
		CrossClusterTransactionManager survivor = manager("survivor", ProtocolHook.NONE, this.survivorStatistics);
		// A run that pauses (GC, a partition from the coordinator) longer than its lease.
		String paused = this.topic + ".paused";
		log().renewLease(this.topic, "paused", "run-1", Duration.ofMillis(300), Duration.ofSeconds(5));
		await().atMost(RESUMES_WITHIN).untilAsserted(() -> assertThat(lease("paused")).satisfies((lease) -> {
			assertThat(lease.claimedBy()).isEqualTo(survivor.owner());
			assertThat(lease.takenOver()).isTrue();
		}));
		Decision late = new Decision(this.topic + "-late", paused, System.currentTimeMillis(),
				List.of(new ParticipantRecord("east", this.topic + ".east.paused.0", 1L, (short) 0, "tandem-markers", 0, 0L)));
		assertThatExceptionOfType(LeaseClaimedException.class)
			.isThrownBy(() -> log().decide(late, "run-1", Duration.ofSeconds(5)))
			.withMessageContaining(survivor.owner());
		assertThat(log().state(late.transactionId(), Duration.ofSeconds(5))).isEqualTo(DecisionState.UNKNOWN);
		assertThat(log().renewLease(this.topic, "paused", "run-1", Duration.ofSeconds(30), Duration.ofSeconds(5))
			.isHeldBy("run-1")).isFalse();
		// A restart of that instance gets a fresh lease, and decides again.
		assertThat(log().renewLease(this.topic, "paused", "run-2", Duration.ofSeconds(30), Duration.ofSeconds(5))
			.isHeldBy("run-2")).isTrue();
		assertThatExceptionOfType(LeaseClaimedException.class)
			.isThrownBy(() -> log().decide(late, "run-1", Duration.ofSeconds(5)))
			.withMessageContaining("run-2");
		assertThat(log().decide(late, "run-2", Duration.ofSeconds(5))).isEqualTo(late);
	}

	@Test
	void anOperatorSettlesAStuckDecisionByHandAndNeverAbortsADecidedOne() {
		// Leases off: nobody takes the dead instance over, its decided transaction is stuck.
		CrossClusterTransactionManager doomed = managerWithoutLease("doomed", crashAt(ProtocolStep.AFTER_DECISION));
		CrossClusterTransaction txn = doomed.begin();
		txn.send("east", new ProducerRecord<>(this.topic, "k", "east-stuck"), STRING, STRING);
		txn.send("west", new ProducerRecord<>(this.topic, "k", "west-stuck"), STRING, STRING);
		assertThat(catchThrowable(txn::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		doomed.abandon();
		CrossClusterTransactionManager operator = managerWithoutLease("operator", ProtocolHook.NONE);
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> operator.settle(txn.transactionId(), Settlement.ABORT))
			.withMessageContaining("can never abort");
		assertThat(operator.settle(txn.transactionId(), Settlement.COMMIT)).isEqualTo(TransactionState.COMMITTED);
		assertThat(committed("east")).containsExactly("east-stuck");
		assertThat(committed("west")).containsExactly("west-stuck");
		assertThat(log().state(txn.transactionId(), Duration.ofSeconds(5))).isEqualTo(DecisionState.COMPLETED);
		// An app settles only its own transactions: another app's id is refused, and nothing is recorded.
		String othersId = TransactionIds.newId("other-app.router-0");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> operator.settle(othersId, Settlement.ABORT))
			.withMessageContaining("not a transaction of this app");
		assertThat(log().state(othersId, Duration.ofSeconds(5))).isEqualTo(DecisionState.UNKNOWN);
		// A transaction without a decision can only be aborted, which makes a late decision fail.
		String undecided = TransactionIds.newId(this.topic + ".doomed");
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> operator.settle(undecided, Settlement.COMMIT))
			.withMessageContaining("presumed abort");
		assertThat(operator.settle(undecided, Settlement.ABORT)).isEqualTo(TransactionState.ABORTED);
		assertThat(log().state(undecided, Duration.ofSeconds(5))).isEqualTo(DecisionState.ABORTED);
	}

	private CrossClusterTransactionManager managerWithoutLease(String instanceId, ProtocolHook hook) {
		CrossClusterTransactionManager manager = CrossClusterTransactionManager.builder()
			.cluster("east", clientConfig("east"))
			.cluster("west", clientConfig("west"))
			.idPrefix(this.topic)
			.instanceId(instanceId)
			.decisionLog(log())
			.commitTimeout(Duration.ofSeconds(10))
			.leaseTimeout(Duration.ZERO)
			.protocolHook(hook)
			.build();
		manager.start();
		this.managers.add(manager);
		return manager;
	}

}
