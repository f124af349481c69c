package dev.tandem.coordinator.state;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.InstanceLease.PastRun;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The run history a lease of the {@link DecisionTable} keeps (issue 26 item 1): the runs that held
 * it before its holder, the released marker, pruning, and their encoding in commands, replies and
 * snapshots.
 */
class DecisionTableRunHistoryTests {

	private static final long HOUR = InstanceLease.RUN_HISTORY_MS;

	private final DecisionTable table = new DecisionTable();

	private final List<Command> log = new ArrayList<>();

	/** Applies a command as a replica does, and keeps it for a replay. */
	private OperationResult apply(long atMs, Operation operation) {
		Command command = Command.of(atMs, operation);
		this.log.add(command);
		return this.table.apply(command).get(0);
	}

	private InstanceLease take(String instance, String run, long atMs) {
		return lease(apply(atMs, new Operation.RenewLease("app", instance, run, 1000)));
	}

	private InstanceLease renewHeld(String instance, String run, long atMs) {
		return lease(apply(atMs, new Operation.RenewLease("app", instance, run, 1000, true)));
	}

	private InstanceLease release(String owner, String by, long atMs) {
		return lease(apply(atMs, new Operation.ReleaseLease(owner, by, true)));
	}

	private InstanceLease claim(String owner, String claimant, long atMs) {
		return lease(apply(atMs, new Operation.ClaimLease(owner, claimant)));
	}

	private static InstanceLease lease(OperationResult result) {
		return ((OperationResult.LeaseAfter) result).lease();
	}

	private InstanceLease stored(String owner) {
		return this.table.leases().stream().filter((lease) -> lease.owner().equals(owner)).findFirst().orElseThrow();
	}

	@Test
	void eachRunThatTakesTheLeaseRecordsEveryRunBeforeIt() {
		take("a", "run-a", 0);
		renewHeld("a", "run-a", 500);
		InstanceLease b = take("a", "run-b", 1600);
		assertThat(b.isHeldBy("run-b")).isTrue();
		assertThat(b.pastRuns()).containsExactly(new PastRun("run-a", 1500));
		InstanceLease c = take("a", "run-c", 2700);
		assertThat(c.pastRuns()).containsExactly(new PastRun("run-a", 1500), new PastRun("run-b", 2600));
		assertThat(c.runsToFence()).containsExactly("run-a", "run-b", "run-c");
		assertThat(renewHeld("a", "run-c", 3000).pastRuns()).as("a renewal keeps the history").hasSize(2);
		assertThat(renewHeld("a", "run-b", 3100).isHeldBy("run-b")).as("run-b left for good").isFalse();
		assertThat(this.table.decide(decision("t1", "app.a", 3100), "run-a"))
			.isInstanceOf(OperationResult.OwnerClaimed.class);
	}

	@Test
	void aReleaseByTheHolderKeepsTheLeaseMarkedReleasedAndTheNextRunTakesItAtOnce() {
		take("a", "run-a", 0);
		take("a", "run-b", 1100);
		InstanceLease released = release("app.a", "run-b", 1200);
		assertThat(released.released()).isTrue();
		assertThat(released.incarnation()).isEqualTo("run-b");
		assertThat(released.expiresAtMs()).as("ended when released").isEqualTo(1200);
		assertThat(released.pastRuns()).containsExactly(new PastRun("run-a", 1000));
		assertThat(released.isHeldBy("run-b")).isFalse();
		assertThat(released.isLeftBy("run-b")).isTrue();
		assertThat(released.isLeftBy("run-a")).isTrue();

		assertThat(renewHeld("a", "run-b", 1250).isHeldBy("run-b")).as("the released run never renews it").isFalse();
		assertThat(this.table.decide(decision("t1", "app.a", 1250), "run-b"))
			.isEqualTo(new OperationResult.OwnerClaimed("t1", "nobody (run run-b released the lease)"));
		assertThat(this.table.state("t1")).isEqualTo(DecisionState.UNKNOWN);
		take("z", "run-z", 1250);
		assertThat(claim("app.a", "app.z", 1260).isClaimed()).as("a released lease is never claimed").isFalse();

		InstanceLease c = take("a", "run-c", 1300);
		assertThat(c.isHeldBy("run-c")).as("no wait for an expiry").isTrue();
		assertThat(c.released()).isFalse();
		assertThat(c.pastRuns()).containsExactly(new PastRun("run-a", 1000), new PastRun("run-b", 1200));
	}

	@Test
	void theReleaseOfClientsBeforeRunHistoriesStillRemovesTheLease() {
		take("a", "run-a", 0);
		take("a", "run-b", 1100);
		assertThat(lease(apply(1200, new Operation.ReleaseLease("app.a", "run-b")))).isNull();
		assertThat(this.table.hasLease("app.a")).isFalse();
		assertThat(take("a", "run-c", 1300).pastRuns()).isEmpty();
	}

	@Test
	void aClaimAndATakeoverKeepTheHistoryAndTheNextRunAddsTheClaimedRun() {
		take("a", "run-a1", 0);
		take("a", "run-a2", 1100);
		take("b", "run-b", 2000);
		InstanceLease claimed = claim("app.a", "app.b", 2200);
		assertThat(claimed.claimedBy()).isEqualTo("app.b");
		assertThat(stored("app.a").pastRuns()).containsExactly(new PastRun("run-a1", 1000));
		assertThat(stored("app.a").runsToFence()).containsExactly("run-a1", "run-a2");
		assertThat(release("app.a", "app.b", 2300).takenOver()).isTrue();
		assertThat(stored("app.a").pastRuns()).containsExactly(new PastRun("run-a1", 1000));
		InstanceLease next = take("a", "run-a3", 2400);
		assertThat(next.isHeldBy("run-a3")).isTrue();
		assertThat(next.pastRuns()).containsExactly(new PastRun("run-a1", 1000), new PastRun("run-a2", 2100));
	}

	@Test
	void runsThatLeftMoreThanAnHourAgoArePrunedWhenTheNextRunTakesTheLease() {
		take("a", "run-1", 0);
		take("a", "run-2", 1100);
		long later = 2100 + HOUR;
		InstanceLease three = take("a", "run-3", later);
		assertThat(three.pastRuns()).as("run-1 left at 1000, over an hour before").containsExactly(
				new PastRun("run-2", 2100));
		assertThat(take("a", "run-4", later + 1001).pastRuns()).as("run-2 left at 2100, over an hour before")
			.containsExactly(new PastRun("run-3", later + 1000));
	}

	@Test
	void theHistoryKeepsTheNewestRunsOnly() {
		long at = 0;
		for (int run = 0; run <= InstanceLease.MAX_PAST_RUNS + 5; run++) {
			take("a", "run-" + run, at);
			release("app.a", "run-" + run, at + 1);
			at += 2;
		}
		InstanceLease last = take("a", "run-last", at);
		assertThat(last.pastRuns()).hasSize(InstanceLease.MAX_PAST_RUNS);
		assertThat(last.pastRuns().get(0).incarnation()).isEqualTo("run-6");
		assertThat(last.pastRuns().get(InstanceLease.MAX_PAST_RUNS - 1).incarnation())
			.isEqualTo("run-" + (InstanceLease.MAX_PAST_RUNS + 5));
	}

	@Test
	void aRunThatTakesTheLeaseBackLeavesTheHistoryWithoutItself() {
		take("a", "run-1", 0);
		take("a", "run-2", 1100);
		InstanceLease back = take("a", "run-1", 2200);
		assertThat(back.isHeldBy("run-1")).as("a take (a client that does not say it held it)").isTrue();
		assertThat(back.pastRuns()).containsExactly(new PastRun("run-2", 2100));
	}

	@Test
	void replayingTheLogGivesTheSameHistoriesOnAnotherReplica() {
		take("a", "run-a1", 0);
		take("b", "run-b", 0);
		take("a", "run-a2", 1100);
		release("app.a", "run-a2", 1200);
		take("a", "run-a3", 1300);
		renewHeld("a", "run-a3", 1400);
		take("c", "run-c", 1600);
		claim("app.b", "app.c", 1600);
		apply(1700, new Operation.Purge(10));

		DecisionTable replica = new DecisionTable();
		for (Command command : this.log) {
			replica.apply(MessageCodec.decodeCommand(MessageCodec.encodeCommand(command)));
		}
		assertThat(replica.leases()).containsExactlyElementsOf(this.table.leases());
		assertThat(stored("app.a").pastRuns()).containsExactly(new PastRun("run-a1", 1000), new PastRun("run-a2", 1200));
	}

	@Test
	void aSnapshotKeepsTheHistoriesAndItsOlderLayoutIsAPrefix() throws IOException {
		this.table.decide(decision("t1", "app.a", 100));
		take("a", "run-a1", 0);
		take("a", "run-a2", 1100);
		take("b", "run-b1", 0);
		release("app.b", "run-b1", 200);
		take("c", "run-c", 0);
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		SnapshotCodec.writeSnapshot(this.table.records(), this.table.leases(), out);
		SnapshotCodec.Snapshot snapshot = SnapshotCodec.readFullSnapshot(new ByteArrayInputStream(out.toByteArray()));
		DecisionTable restored = new DecisionTable();
		restored.replaceWith(snapshot.records(), snapshot.leases());
		assertThat(restored.leases()).containsExactlyElementsOf(this.table.leases());
		assertThat(restored.leases()).filteredOn(InstanceLease::released).extracting(InstanceLease::owner)
			.containsExactly("app.b");
		assertThat(restored.inDoubt("app.a")).extracting(Decision::transactionId).containsExactly("t1");

		// the same leases without histories: the layout of a snapshot before run histories, which a
		// reader of that time stops after, so it reads a newer snapshot's records and leases
		List<InstanceLease> bare = this.table.leases().stream()
			.map((lease) -> lease.withHistory(List.of(), false))
			.toList();
		ByteArrayOutputStream old = new ByteArrayOutputStream();
		SnapshotCodec.writeSnapshot(this.table.records(), bare, old);
		byte[] newer = out.toByteArray();
		assertThat(newer.length).isGreaterThan(old.size());
		assertThat(Arrays.copyOf(newer, old.size())).isEqualTo(old.toByteArray());
		assertThat(SnapshotCodec.readFullSnapshot(new ByteArrayInputStream(old.toByteArray())).leases())
			.containsExactlyElementsOf(bare);
	}

	@Test
	void aSnapshotWithACorruptHistoryIsRefused() throws IOException {
		take("a", "run-a1", 0);
		take("a", "run-a2", 1100);
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		SnapshotCodec.writeSnapshot(this.table.records(), this.table.leases(), out);
		byte[] bytes = out.toByteArray();
		byte[] truncated = Arrays.copyOf(bytes, bytes.length - 3);
		assertThat(org.assertj.core.api.Assertions.catchThrowable(
				() -> SnapshotCodec.readFullSnapshot(new ByteArrayInputStream(truncated))))
			.isInstanceOf(DecisionCodecException.class);
	}

	@Test
	void theNewOperationQueryAndReplyRoundTripAndTheOlderReplyCarriesNoHistory() {
		Command command = Command.of(7, new Operation.ReleaseLease("app.a", "run-1", true));
		assertThat(MessageCodec.decodeCommand(MessageCodec.encodeCommand(command))).isEqualTo(command);
		Query query = new Query.LeasesQuery("app", true);
		assertThat(MessageCodec.decodeQuery(MessageCodec.encodeQuery(query))).isEqualTo(query);
		assertThat(MessageCodec.decodeQuery(MessageCodec.encodeQuery(new Query.LeasesQuery("app"))))
			.isEqualTo(new Query.LeasesQuery("app", false));

		take("a", "run-1", 0);
		take("a", "run-2", 1100);
		release("app.a", "run-2", 1200);
		QueryReply withRuns = this.table.answer(new Query.LeasesQuery("app", true));
		assertThat(MessageCodec.decodeReply(MessageCodec.encodeReply(withRuns))).isEqualTo(withRuns);
		InstanceLease read = ((QueryReply.LeasesReply) MessageCodec.decodeReply(MessageCodec.encodeReply(withRuns)))
			.leases().get(0);
		assertThat(read.released()).isTrue();
		assertThat(read.pastRuns()).containsExactly(new PastRun("run-1", 1000));

		QueryReply older = this.table.answer(new Query.LeasesQuery("app"));
		InstanceLease bare = ((QueryReply.LeasesReply) MessageCodec.decodeReply(MessageCodec.encodeReply(older)))
			.leases().get(0);
		assertThat(bare).isEqualTo(read.withHistory(List.of(), false));
	}

}
