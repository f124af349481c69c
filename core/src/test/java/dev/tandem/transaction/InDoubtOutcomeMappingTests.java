package dev.tandem.transaction;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The one mapping of a resolved in-doubt outcome to a commit's result
 * ({@link InDoubtTransactionException#awaitCommitted}), which the pipeline's committing thread,
 * a listener's thread and {@code CrossClusterTransaction.handOver} share.
 */
class InDoubtOutcomeMappingTests {

	private static final HeuristicOutcomeException.HeuristicOutcome MIXED = new HeuristicOutcomeException.HeuristicOutcome(
			"app-1", List.of("east"), List.of("west"), 42L);

	private static InDoubtTransactionException inDoubt(CompletableFuture<TransactionState> outcome) {
		return new InDoubtTransactionException("app-1", "in doubt", null, outcome,
				(id) -> id.equals("app-1") ? MIXED : null);
	}

	@Test
	void committedReturns() {
		assertThatCode(() -> inDoubt(CompletableFuture.completedFuture(TransactionState.COMMITTED))
			.awaitCommitted(Duration.ofSeconds(1))).doesNotThrowAnyException();
	}

	@Test
	void abortedThrowsTransactionAbortedWithTheInDoubtExceptionAsCause() {
		InDoubtTransactionException ex = inDoubt(CompletableFuture.completedFuture(TransactionState.ABORTED));
		assertThatThrownBy(() -> ex.awaitCommitted(null)).isExactlyInstanceOf(TransactionAbortedException.class)
			.hasMessageContaining("app-1 aborted everywhere")
			.hasCause(ex);
	}

	@Test
	void aMixedOutcomeThrowsTheHeuristicOutcomeFoundByRecovery() {
		assertThatThrownBy(() -> inDoubt(CompletableFuture.completedFuture(TransactionState.HEURISTIC_MIXED))
			.awaitCommitted(null)).isInstanceOfSatisfying(HeuristicOutcomeException.class,
					(heuristic) -> org.assertj.core.api.Assertions.assertThat(heuristic.getOutcome()).isEqualTo(MIXED));
	}

	@Test
	void anOutcomeNotKnownInTimeIsATimeout() {
		assertThatThrownBy(() -> inDoubt(new CompletableFuture<>()).awaitCommitted(Duration.ofMillis(10)))
			.isInstanceOf(TimeoutException.class);
	}

	@Test
	void aCancelledOutcomeLeavesTheTransactionInDoubt() {
		CompletableFuture<TransactionState> outcome = new CompletableFuture<>();
		outcome.cancel(false);
		assertThatThrownBy(() -> inDoubt(outcome).awaitCommitted(null)).isInstanceOf(InDoubtTransactionException.class)
			.hasMessageContaining("stays in-doubt");
	}

	@Test
	void aTimeoutTooLongForMillisecondsWaitsForTheOutcome() {
		assertThatCode(() -> inDoubt(CompletableFuture.completedFuture(TransactionState.COMMITTED))
			.awaitCommitted(java.time.temporal.ChronoUnit.FOREVER.getDuration())).doesNotThrowAnyException();
	}

	@Test
	void withoutATrackedOutcomeTheExceptionItselfIsThrown() {
		InDoubtTransactionException untracked = new InDoubtTransactionException("app-1", "in doubt", null);
		assertThatThrownBy(() -> untracked.awaitCommitted(null)).isSameAs(untracked);
	}

	@Test
	void anInstanceClosedBeforeResolvingItSaysItStaysInDoubt() {
		InDoubtTransactionException stays = new InDoubtTransactionException("app-1", "stays in-doubt", null);
		assertThatThrownBy(() -> inDoubt(CompletableFuture.failedFuture(stays)).awaitCommitted(null)).isSameAs(stays);
	}

}
