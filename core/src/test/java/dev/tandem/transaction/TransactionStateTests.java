package dev.tandem.transaction;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static dev.tandem.transaction.TransactionState.ABORTED;
import static dev.tandem.transaction.TransactionState.ABORTING;
import static dev.tandem.transaction.TransactionState.ACTIVE;
import static dev.tandem.transaction.TransactionState.COMMITTED;
import static dev.tandem.transaction.TransactionState.DECIDED;
import static dev.tandem.transaction.TransactionState.HEURISTIC_MIXED;
import static dev.tandem.transaction.TransactionState.IN_DOUBT;
import static dev.tandem.transaction.TransactionState.PREPARED;
import static dev.tandem.transaction.TransactionState.PREPARING;
import static org.assertj.core.api.Assertions.assertThat;

class TransactionStateTests {

	/**
	 * The whole table, written out: every move CrossClusterTransaction makes is in it (one-phase
	 * commit PREPARING -> COMMITTED; in-doubt hand-over from PREPARING, PREPARED or DECIDED; the
	 * resolver's outcome IN_DOUBT -> COMMITTED / ABORTED / HEURISTIC_MIXED), and nothing else is.
	 */
	private static final Map<TransactionState, Set<TransactionState>> LEGAL = Map.of(
			ACTIVE, EnumSet.of(PREPARING, ABORTING),
			PREPARING, EnumSet.of(PREPARED, ABORTING, COMMITTED, IN_DOUBT),
			PREPARED, EnumSet.of(DECIDED, ABORTING, IN_DOUBT),
			DECIDED, EnumSet.of(COMMITTED, IN_DOUBT, HEURISTIC_MIXED),
			ABORTING, EnumSet.of(ABORTED),
			IN_DOUBT, EnumSet.of(COMMITTED, ABORTED, HEURISTIC_MIXED),
			COMMITTED, EnumSet.noneOf(TransactionState.class),
			ABORTED, EnumSet.noneOf(TransactionState.class),
			HEURISTIC_MIXED, EnumSet.noneOf(TransactionState.class));

	@Test
	void everyTransitionIsLegalExactlyWhenTheTableSaysSo() {
		assertThat(LEGAL).containsOnlyKeys(TransactionState.values());
		for (TransactionState from : TransactionState.values()) {
			for (TransactionState to : TransactionState.values()) {
				assertThat(from.canTransitionTo(to)).as(from + " -> " + to).isEqualTo(LEGAL.get(from).contains(to));
			}
		}
	}

	@Test
	void decidedTransactionCanNeverAbort() {
		assertThat(DECIDED.canTransitionTo(ABORTING)).isFalse();
		assertThat(DECIDED.canTransitionTo(ABORTED)).isFalse();
		assertThat(DECIDED.canTransitionTo(COMMITTED)).isTrue();
	}

	@Test
	void preparedTransactionMayStillAbort() {
		assertThat(PREPARED.canTransitionTo(ABORTING)).isTrue();
	}

	@Test
	void inDoubtTransactionEndsWithTheResolversOutcome() {
		assertThat(IN_DOUBT.isTerminal()).isFalse();
		assertThat(IN_DOUBT.canTransitionTo(COMMITTED)).isTrue();
		assertThat(IN_DOUBT.canTransitionTo(ABORTED)).isTrue();
		assertThat(IN_DOUBT.canTransitionTo(HEURISTIC_MIXED)).isTrue();
		assertThat(IN_DOUBT.canTransitionTo(ACTIVE)).isFalse();
	}

	@Test
	void terminalStatesAllowNoTransition() {
		for (TransactionState terminal : new TransactionState[] { COMMITTED, ABORTED, HEURISTIC_MIXED }) {
			assertThat(terminal.isTerminal()).as(terminal.name()).isTrue();
			for (TransactionState next : TransactionState.values()) {
				assertThat(terminal.canTransitionTo(next)).as(terminal + " -> " + next).isFalse();
			}
		}
		assertThat(ACTIVE.isTerminal()).isFalse();
	}

}
