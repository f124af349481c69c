package dev.tandem.coordinator.client;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import dev.tandem.coordinator.state.Command;
import dev.tandem.coordinator.state.Operation;
import dev.tandem.coordinator.state.OperationResult;
import dev.tandem.transaction.DecisionLogException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit: operations submitted by many threads leave as few {@link Command commands}
 * (Raft log entries) as possible. One daemon thread drains the queue; while
 * {@code maxInFlight} commands are in flight, new operations wait and join the next command,
 * so the batch size follows the load (up to {@code maxBatchSize}).
 * <p>
 * Urgent operations (decide, abort) are sent as soon as a slot is free, each with its own
 * future. Lazy operations (complete, purge) have no caller waiting: they ride along with urgent
 * ones, or leave on their own when {@code maxBatchSize} are queued or the oldest has waited
 * {@code linger}.
 */
final class CommandBatcher {

	private static final Logger logger = LoggerFactory.getLogger(CommandBatcher.class);

	private final String name;

	private final Sender sender;

	private final int maxBatchSize;

	private final int maxInFlight;

	private final long lingerNanos;

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition changed = this.lock.newCondition();

	private final ArrayDeque<Pending> urgent = new ArrayDeque<>();

	private final ArrayDeque<Pending> lazy = new ArrayDeque<>();

	private final Thread worker;

	private final AtomicLong commandsSent = new AtomicLong();

	private final AtomicLong operationsSent = new AtomicLong();

	private final AtomicLong lazyOperationsLost = new AtomicLong();

	private int inFlight;

	private State state = State.RUNNING;

	CommandBatcher(String name, Sender sender, int maxBatchSize, int maxInFlight, Duration linger) {
		this.name = name;
		this.sender = sender;
		this.maxBatchSize = maxBatchSize;
		this.maxInFlight = maxInFlight;
		this.lingerNanos = linger.toNanos();
		this.worker = new Thread(this::run, name);
		this.worker.setDaemon(true);
		this.worker.start();
	}

	/**
	 * Queues an operation whose caller waits for its result.
	 * @throws DecisionLogException if the batcher is closing or closed
	 */
	CompletableFuture<OperationResult> submit(Operation operation) {
		CompletableFuture<OperationResult> result = new CompletableFuture<>();
		enqueue(this.urgent, new Pending(operation, result, System.nanoTime()));
		return result;
	}

	/**
	 * Queues an operation nobody waits for; a failure to write it is logged.
	 * @throws DecisionLogException if the batcher is closing or closed
	 */
	void submitLazy(Operation operation) {
		enqueue(this.lazy, new Pending(operation, null, System.nanoTime()));
	}

	private void enqueue(ArrayDeque<Pending> queue, Pending pending) {
		this.lock.lock();
		try {
			if (this.state != State.RUNNING) {
				throw new DecisionLogException("Decision log '" + this.name + "' is closed");
			}
			queue.add(pending);
			this.changed.signalAll();
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Sends everything queued, waits for the replies, and stops the thread. Operations still
	 * unanswered after the timeout fail. Idempotent.
	 * @param timeout how long to wait
	 * @return whether everything was answered in time
	 */
	boolean close(Duration timeout) {
		this.lock.lock();
		try {
			if (this.state == State.RUNNING) {
				this.state = State.DRAINING;
			}
			this.changed.signalAll();
		}
		finally {
			this.lock.unlock();
		}
		try {
			this.worker.join(Math.max(1, timeout.toMillis()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (this.worker.isAlive()) {
			this.worker.interrupt();
			return false;
		}
		return true;
	}

	long commandsSent() {
		return this.commandsSent.get();
	}

	long operationsSent() {
		return this.operationsSent.get();
	}

	long lazyOperationsLost() {
		return this.lazyOperationsLost.get();
	}

	private void run() {
		this.lock.lock();
		try {
			while (true) {
				long now = System.nanoTime();
				if (readyToSend(now)) {
					List<Pending> batch = drain();
					this.inFlight++;
					this.lock.unlock();
					try {
						send(batch);
					}
					finally {
						this.lock.lock();
					}
					continue;
				}
				if (this.state != State.RUNNING && this.urgent.isEmpty() && this.lazy.isEmpty() && this.inFlight == 0) {
					return;
				}
				if (!this.lazy.isEmpty() && this.inFlight < this.maxInFlight) {
					this.changed.awaitNanos(this.lazy.peekFirst().enqueuedNanos() + this.lingerNanos - now);
				}
				else {
					this.changed.await();
				}
			}
		}
		catch (InterruptedException ex) {
			logger.warn("Decision log '{}' stopped before sending {} queued operations", this.name,
					this.urgent.size() + this.lazy.size());
		}
		finally {
			this.state = State.CLOSED;
			List<Pending> unsent = new ArrayList<>(this.urgent);
			unsent.addAll(this.lazy);
			this.urgent.clear();
			this.lazy.clear();
			this.lock.unlock();
			fail(unsent, new DecisionLogException("Decision log '" + this.name + "' closed before sending"));
		}
	}

	private boolean readyToSend(long now) {
		if (this.inFlight >= this.maxInFlight) {
			return false;
		}
		if (!this.urgent.isEmpty()) {
			return true;
		}
		if (this.lazy.isEmpty()) {
			return false;
		}
		return this.lazy.size() >= this.maxBatchSize || this.state != State.RUNNING
				|| now - this.lazy.peekFirst().enqueuedNanos() >= this.lingerNanos;
	}

	private List<Pending> drain() {
		List<Pending> batch = new ArrayList<>(Math.min(this.maxBatchSize, this.urgent.size() + this.lazy.size()));
		while (batch.size() < this.maxBatchSize && !this.urgent.isEmpty()) {
			batch.add(this.urgent.poll());
		}
		while (batch.size() < this.maxBatchSize && !this.lazy.isEmpty()) {
			batch.add(this.lazy.poll());
		}
		return batch;
	}

	private void send(List<Pending> batch) {
		List<Operation> operations = new ArrayList<>(batch.size());
		for (Pending pending : batch) {
			operations.add(pending.operation());
		}
		this.commandsSent.incrementAndGet();
		this.operationsSent.addAndGet(operations.size());
		CompletableFuture<List<OperationResult>> reply;
		try {
			reply = this.sender.send(new Command(System.currentTimeMillis(), operations));
		}
		catch (RuntimeException ex) {
			reply = CompletableFuture.failedFuture(ex);
		}
		reply.whenComplete((results, failure) -> {
			this.lock.lock();
			try {
				this.inFlight--;
				this.changed.signalAll();
			}
			finally {
				this.lock.unlock();
			}
			if (failure != null) {
				fail(batch, failure);
			}
			else if (results.size() != batch.size()) {
				fail(batch, new DecisionLogException(
						"Coordinator answered " + results.size() + " results to " + batch.size() + " operations"));
			}
			else {
				for (int i = 0; i < batch.size(); i++) {
					CompletableFuture<OperationResult> result = batch.get(i).result();
					if (result != null) {
						result.complete(results.get(i));
					}
				}
			}
		});
	}

	private void fail(List<Pending> batch, Throwable failure) {
		int lost = 0;
		for (Pending pending : batch) {
			CompletableFuture<OperationResult> result = pending.result();
			if (result != null) {
				result.completeExceptionally(failure);
			}
			else {
				lost++;
			}
		}
		if (lost > 0) {
			this.lazyOperationsLost.addAndGet(lost);
			logger.warn("Decision log '{}' could not write {} completions/purges (recovery will commit those "
					+ "transactions again, which is harmless): {}", this.name, lost, failure.toString());
		}
	}

	@FunctionalInterface
	interface Sender {

		CompletableFuture<List<OperationResult>> send(Command command);

	}

	private record Pending(Operation operation, @Nullable CompletableFuture<OperationResult> result,
			long enqueuedNanos) {

	}

	private enum State {

		RUNNING, DRAINING, CLOSED

	}

}
