package dev.tandem.actuate;

import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;
import dev.tandem.transaction.Settlement;
import dev.tandem.transaction.TransactionListener;
import dev.tandem.transaction.TransactionState;

/**
 * Micrometer meters of cross-cluster transactions: timer {@code tandem.transaction.commit}
 * (tag {@code phases}: {@code one} or {@code two}), counter {@code tandem.transaction.outcomes}
 * (tag {@code outcome}: committed, aborted, in_doubt, recovered, heuristic) and gauges
 * {@code tandem.transaction.in.doubt}, {@code tandem.transaction.in.flight} and
 * {@code tandem.transaction.decisions.stale}.
 *
 * @since 0.1.0
 */
public class TransactionMetrics implements TransactionListener {

	private final MeterRegistry registry;

	private final Timer onePhase;

	private final Timer twoPhase;

	/**
	 * Creates the meters.
	 * @param registry the registry
	 */
	public TransactionMetrics(MeterRegistry registry) {
		this.registry = registry;
		this.onePhase = commitTimer("one");
		this.twoPhase = commitTimer("two");
	}

	private Timer commitTimer(String phases) {
		return Timer.builder("tandem.transaction.commit")
			.description("Time from commit() to the last participant's commit")
			.tag("phases", phases)
			.publishPercentileHistogram()
			.register(this.registry);
	}

	/**
	 * Binds the gauges of a manager (called once it exists).
	 * @param manager the manager
	 */
	public void bindTo(CrossClusterTransactionManager manager) {
		Gauge.builder("tandem.transaction.in.doubt", manager, CrossClusterTransactionManager::inDoubtCount)
			.description("Decided transactions waiting for recovery to commit them")
			.register(this.registry);
		Gauge.builder("tandem.transaction.in.flight", manager, (m) -> m.activeTransactions().size())
			.description("Transactions begun and not ended")
			.register(this.registry);
		Gauge.builder("tandem.transaction.decisions.stale", manager, (m) -> m.staleDecisions().size())
			.description("Decided but not completed transactions of any instance of this app older than "
					+ "tandem.transaction.stale-decision-age, as the last background check saw them")
			.register(this.registry);
	}

	@Override
	public void onSettled(String transactionId, Settlement action, TransactionState outcome) {
		Counter.builder("tandem.transaction.settled")
			.description("Stuck transactions settled by hand through the kafkatransactions endpoint")
			.tag("action", action.name().toLowerCase(java.util.Locale.ROOT))
			.tag("outcome", outcome.name().toLowerCase(java.util.Locale.ROOT))
			.register(this.registry)
			.increment();
	}

	private void count(String outcome) {
		Counter.builder("tandem.transaction.outcomes").tag("outcome", outcome).register(this.registry).increment();
	}

	@Override
	public void onCommitted(String transactionId, int participants, Duration commitLatency) {
		((participants <= 1) ? this.onePhase : this.twoPhase).record(commitLatency);
		count("committed");
	}

	@Override
	public void onAborted(String transactionId, Throwable cause) {
		count("aborted");
	}

	@Override
	public void onInDoubt(String transactionId, Throwable cause) {
		count("in_doubt");
	}

	@Override
	public void onRecovered(String transactionId) {
		count("recovered");
	}

	@Override
	public void onHeuristicOutcome(HeuristicOutcome outcome) {
		count("heuristic");
	}

}
