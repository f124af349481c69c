package dev.tandem.coordinator.state;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lease rules of {@link DecisionTable} and their encoding.
 */
class DecisionTableLeaseTests {

	private final DecisionTable table = new DecisionTable();

	private InstanceLease renew(String instance, String incarnation, long atMs) {
		return this.table.renewLease(new Operation.RenewLease("app", instance, incarnation, 1000), atMs);
	}

	@Test
	void aFirstRenewalGrantsTheLeaseAndTheSameRunExtendsIt() {
		assertThat(renew("a", "run-1", 100)).isEqualTo(new InstanceLease("app.a", "app", "a", "run-1", 1100, null, false));
		assertThat(renew("a", "run-1", 600).expiresAtMs()).isEqualTo(1600);
	}

	@Test
	void anotherRunGetsTheLeaseOnlyOnceItExpired() {
		renew("a", "run-1", 100);
		assertThat(renew("a", "run-2", 1100).isHeldBy("run-1")).isTrue();
		assertThat(renew("a", "run-2", 1101).isHeldBy("run-2")).isTrue();
	}

	private InstanceLease renewHeld(String instance, String incarnation, long atMs) {
		return this.table.renewLease(new Operation.RenewLease("app", instance, incarnation, 1000, true), atMs);
	}

	@Test
	void aLeaseNeverReturnsToARunItLeft() {
		renew("a", "run-1", 100);
		assertThat(renewHeld("a", "run-1", 600).expiresAtMs()).isEqualTo(1600);
		assertThat(renewHeld("a", "run-1", 1700).isHeldBy("run-1")).as("expired, but nobody took it").isTrue();
		assertThat(renew("a", "run-2", 2800).isHeldBy("run-2")).isTrue();
		assertThat(renewHeld("a", "run-1", 3900)).as("run-2's lease expired: run-1 left it for good")
			.isEqualTo(new InstanceLease("app.a", "app", "a", "run-2", 3800, null, false,
					List.of(new InstanceLease.PastRun("run-1", 2700)), false));
		assertThat(this.table.decide(decision("t1", "app.a", 3900), "run-1"))
			.isInstanceOf(OperationResult.OwnerClaimed.class);
		assertThat(renew("a", "run-1", 3900).isHeldBy("run-1")).as("a take (a client that does not say it held it)")
			.isTrue();
	}

	@Test
	void aClaimedOrReleasedLeaseIsNeverRenewedAsHeld() {
		renew("a", "run-a", 0);
		renew("b", "run-b", 1500);
		this.table.claimLease("app.a", "app.b", 1600);
		assertThat(renewHeld("a", "run-a", 1700).claimedBy()).isEqualTo("app.b");
		renew("b", "run-b2", 5000);
		this.table.releaseLease("app.b", "run-b2");
		assertThat(renewHeld("b", "run-b2", 5100)).isNull();
		assertThat(this.table.leases("app")).extracting(InstanceLease::owner).containsExactly("app.a");
	}

	@Test
	void onlyALiveInstanceOfTheSameAppClaimsAnExpiredLease() {
		renew("a", "run-a", 0);
		renew("b", "run-b", 500);
		this.table.renewLease(new Operation.RenewLease("other-app", "c", "run-c", 5000), 500);
		assertThat(this.table.claimLease("app.a", "app.b", 1000).isClaimed()).as("not expired yet").isFalse();
		assertThat(this.table.claimLease("app.a", "other-app.c", 1200).isClaimed()).as("another app").isFalse();
		assertThat(this.table.claimLease("app.a", "app.b", 1600).isClaimed()).as("claimant expired").isFalse();
		renew("b", "run-b", 1600);
		assertThat(this.table.claimLease("app.a", "app.b", 1700).claimedBy()).isEqualTo("app.b");
		assertThat(this.table.claimLease("app.missing", "app.b", 1700)).isNull();
	}

	@Test
	void aClaimedOwnerCannotDecideNorRenewButANewRunCanOnceTakenOver() {
		renew("a", "run-a", 0);
		renew("b", "run-b", 1500);
		this.table.claimLease("app.a", "app.b", 1600);
		Decision late = decision("late", "app.a", 1600);
		assertThat(this.table.decide(late)).isEqualTo(new OperationResult.OwnerClaimed("late", "app.b"));
		assertThat(this.table.state("late")).isEqualTo(DecisionState.UNKNOWN);
		assertThat(renew("a", "run-a", 1700).isHeldBy("run-a")).as("the claimed run").isFalse();
		assertThat(renew("a", "run-a2", 1700).isHeldBy("run-a2")).as("a new run during the takeover").isFalse();
		assertThat(this.table.releaseLease("app.a", "app.b").takenOver()).isTrue();
		assertThat(this.table.decide(late)).isInstanceOf(OperationResult.OwnerClaimed.class);
		assertThat(renew("a", "run-a", 1800).isHeldBy("run-a")).as("the claimed run, after the takeover").isFalse();
		assertThat(renew("a", "run-a2", 1800).isHeldBy("run-a2")).as("a new run, after the takeover").isTrue();
		assertThat(this.table.decide(late)).isEqualTo(new OperationResult.Decided(late, true));
	}

	@Test
	void aClaimWhoseClaimantDiedCanBeClaimedAgainOrTakenBackByANewRun() {
		renew("a", "run-a", 0);
		renew("b", "run-b", 1500);
		renew("c", "run-c", 1500);
		this.table.claimLease("app.a", "app.b", 1600);
		assertThat(this.table.claimLease("app.a", "app.c", 2000).claimedBy()).as("b still live").isEqualTo("app.b");
		assertThat(this.table.claimLease("app.a", "app.c", 2400).claimedBy()).as("b still live at 2400").isEqualTo("app.b");
		renew("c", "run-c", 2400);
		assertThat(this.table.claimLease("app.a", "app.c", 2600).claimedBy()).isEqualTo("app.c");
		assertThat(renew("a", "run-a2", 4000).isHeldBy("run-a2")).as("c expired too: the new run recovers itself")
			.isTrue();
	}

	@Test
	void aHolderReleasesItsLeaseAndNobodyElseDoes() {
		renew("a", "run-a", 0);
		assertThat(this.table.releaseLease("app.a", "run-x")).isNotNull();
		assertThat(this.table.releaseLease("app.a", "app.b")).isNotNull();
		assertThat(this.table.releaseLease("app.a", "run-a")).isNull();
		assertThat(this.table.leases()).isEmpty();
	}

	@Test
	void purgeRemovesTakenOverLeasesExpiredLongerThanTheRetentionAndADay() {
		renew("a", "run-a", 0);
		renew("b", "run-b", 1500);
		this.table.claimLease("app.a", "app.b", 1600);
		this.table.releaseLease("app.a", "app.b");
		long day = DecisionTable.ABANDONED_AFTER_MS;
		assertThat(this.table.purge(5000, 10_000)).isZero();
		// expired at 1,000 and kept a day after that, whatever the (shorter) retention
		assertThat(this.table.purge(1_000 + day, 10_000)).isZero();
		assertThat(this.table.purge(1_001 + day, 10_000)).isEqualTo(1);
		assertThat(this.table.leases()).extracting(InstanceLease::owner).containsExactly("app.b");
	}

	@Test
	void appInDoubtListsEveryInstancesDecisionsOfTheAppOldestFirst() {
		this.table.decide(decision("t2", "app.b", 200));
		this.table.decide(decision("t1", "app.a", 100));
		this.table.decide(decision("t3", "app.a", 300));
		this.table.decide(decision("t4", "other.a", 50));
		this.table.decide(decision("t5", "apple.a", 60));
		this.table.complete("t3", 400);
		assertThat(this.table.appInDoubt("app")).extracting(Decision::transactionId).containsExactly("t1", "t2");
	}

	@Test
	void leaseOperationsResultsAndQueriesRoundTrip() {
		Command command = new Command(7, List.of(new Operation.RenewLease("app", "a", "run-1", 3000),
				new Operation.RenewLease("app", "a", "run-1", 3000, true),
				new Operation.ClaimLease("app.a", "app.b"), new Operation.ReleaseLease("app.a", "run-1")));
		assertThat(MessageCodec.decodeCommand(MessageCodec.encodeCommand(command))).isEqualTo(command);
		List<OperationResult> results = List.of(new OperationResult.OwnerClaimed("t", "app.b"),
				new OperationResult.LeaseAfter(null),
				new OperationResult.LeaseAfter(new InstanceLease("app.a", "app", "a", "run-1", 9, "app.b", true)));
		assertThat(MessageCodec.decodeResults(MessageCodec.encodeResults(results))).isEqualTo(results);
		for (Query query : List.of(new Query.LeasesQuery("app"), new Query.AppInDoubtQuery("app"))) {
			assertThat(MessageCodec.decodeQuery(MessageCodec.encodeQuery(query))).isEqualTo(query);
		}
		QueryReply reply = new QueryReply.LeasesReply(List.of(new InstanceLease("app.a", "app", "a", "r", 5, null, false)));
		assertThat(MessageCodec.decodeReply(MessageCodec.encodeReply(reply))).isEqualTo(reply);
	}

	@Test
	void aSnapshotKeepsTheLeasesAndASnapshotWithoutLeasesStillReads() throws IOException {
		this.table.decide(decision("t1", "app.a", 100));
		renew("a", "run-a", 0);
		renew("b", "run-b", 1500);
		this.table.claimLease("app.a", "app.b", 1600);
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		SnapshotCodec.writeSnapshot(this.table.records(), this.table.leases(), out);
		SnapshotCodec.Snapshot snapshot = SnapshotCodec.readFullSnapshot(new ByteArrayInputStream(out.toByteArray()));
		DecisionTable restored = new DecisionTable();
		restored.replaceWith(snapshot.records(), snapshot.leases());
		assertThat(restored.leases()).containsExactlyElementsOf(this.table.leases());
		assertThat(restored.inDoubt("app.a")).extracting(Decision::transactionId).containsExactly("t1");

		ByteArrayOutputStream withoutLeases = new ByteArrayOutputStream();
		SnapshotCodec.writeSnapshot(this.table.records(), withoutLeases);
		assertThat(SnapshotCodec.readFullSnapshot(new ByteArrayInputStream(withoutLeases.toByteArray())).leases())
			.isEmpty();
	}

}
