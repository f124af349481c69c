package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;

/**
 * Counts transaction outcomes and keeps the most recent heuristic outcomes, for status
 * endpoints. Thread-safe; cheap enough for every commit.
 *
 * @since 0.1.0
 */
public final class TransactionStatistics implements TransactionListener {

	/** How many heuristic outcomes are kept. */
	public static final int RECENT_HEURISTICS = 50;

	private final AtomicLong committed = new AtomicLong();

	private final AtomicLong committedOnePhase = new AtomicLong();

	private final AtomicLong aborted = new AtomicLong();

	private final AtomicLong inDoubt = new AtomicLong();

	private final AtomicLong recovered = new AtomicLong();

	private final AtomicLong heuristic = new AtomicLong();

	private final AtomicLong commitNanos = new AtomicLong();

	private final Deque<HeuristicOutcome> recentHeuristics = new ArrayDeque<>();

	@Override
	public void onCommitted(String transactionId, int participants, Duration commitLatency) {
		this.committed.incrementAndGet();
		if (participants <= 1) {
			this.committedOnePhase.incrementAndGet();
		}
		this.commitNanos.addAndGet(commitLatency.toNanos());
	}

	@Override
	public void onAborted(String transactionId, Throwable cause) {
		this.aborted.incrementAndGet();
	}

	@Override
	public void onInDoubt(String transactionId, Throwable cause) {
		this.inDoubt.incrementAndGet();
	}

	@Override
	public void onRecovered(String transactionId) {
		this.recovered.incrementAndGet();
	}

	@Override
	public void onHeuristicOutcome(HeuristicOutcome outcome) {
		this.heuristic.incrementAndGet();
		synchronized (this.recentHeuristics) {
			this.recentHeuristics.addFirst(outcome);
			while (this.recentHeuristics.size() > RECENT_HEURISTICS) {
				this.recentHeuristics.removeLast();
			}
		}
	}

	/**
	 * Returns a consistent-enough snapshot of the counters.
	 * @return the snapshot
	 */
	public Snapshot snapshot() {
		List<HeuristicOutcome> heuristics;
		synchronized (this.recentHeuristics) {
			heuristics = new ArrayList<>(this.recentHeuristics);
		}
		long count = this.committed.get();
		return new Snapshot(count, this.committedOnePhase.get(), this.aborted.get(), this.inDoubt.get(),
				this.recovered.get(), this.heuristic.get(),
				(count == 0) ? 0.0 : this.commitNanos.get() / 1e6 / count, heuristics);
	}

	/**
	 * Outcome counters since start.
	 *
	 * @param committed transactions committed everywhere (including one-phase)
	 * @param committedOnePhase of those, with a single participant (no decision written)
	 * @param aborted transactions aborted everywhere
	 * @param inDoubt transactions left in-doubt by a failed commit (recovery completes them)
	 * @param recovered in-doubt transactions committed by recovery
	 * @param heuristic heuristic (mixed) outcomes
	 * @param meanCommitMillis mean commit latency, ms
	 * @param recentHeuristics the latest heuristic outcomes, newest first
	 * @since 0.1.0
	 */
	public record Snapshot(long committed, long committedOnePhase, long aborted, long inDoubt, long recovered,
			long heuristic, double meanCommitMillis, List<HeuristicOutcome> recentHeuristics) {
	}

}
