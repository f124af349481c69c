package dev.tandem.coordinator.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.tandem.coordinator.state.Command;
import dev.tandem.coordinator.state.DecisionTable;
import dev.tandem.coordinator.state.Operation;
import dev.tandem.coordinator.state.OperationResult;
import dev.tandem.transaction.DecisionLogException;
import dev.tandem.transaction.DecisionState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link CommandBatcher}, with a sender that answers only when the test says so.
 */
class CommandBatcherTests {

	private final List<Sent> sent = new CopyOnWriteArrayList<>();

	private final DecisionTable table = new DecisionTable();

	private CommandBatcher batcher;

	@AfterEach
	void close() {
		if (this.batcher != null) {
			answerAll();
			this.batcher.close(Duration.ofSeconds(1));
		}
	}

	@Test
	void operationsSubmittedWhileACommandIsInFlightLeaveTogetherInTheNextCommand() {
		this.batcher = batcher(1, 256, Duration.ofMillis(5));
		CompletableFuture<OperationResult> first = decide("t-0");
		await().until(() -> this.sent.size() == 1);
		List<CompletableFuture<OperationResult>> waiting = new ArrayList<>();
		for (int i = 1; i <= 10; i++) {
			waiting.add(decide("t-" + i));
		}
		this.batcher.submit(new Operation.Abort("t-3", "o"));
		answer(0);
		await().until(() -> this.sent.size() == 2);
		assertThat(this.sent.get(1).command().operations()).hasSize(11);
		answer(1);
		assertThat(first.join()).isInstanceOf(OperationResult.Decided.class);
		for (int i = 0; i < 10; i++) {
			OperationResult result = waiting.get(i).join();
			assertThat(((OperationResult.Decided) result).decision().transactionId()).isEqualTo("t-" + (i + 1));
		}
		assertThat(this.batcher.commandsSent()).isEqualTo(2);
		assertThat(this.batcher.operationsSent()).isEqualTo(12);
	}

	@Test
	void batchesAreCappedAtTheMaximumSize() {
		this.batcher = batcher(1, 4, Duration.ofMillis(5));
		decide("blocker");
		await().until(() -> this.sent.size() == 1);
		for (int i = 0; i < 10; i++) {
			decide("t-" + i);
		}
		await().until(() -> {
			answerAll();
			return this.sent.size() == 4;
		});
		answerAll();
		assertThat(this.sent).extracting((sent) -> sent.command().operations().size()).containsExactly(1, 4, 4, 2);
	}

	@Test
	void completionsWaitForTheLingerThenLeaveAlone() {
		Duration linger = Duration.ofMillis(300);
		this.batcher = batcher(2, 256, linger);
		long submittedNanos = System.nanoTime();
		this.batcher.submitLazy(new Operation.Complete("t-1"));
		this.batcher.submitLazy(new Operation.Complete("t-2"));
		await().atMost(Duration.ofSeconds(2)).until(() -> this.sent.size() == 1);
		assertThat(this.sent.get(0).sentNanos() - submittedNanos).isGreaterThanOrEqualTo(linger.toNanos());
		assertThat(this.sent.get(0).command().operations()).containsExactly(new Operation.Complete("t-1"),
				new Operation.Complete("t-2"));
	}

	@Test
	void completionsRideAlongWithADecision() {
		this.batcher = batcher(2, 256, Duration.ofHours(1));
		this.batcher.submitLazy(new Operation.Complete("t-1"));
		decide("t-2");
		await().until(() -> this.sent.size() == 1);
		assertThat(this.sent.get(0).command().operations()).hasSize(2);
	}

	@Test
	void completionsLeaveWhenABatchIsFull() {
		this.batcher = batcher(2, 3, Duration.ofHours(1));
		for (int i = 0; i < 3; i++) {
			this.batcher.submitLazy(new Operation.Complete("t-" + i));
		}
		await().until(() -> this.sent.size() == 1);
	}

	@Test
	void closeSendsQueuedCompletionsAndWaitsForTheReply() {
		this.batcher = batcher(2, 256, Duration.ofHours(1));
		this.batcher.submitLazy(new Operation.Complete("t-1"));
		CompletableFuture<Boolean> closed = CompletableFuture.supplyAsync(() -> this.batcher.close(Duration.ofSeconds(5)));
		await().until(() -> this.sent.size() == 1);
		assertThat(closed).isNotDone();
		answer(0);
		assertThat(closed.join()).isTrue();
		assertThatExceptionOfType(DecisionLogException.class)
			.isThrownBy(() -> this.batcher.submitLazy(new Operation.Complete("t-2")));
		assertThatExceptionOfType(DecisionLogException.class).isThrownBy(() -> decide("t-3"));
	}

	@Test
	void aFailedCommandFailsEveryCallerOfItsBatch() {
		this.batcher = batcher(1, 256, Duration.ofMillis(5));
		decide("blocker");
		await().until(() -> this.sent.size() == 1);
		CompletableFuture<OperationResult> a = decide("a");
		CompletableFuture<OperationResult> b = decide("b");
		answer(0);
		await().until(() -> this.sent.size() == 2);
		this.sent.get(1).reply().completeExceptionally(new IllegalStateException("boom"));
		assertThat(a).failsWithin(Duration.ofSeconds(1));
		assertThat(b).failsWithin(Duration.ofSeconds(1));
		CompletableFuture<OperationResult> c = decide("c");
		await().until(() -> this.sent.size() == 3);
		answer(2);
		assertThat(c.join()).isInstanceOf(OperationResult.Decided.class);
	}

	@Test
	void eachCallerGetsItsOwnResultInAMixedBatch() {
		this.batcher = batcher(1, 256, Duration.ofMillis(5));
		decide("blocker");
		await().until(() -> this.sent.size() == 1);
		CompletableFuture<OperationResult> abort = this.batcher.submit(new Operation.Abort("x", "o"));
		CompletableFuture<OperationResult> conflict = decide("x");
		CompletableFuture<OperationResult> fine = decide("y");
		answerAll();
		await().until(() -> this.sent.size() == 2);
		answerAll();
		assertThat(abort.join()).isEqualTo(new OperationResult.StateAfter(DecisionState.ABORTED));
		assertThat(conflict.join()).isEqualTo(new OperationResult.AbortConflict("x"));
		assertThat(fine.join()).isInstanceOf(OperationResult.Decided.class);
	}

	private CommandBatcher batcher(int maxInFlight, int maxBatchSize, Duration linger) {
		return new CommandBatcher("test", (command) -> {
			CompletableFuture<List<OperationResult>> reply = new CompletableFuture<>();
			this.sent.add(new Sent(command, reply, System.nanoTime()));
			return reply;
		}, maxBatchSize, maxInFlight, linger);
	}

	private CompletableFuture<OperationResult> decide(String transactionId) {
		return this.batcher.submit(new Operation.Decide(decision(transactionId, "o", 1)));
	}

	private void answer(int index) {
		Sent sent = this.sent.get(index);
		sent.reply().complete(this.table.apply(sent.command()));
	}

	private void answerAll() {
		for (int i = 0; i < this.sent.size(); i++) {
			if (!this.sent.get(i).reply().isDone()) {
				answer(i);
			}
		}
	}

	private record Sent(Command command, CompletableFuture<List<OperationResult>> reply, long sentNanos) {

	}

}
