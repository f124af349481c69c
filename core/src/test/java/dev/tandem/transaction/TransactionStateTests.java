package dev.tandem.transaction;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TransactionStateTests {

	@Test
	void decidedTransactionCanNeverAbort() {
		assertThat(TransactionState.DECIDED.canTransitionTo(TransactionState.ABORTING)).isFalse();
		assertThat(TransactionState.DECIDED.canTransitionTo(TransactionState.COMMITTED)).isTrue();
	}

	@Test
	void preparedTransactionMayStillAbort() {
		assertThat(TransactionState.PREPARED.canTransitionTo(TransactionState.ABORTING)).isTrue();
	}

	@Test
	void terminalStatesAllowNoTransition() {
		for (TransactionState terminal : new TransactionState[] { TransactionState.COMMITTED,
				TransactionState.ABORTED, TransactionState.IN_DOUBT, TransactionState.HEURISTIC_MIXED }) {
			assertThat(terminal.isTerminal()).as(terminal.name()).isTrue();
			for (TransactionState next : TransactionState.values()) {
				assertThat(terminal.canTransitionTo(next)).as(terminal + " -> " + next).isFalse();
			}
		}
		assertThat(TransactionState.ACTIVE.isTerminal()).isFalse();
	}

}
