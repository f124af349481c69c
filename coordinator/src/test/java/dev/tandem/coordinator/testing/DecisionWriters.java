package dev.tandem.coordinator.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLogException;

import static dev.tandem.coordinator.state.TestDecisions.decision;

/**
 * Writer threads that decide new transactions back to back, as the 2PC engine does: each
 * thread is one owner ({@code app.w<N>}) deciding {@code app.w<N>-<seq>}; a decide whose
 * outcome is unknown (timeout, failover) is retried with the same decision until it is
 * acknowledged, which is safe because decide is idempotent. Every acknowledgement is recorded
 * with its time, so a test can count decisions and measure write stalls.
 * <p>
 * Thread-safe.
 */
public final class DecisionWriters implements AutoCloseable {

	private static final Duration GIVE_UP_AFTER_STOP = Duration.ofSeconds(30);

	private final Duration attemptTimeout;

	private final List<Thread> threads = new ArrayList<>();

	private final Map<String, List<Decision>> acknowledged = new LinkedHashMap<>();

	private final List<Long> ackNanos = new ArrayList<>();

	private final List<Decision> unresolved = new ArrayList<>();

	private final LongAdder acknowledgedCount = new LongAdder();

	private final LongAdder unknownOutcomes = new LongAdder();

	private final LongAdder changedDecisions = new LongAdder();

	private final AtomicLong stopNanos = new AtomicLong(Long.MAX_VALUE);

	private volatile boolean stopping;

	private DecisionWriters(Duration attemptTimeout) {
		this.attemptTimeout = attemptTimeout;
	}

	/**
	 * Starts {@code threadsPerClient} writer threads on each client.
	 * @param clients the decision log clients
	 * @param threadsPerClient threads per client
	 * @param attemptTimeout how long one decide call may wait
	 * @return the running writers
	 */
	public static DecisionWriters start(List<RatisDecisionLog> clients, int threadsPerClient, Duration attemptTimeout) {
		DecisionWriters writers = new DecisionWriters(attemptTimeout);
		int n = 0;
		for (RatisDecisionLog client : clients) {
			for (int i = 0; i < threadsPerClient; i++) {
				String owner = "app.w" + (n++);
				synchronized (writers) {
					writers.acknowledged.put(owner, new ArrayList<>());
				}
				Thread thread = new Thread(() -> writers.write(client, owner), "writer-" + owner);
				thread.setDaemon(true);
				writers.threads.add(thread);
			}
		}
		writers.threads.forEach(Thread::start);
		return writers;
	}

	private void write(RatisDecisionLog client, String owner) {
		for (long seq = 0; !this.stopping; seq++) {
			Decision decision = decision(owner + "-" + seq, owner, seq);
			while (true) {
				try {
					Decision stored = client.decide(decision, this.attemptTimeout);
					if (!stored.equals(decision)) {
						this.changedDecisions.increment();
					}
					acknowledge(owner, decision);
					break;
				}
				catch (DecisionLogException ex) {
					this.unknownOutcomes.increment();
					if (System.nanoTime() - this.stopNanos.get() > GIVE_UP_AFTER_STOP.toNanos()) {
						synchronized (this) {
							this.unresolved.add(decision);
						}
						return;
					}
				}
			}
		}
	}

	private void acknowledge(String owner, Decision decision) {
		long now = System.nanoTime();
		synchronized (this) {
			this.acknowledged.get(owner).add(decision);
			this.ackNanos.add(now);
		}
		this.acknowledgedCount.increment();
	}

	/**
	 * Returns the number of acknowledged decisions so far.
	 * @return the count
	 */
	public long acknowledged() {
		return this.acknowledgedCount.sum();
	}

	/**
	 * Returns the acknowledged decisions per owner, in acknowledgement order.
	 * @return owner to decisions (a copy)
	 */
	public synchronized Map<String, List<Decision>> acknowledgedByOwner() {
		Map<String, List<Decision>> copy = new LinkedHashMap<>();
		this.acknowledged.forEach((owner, decisions) -> copy.put(owner, List.copyOf(decisions)));
		return copy;
	}

	/**
	 * Returns the times of all acknowledgements, sorted.
	 * @return {@link System#nanoTime()} values
	 */
	public synchronized List<Long> ackNanos() {
		List<Long> copy = new ArrayList<>(this.ackNanos);
		Collections.sort(copy);
		return copy;
	}

	/**
	 * Returns the longest time between two consecutive acknowledgements.
	 * @return the longest gap
	 */
	public Duration longestGap() {
		List<Long> times = ackNanos();
		long longest = 0;
		for (int i = 1; i < times.size(); i++) {
			longest = Math.max(longest, times.get(i) - times.get(i - 1));
		}
		return Duration.ofNanos(longest);
	}

	/**
	 * Returns how many decide calls failed with an unknown outcome (each was retried).
	 * @return the count
	 */
	public long unknownOutcomes() {
		return this.unknownOutcomes.sum();
	}

	/**
	 * Returns how many decide calls returned a decision other than the one written.
	 * @return the count (zero unless idempotence is broken)
	 */
	public long changedDecisions() {
		return this.changedDecisions.sum();
	}

	/**
	 * Returns decisions still unacknowledged 30 s after {@link #close()}.
	 * @return the decisions, normally none
	 */
	public synchronized List<Decision> unresolved() {
		return List.copyOf(this.unresolved);
	}

	/**
	 * Stops the writers after their current decision is acknowledged, and waits for them.
	 */
	@Override
	public void close() {
		this.stopNanos.compareAndSet(Long.MAX_VALUE, System.nanoTime());
		this.stopping = true;
		for (Thread thread : this.threads) {
			try {
				thread.join(GIVE_UP_AFTER_STOP.plus(this.attemptTimeout).toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

}
