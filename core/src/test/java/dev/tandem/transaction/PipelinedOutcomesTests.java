package dev.tandem.transaction;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The ordered-outcome ledger as a unit: outcomes told once and in begin order whatever order
 * they complete in, the rewind offsets of every transaction that did not commit (first one per
 * partition wins), heuristic outcomes not rewound, and a rewind refused while an outcome is
 * pending. The processor and listener pipelines exercise it on real brokers
 * ({@code CrossClusterProcessorTests}, {@code PipelinedListenerTests}).
 */
class PipelinedOutcomesTests {

	private static final TopicPartition P0 = new TopicPartition("in", 0);

	private static final TopicPartition P1 = new TopicPartition("in", 1);

	private final List<String> told = new ArrayList<>();

	private final PipelinedOutcomes<String> outcomes = new PipelinedOutcomes<>(
			(name, failure) -> this.told.add(name + ((failure == null) ? ":ok" : ":" + failure.getClass().getSimpleName())));

	@Test
	void outcomesAreToldInBeginOrderWhateverOrderTheyCompleteIn() {
		CompletableFuture<Void> first = new CompletableFuture<>();
		CompletableFuture<Void> second = new CompletableFuture<>();
		CompletableFuture<Void> third = new CompletableFuture<>();
		this.outcomes.submitted("t1", Map.of(P0, 0L), first);
		this.outcomes.submitted("t2", Map.of(P0, 10L), second);
		this.outcomes.submitted("t3", Map.of(P0, 20L), third);
		third.complete(null);
		second.complete(null);
		assertThat(this.told).isEmpty();
		assertThat(this.outcomes.size()).isEqualTo(3);
		first.complete(null);
		assertThat(this.told).containsExactly("t1:ok", "t2:ok", "t3:ok");
		assertThat(this.outcomes.failure()).isNull();
		assertThat(this.outcomes.size()).isZero();
	}

	@Test
	void aFailureRewindsEveryPartitionToTheFirstOffsetNotCommitted() {
		CompletableFuture<Void> committed = CompletableFuture.completedFuture(null);
		TransactionAbortedException failed = new TransactionAbortedException("commit failed", null);
		this.outcomes.submitted("t1", Map.of(P0, 0L), committed);
		this.outcomes.submitted("t2", Map.of(P0, 10L, P1, 5L), CompletableFuture.failedFuture(failed));
		this.outcomes.submitted("t3", Map.of(P0, 20L, P1, 9L),
				CompletableFuture.failedFuture(new PredecessorFailedException("after t2", failed)));
		this.outcomes.abortedOpen("t4", Map.of(P0, 30L), new TransactionAbortedException("handler", null));

		assertThat(this.outcomes.failure()).isSameAs(failed);
		assertThat(this.told).containsExactly("t1:ok", "t2:TransactionAbortedException",
				"t3:PredecessorFailedException", "t4:TransactionAbortedException");
		PipelinedOutcomes.Rewind rewind = this.outcomes.rewind(Map.of(P1, 3L, new TopicPartition("in", 2), 7L));
		assertThat(rewind.offsets()).isEqualTo(Map.of(P0, 10L, P1, 5L, new TopicPartition("in", 2), 7L));
		assertThat(rewind.firstFailure()).isSameAs(failed);
		assertThat(this.outcomes.failure()).isNull();
		assertThat(this.outcomes.size()).isZero();
	}

	@Test
	void aHeuristicOutcomeIsNotDeliveredAgainButWhatAbortedAfterItIs() {
		HeuristicOutcomeException heuristic = new HeuristicOutcomeException(
				new HeuristicOutcomeException.HeuristicOutcome("t1", List.of("east"), List.of("west"), 1L));
		this.outcomes.submitted("t1", Map.of(P0, 0L), CompletableFuture.failedFuture(heuristic));
		this.outcomes.submitted("t2", Map.of(P0, 10L, P1, 4L),
				CompletableFuture.failedFuture(new PredecessorFailedException("after t1", heuristic)));

		PipelinedOutcomes.Rewind rewind = this.outcomes.rewind(Map.of());
		assertThat(rewind.offsets()).isEqualTo(Map.of(P0, 10L, P1, 4L));
		assertThat(rewind.firstFailure()).isSameAs(heuristic);
	}

	@Test
	void aRewindWithAnOutcomePendingIsRefusedAndKeepsTheLedger() {
		CompletableFuture<Void> pending = new CompletableFuture<>();
		this.outcomes.submitted("t1", Map.of(P0, 0L), CompletableFuture.failedFuture(new TandemException("x", null)));
		this.outcomes.submitted("t2", Map.of(P0, 10L), pending);
		assertThatThrownBy(() -> this.outcomes.rewind(Map.of())).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("1 pipelined outcome(s) still pending");
		pending.completeExceptionally(new PredecessorFailedException("after t1", null));
		assertThat(this.outcomes.rewind(Map.of()).offsets()).containsExactly(Map.entry(P0, 0L));
	}

	@Test
	void withoutFailuresARewindGoesBackOnlyToWhatIsGiven() {
		this.outcomes.submitted("t1", Map.of(P0, 0L), CompletableFuture.completedFuture(null));
		PipelinedOutcomes.Rewind rewind = this.outcomes.rewind(Map.of(P1, 2L));
		assertThat(rewind.offsets()).containsExactly(Map.entry(P1, 2L));
		assertThat(rewind.firstFailure()).isNull();
	}

	@Test
	void aListenerThatThrowsDoesNotStopTheOutcomesAfterIt() {
		List<String> seen = new ArrayList<>();
		PipelinedOutcomes<String> throwing = new PipelinedOutcomes<>((name, failure) -> {
			seen.add(name);
			throw new IllegalStateException("listener bug");
		});
		throwing.submitted("t1", Map.of(P0, 0L), CompletableFuture.completedFuture(null));
		throwing.submitted("t2", Map.of(P0, 1L), CompletableFuture.completedFuture(null));
		assertThat(seen).containsExactly("t1", "t2");
		assertThat(throwing.size()).isZero();
	}

	/**
	 * An Error from the listener (found by a breaking trial: it stopped the outcomes after it until
	 * the next ledger call, and on the committing thread it was lost in a CompletableFuture): the
	 * outcomes after it are told at once and in order, and the Error is the ledger's failure, returned
	 * (never thrown) until the next rewind, which rewinds nothing for it.
	 */
	@Test
	void aListenerErrorDoesNotStopTheOutcomesAfterItAndIsTheLedgersFailureUntilTheRewind() {
		List<String> seen = new ArrayList<>();
		AssertionError bug = new AssertionError("listener bug");
		PipelinedOutcomes<String> throwing = new PipelinedOutcomes<>((name, failure) -> {
			seen.add(name);
			if (name.equals("t1")) {
				throw bug;
			}
		});
		CompletableFuture<Void> first = new CompletableFuture<>();
		throwing.submitted("t1", Map.of(P0, 0L), first);
		throwing.submitted("t2", Map.of(P0, 10L), CompletableFuture.completedFuture(null));
		first.complete(null); // the committing thread: both outcomes are known now
		assertThat(seen).containsExactly("t1", "t2");
		assertThat(throwing.size()).isZero();
		assertThat(throwing.failure()).isSameAs(bug);
		throwing.submitted("t3", Map.of(P0, 20L), CompletableFuture.completedFuture(null));
		assertThat(seen).containsExactly("t1", "t2", "t3");
		PipelinedOutcomes.Rewind rewind = throwing.rewind(Map.of());
		assertThat(rewind.offsets()).isEmpty();
		assertThat(rewind.firstFailure()).isSameAs(bug);
		assertThat(throwing.failure()).isNull();
	}

	/** A transaction that failed comes first: its failure is the ledger's, the Error follows it. */
	@Test
	void aFailedTransactionComesBeforeAListenerError() {
		AssertionError bug = new AssertionError("listener bug");
		PipelinedOutcomes<String> throwing = new PipelinedOutcomes<>((name, failure) -> {
			throw bug;
		});
		TransactionAbortedException failed = new TransactionAbortedException("commit failed", null);
		throwing.submitted("t1", Map.of(P0, 0L), CompletableFuture.completedFuture(null));
		throwing.submitted("t2", Map.of(P0, 10L), CompletableFuture.failedFuture(failed));
		assertThat(throwing.failure()).isSameAs(failed);
		PipelinedOutcomes.Rewind rewind = throwing.rewind(Map.of());
		assertThat(rewind.offsets()).containsExactly(Map.entry(P0, 10L));
		assertThat(rewind.firstFailure()).isSameAs(failed);
		assertThat(throwing.failure()).isNull();
	}

	/** Outcomes completed on another thread, as the pipeline's committing thread does. */
	@Test
	void outcomesCompletedOnAnotherThreadAreToldOnceEach() throws Exception {
		int count = 2_000;
		List<@Nullable CompletableFuture<Void>> futures = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			CompletableFuture<Void> future = new CompletableFuture<>();
			futures.add(future);
			this.outcomes.submitted("t" + i, Map.of(P0, (long) i), future);
		}
		ExecutorService committer = Executors.newSingleThreadExecutor();
		CountDownLatch done = new CountDownLatch(1);
		try {
			committer.execute(() -> {
				for (int i = count - 1; i >= 0; i--) {
					futures.get(i).complete(null);
				}
				done.countDown();
			});
			for (int i = 0; i < 100; i++) {
				this.outcomes.failure(); // the consumer's thread looks meanwhile
			}
			assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			committer.shutdown();
		}
		assertThat(this.outcomes.size()).isZero();
		List<String> expected = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			expected.add("t" + i + ":ok");
		}
		assertThat(this.told).containsExactlyElementsOf(expected);
	}

}
