package dev.tandem.coordinator.state;

import java.util.List;

import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.TransactionIds;
import org.junit.jupiter.api.Test;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link DecisionTable} does with entries it must not apply (past the {@link CommandLimits},
 * ids of another owner), the per-owner counts behind the quotas, and the retention of leases and
 * of their owners' decisions.
 */
class DecisionTableLimitsTests {

	private final DecisionTable table = new DecisionTable();

	@Test
	void anEntryPastTheLimitsIsRefusedWholeAndLeavesTheTableAsItWas() {
		String id = TransactionIds.newId("app.i1");
		this.table.apply(Command.of(1, new Operation.RenewLease("app", "i1", "run-1", 1_000)));
		// The entry of the attack: a run of 32 KiB, which the result would have written back longer
		Command attack = new Command(2, List.of(new Operation.Complete("t-0"),
				new Operation.Decide(decision(id, "app.i1", 2), "r".repeat(DecisionCodec.MAX_STRING_BYTES))));
		List<OperationResult> results = this.table.apply(attack, Grant.ALL);
		assertThat(results).hasSize(2).allSatisfy((result) -> assertThat(result)
			.isEqualTo(new OperationResult.Refused("Decide: incarnation of at least 32768 bytes exceeds the limit of "
					+ CommandLimits.MAX_INCARNATION_BYTES + " bytes")));
		assertThat(this.table.records()).isEmpty();
		assertThat(MessageCodec.decodeResults(MessageCodec.encodeResults(results))).isEqualTo(results);
	}

	@Test
	void aDecideOrAbortOfAnIdRecordedForAnotherOwnerIsRefusedUnderAnAppsGrant() {
		String id = TransactionIds.newId("orders.i1");
		this.table.apply(Command.of(1, new Operation.Decide(decision(id, "orders.i1", 1))));
		Grant orders = new Grant("orders-app", false, List.of("orders"));
		List<OperationResult> results = this.table.apply(new Command(2,
				List.of(new Operation.Abort(id, "orders.i2"), new Operation.Decide(decision(id, "orders.i2", 2)))), orders);
		assertThat(results).allSatisfy((result) -> assertThat(result).isInstanceOf(OperationResult.Refused.class)
			.hasToString("Refused[reason=transaction " + id + " belongs to another owner than orders.i2]"));
		assertThat(this.table.record(id).owner()).isEqualTo("orders.i1");
		// under the open policy (no authorization) another decision of the id is refused too, never echoed
		assertThat(this.table.apply(Command.of(3, new Operation.Decide(decision(id, "orders.i2", 3))), Grant.ALL))
			.singleElement()
			.isInstanceOf(OperationResult.Refused.class);
	}

	@Test
	void openDecisionsAndLeasesAreCountedOverTheOwnersAGrantCovers() {
		for (String owner : List.of("orders.i1", "orders.i1", "orders.i2", "orders-eu.i1", "ordersx.i1", "billing.i1")) {
			this.table.apply(Command.of(1, new Operation.Decide(decision(TransactionIds.newId(owner), owner, 1))));
		}
		String completed = TransactionIds.newId("orders.i3");
		this.table.apply(Command.of(1, new Operation.Decide(decision(completed, "orders.i3", 1))));
		this.table.apply(Command.of(2, new Operation.Complete(completed)));
		this.table.apply(Command.of(2, new Operation.Abort(TransactionIds.newId("orders.i4"), "orders.i4")));
		for (String instance : List.of("i1", "i2")) {
			this.table.apply(Command.of(1, new Operation.RenewLease("orders", instance, "run", 1_000)));
		}
		this.table.apply(Command.of(1, new Operation.RenewLease("orders-eu", "i1", "run", 1_000)));
		Grant orders = new Grant("orders-app", false, List.of("orders"));
		assertThat(this.table.openDecisions(orders)).isEqualTo(3);
		assertThat(this.table.leaseCount(orders)).isEqualTo(2);
		assertThat(this.table.openDecisions(new Grant("two", false, List.of("orders", "billing")))).isEqualTo(4);
		assertThat(this.table.openDecisions(Grant.ALL)).isZero();
		assertThat(this.table.hasLease("orders.i1")).isTrue();
		assertThat(this.table.hasLease("orders.i3")).isFalse();
	}

	@Test
	void aPurgeRemovesLeasesGoneLongerThanTheRetentionAndADayAndTheirOwnersDecisionsOnly() {
		String ofGone = TransactionIds.newId("app.gone");
		String ofLive = TransactionIds.newId("app.live");
		String ofLeaseless = TransactionIds.newId("app.leaseless");
		this.table.apply(Command.of(0, new Operation.RenewLease("app", "gone", "run", 1_000)));
		this.table.apply(Command.of(0, new Operation.Decide(decision(ofGone, "app.gone", 0))));
		this.table.apply(Command.of(0, new Operation.Decide(decision(ofLeaseless, "app.leaseless", 0))));
		long day = DecisionTable.ABANDONED_AFTER_MS;
		this.table.apply(Command.of(day, new Operation.RenewLease("app", "live", "run", 1_000)));
		this.table.apply(Command.of(day, new Operation.Decide(decision(ofLive, "app.live", day))));
		// with 5,000 ms retention the gone lease (expired at 1,000) stays a day after its expiry, whatever the retention
		assertThat(this.table.apply(Command.of(1_000 + day, new Operation.Purge(0))))
			.containsExactly(new OperationResult.Purged(0));
		assertThat(this.table.apply(Command.of(1_001 + day, new Operation.Purge(5_000))))
			.containsExactly(new OperationResult.Purged(2));
		assertThat(this.table.hasLease("app.gone")).isFalse();
		assertThat(this.table.state(ofGone)).isEqualTo(DecisionState.UNKNOWN);
		assertThat(this.table.state(ofLeaseless)).isEqualTo(DecisionState.DECIDED);
		assertThat(this.table.state(ofLive)).isEqualTo(DecisionState.DECIDED);
		assertThat(this.table.hasLease("app.live")).isTrue();
		assertThat(this.table.counts()).isEqualTo(new DecisionTable.Counts(2, 0, 0));
		assertThat(this.table.openDecisions(new Grant("app", false, List.of("app")))).isEqualTo(2);
	}

}
