package dev.tandem.coordinator.state;

import org.junit.jupiter.api.Test;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.InstanceLease;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The decide rule that closes a paused run's late decision (pure DecisionTable, lease 1000 ms).
 */
class DecisionTableLeaseBreakerTests {

	private final DecisionTable table = new DecisionTable();

	private InstanceLease renew(String instance, String incarnation, long atMs) {
		return this.table.renewLease(new Operation.RenewLease("app", instance, incarnation, 1000), atMs);
	}

	/** A decision names its run: an old run cannot decide once a new run holds the lease. */
	@Test
	void anOldRunsDecisionIsRefusedOnceANewRunHoldsTheLease() {
		renew("a", "run-1", 0);
		// run-1 pauses; its lease expires; run-2 starts
		assertThat(renew("a", "run-2", 1500).isHeldBy("run-2")).isTrue();
		Decision byRun1 = decision("zombie", "app.a", 1600); // prepared by run-1 before its pause
		assertThat(this.table.decide(byRun1, "run-1")).as("run-1 no longer holds the lease")
			.isEqualTo(new OperationResult.OwnerClaimed("zombie", "run run-2"));
		assertThat(this.table.state("zombie")).isEqualTo(dev.tandem.transaction.DecisionState.UNKNOWN);
		assertThat(this.table.decide(byRun1, "run-2")).as("the run that holds the lease decides")
			.isEqualTo(new OperationResult.Decided(byRun1, true));
	}

}
