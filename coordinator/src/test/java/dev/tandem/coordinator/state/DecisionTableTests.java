package dev.tandem.coordinator.state;

import java.util.List;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import org.junit.jupiter.api.Test;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link DecisionTable}.
 */
class DecisionTableTests {

	private final DecisionTable table = new DecisionTable();

	@Test
	void decideRecordsADecidedTransaction() {
		Decision decision = decision("t1", "owner-a", 100);
		assertThat(this.table.decide(decision)).isEqualTo(new OperationResult.Decided(decision, true));
		assertThat(this.table.state("t1")).isEqualTo(DecisionState.DECIDED);
		assertThat(this.table.record("t1").decision()).isEqualTo(decision);
	}

	@Test
	void aRetriedDecideSucceedsUnchangedAndAnotherDecisionOfTheSameIdIsRefused() {
		Decision first = decision("t1", "owner-a", 100);
		this.table.decide(first);
		assertThat(this.table.decide(decision("t1", "owner-a", 100))).isEqualTo(new OperationResult.Decided(first, false));
		assertThat(this.table.decide(decision("t1", "owner-b", 999))).isEqualTo(new OperationResult.Refused(
				"transaction t1 is decided already with another decision, and a decision never changes"));
		assertThat(this.table.inDoubt("owner-a")).containsExactly(first);
		assertThat(this.table.inDoubt("owner-b")).isEmpty();
	}

	@Test
	void decideOfACompletedTransactionSucceedsForItsDecisionAndKeepsItCompleted() {
		Decision first = decision("t1", "owner-a", 100);
		this.table.decide(first);
		this.table.complete("t1", 200);
		assertThat(this.table.decide(decision("t1", "owner-a", 100))).isEqualTo(new OperationResult.Decided(first, false));
		assertThat(this.table.decide(decision("t1", "owner-a", 300))).isInstanceOf(OperationResult.Refused.class);
		assertThat(this.table.state("t1")).isEqualTo(DecisionState.COMPLETED);
	}

	@Test
	void decideAfterAbortIsRejected() {
		assertThat(this.table.abort("t1", "owner-a", 50)).isEqualTo(DecisionState.ABORTED);
		assertThat(this.table.decide(decision("t1", "owner-a", 100))).isEqualTo(new OperationResult.AbortConflict("t1"));
		assertThat(this.table.state("t1")).isEqualTo(DecisionState.ABORTED);
		assertThat(this.table.inDoubt("owner-a")).isEmpty();
	}

	@Test
	void abortNeverOverridesADecision() {
		this.table.decide(decision("t1", "owner-a", 100));
		assertThat(this.table.abort("t1", "owner-a", 150)).isEqualTo(DecisionState.DECIDED);
		this.table.complete("t1", 200);
		assertThat(this.table.abort("t1", "owner-a", 250)).isEqualTo(DecisionState.COMPLETED);
		assertThat(this.table.state("t1")).isEqualTo(DecisionState.COMPLETED);
	}

	@Test
	void completeIsIdempotentAndANoOpForUnknownOrAbortedIds() {
		this.table.decide(decision("t1", "owner-a", 100));
		assertThat(this.table.complete("t1", 200)).isEqualTo(DecisionState.COMPLETED);
		assertThat(this.table.complete("t1", 300)).isEqualTo(DecisionState.COMPLETED);
		assertThat(this.table.record("t1").finishedAtMs()).isEqualTo(200);
		assertThat(this.table.complete("nope", 300)).isEqualTo(DecisionState.UNKNOWN);
		assertThat(this.table.state("nope")).isEqualTo(DecisionState.UNKNOWN);
		this.table.abort("t2", "owner-a", 100);
		assertThat(this.table.complete("t2", 300)).isEqualTo(DecisionState.ABORTED);
		assertThat(this.table.counts()).isEqualTo(new DecisionTable.Counts(0, 1, 1));
	}

	@Test
	void inDoubtListsOnlyDecidedTransactionsOfTheOwnerOldestFirst() {
		Decision late = decision("t-late", "owner-a", 300);
		Decision early = decision("t-early", "owner-a", 100);
		Decision middleB = decision("t-b", "owner-a", 200);
		Decision middleA = decision("t-a", "owner-a", 200);
		Decision other = decision("t-other", "owner-b", 50);
		for (Decision decision : List.of(late, early, middleB, other, middleA)) {
			this.table.decide(decision);
		}
		this.table.decide(decision("t-done", "owner-a", 10));
		this.table.complete("t-done", 400);
		assertThat(this.table.inDoubt("owner-a")).containsExactly(early, middleA, middleB, late);
		assertThat(this.table.inDoubt("owner-b")).containsExactly(other);
		assertThat(this.table.inDoubt("owner-c")).isEmpty();
	}

	@Test
	void purgeRemovesOnlyFinishedRecordsOlderThanTheRetention() {
		this.table.decide(decision("old-completed", "o", 1));
		this.table.complete("old-completed", 1_000);
		this.table.decide(decision("new-completed", "o", 2));
		this.table.complete("new-completed", 5_000);
		this.table.abort("old-aborted", "o", 1_500);
		this.table.decide(decision("in-doubt", "o", 0));
		OperationResult result = this.table.apply(new Operation.Purge(3_000), 6_000);
		assertThat(result).isEqualTo(new OperationResult.Purged(2));
		assertThat(this.table.state("old-completed")).isEqualTo(DecisionState.UNKNOWN);
		assertThat(this.table.state("old-aborted")).isEqualTo(DecisionState.UNKNOWN);
		assertThat(this.table.state("new-completed")).isEqualTo(DecisionState.COMPLETED);
		assertThat(this.table.state("in-doubt")).isEqualTo(DecisionState.DECIDED);
		assertThat(this.table.counts()).isEqualTo(new DecisionTable.Counts(1, 1, 0));
		assertThat(this.table.purge(6_000, 3_000)).isZero();
	}

	@Test
	void applyingACommandReturnsOneResultPerOperationInOrder() {
		Decision d1 = decision("t1", "o", 1);
		Command command = new Command(500, List.of(new Operation.Decide(d1), new Operation.Abort("t2", "o"),
				new Operation.Decide(decision("t2", "o", 2)), new Operation.Complete("t1"), new Operation.Decide(d1),
				new Operation.Purge(1_000)));
		assertThat(this.table.apply(command)).containsExactly(new OperationResult.Decided(d1, true),
				new OperationResult.StateAfter(DecisionState.ABORTED), new OperationResult.AbortConflict("t2"),
				new OperationResult.StateAfter(DecisionState.COMPLETED), new OperationResult.Decided(d1, false),
				new OperationResult.Purged(0));
		assertThat(this.table.record("t1").finishedAtMs()).isEqualTo(500);
	}

	@Test
	void sameCommandsGiveTheSameTableOnEveryReplica() {
		List<Command> commands = List.of(
				new Command(10, List.of(new Operation.Decide(decision("a", "o", 1)), new Operation.Abort("b", "o"))),
				new Command(20, List.of(new Operation.Complete("a"), new Operation.Decide(decision("c", "p", 3)))),
				new Command(9_000, List.of(new Operation.Purge(100))));
		DecisionTable replica = new DecisionTable();
		commands.forEach(this.table::apply);
		commands.forEach(replica::apply);
		assertThat(replica.records()).containsExactlyInAnyOrderElementsOf(this.table.records());
		assertThat(replica.counts()).isEqualTo(new DecisionTable.Counts(1, 0, 0));
	}

	@Test
	void replaceWithRebuildsTheIndexes() {
		this.table.decide(decision("t1", "o", 5));
		this.table.decide(decision("t2", "o", 1));
		this.table.complete("t1", 10);
		this.table.abort("t3", "o", 11);
		List<TransactionRecord> records = List.copyOf(this.table.records());
		DecisionTable restored = new DecisionTable();
		restored.decide(decision("stale", "o", 1));
		restored.replaceWith(records);
		assertThat(restored.state("stale")).isEqualTo(DecisionState.UNKNOWN);
		assertThat(restored.inDoubt("o")).containsExactly(decision("t2", "o", 1));
		assertThat(restored.counts()).isEqualTo(this.table.counts());
		assertThat(restored.purge(100, 0)).isEqualTo(2);
	}

	@Test
	void aCompleteAppliedWithAGrantOfAnotherOwnerLeavesTheRecordDecided() {
		this.table.decide(decision("t-1", "orders.i1", 1));
		Grant billing = new Grant("billing-app", false, List.of("billing"));
		List<OperationResult> results = this.table.apply(Command.of(5, new Operation.Complete("t-1")), billing);
		assertThat(results).containsExactly(new OperationResult.StateAfter(DecisionState.DECIDED));
		assertThat(this.table.state("t-1")).isEqualTo(DecisionState.DECIDED);
		Grant orders = new Grant("orders-app", false, List.of("orders"));
		assertThat(this.table.apply(Command.of(6, new Operation.Complete("t-1")), orders))
			.containsExactly(new OperationResult.StateAfter(DecisionState.COMPLETED));
	}

	@Test
	void aGrantCoversItsPrefixAndOwnersBelowItOnly() {
		Grant grant = new Grant("orders-app", false, List.of("orders"));
		assertThat(grant.coversOwner("orders")).isTrue();
		assertThat(grant.coversOwner("orders.router-0")).isTrue();
		assertThat(grant.coversOwner("orders-eu.router-0")).isFalse();
		assertThat(grant.coversOwner("ordersx")).isFalse();
		assertThat(new Grant("ops", true, List.of()).coversOwner("anything.i0")).isTrue();
		assertThat(Grant.none("x").coversOwner("x")).isFalse();
	}

	@Test
	void everyOperationNamesWhatItTouches() {
		assertThat(new Operation.Decide(decision("t-1", "orders.i1", 1)).scopes())
			.containsExactly(new AccessScope.TransactionFor("t-1", "orders.i1"));
		assertThat(new Operation.Complete("t-1").scopes()).containsExactly(new AccessScope.TransactionOf("t-1"));
		assertThat(new Operation.Abort("t-2", "orders.i1").scopes())
			.containsExactly(new AccessScope.TransactionFor("t-2", "orders.i1"));
		assertThat(new Operation.Purge(0).scopes()).containsExactly(new AccessScope.Admin());
	}

}
