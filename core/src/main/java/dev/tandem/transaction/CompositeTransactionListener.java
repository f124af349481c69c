package dev.tandem.transaction;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;

/**
 * Tells every registered {@link TransactionListener}, in registration order, isolating each from
 * the others' failures (a failing listener is logged at WARN and the next one is still told).
 * Thread-safe: the list is immutable.
 */
final class CompositeTransactionListener implements TransactionListener {

	private static final Logger logger = LoggerFactory.getLogger(CompositeTransactionListener.class);

	private final List<TransactionListener> listeners;

	CompositeTransactionListener(List<TransactionListener> listeners) {
		this.listeners = List.copyOf(listeners);
	}

	private void each(Consumer<TransactionListener> call) {
		for (TransactionListener listener : this.listeners) {
			try {
				call.accept(listener);
			}
			catch (RuntimeException ex) {
				logger.warn("Transaction listener {} failed", listener, ex);
			}
		}
	}

	@Override
	public void onCommitted(String transactionId, int participants, Duration commitLatency) {
		each((l) -> l.onCommitted(transactionId, participants, commitLatency));
	}

	@Override
	public void onAborted(String transactionId, Throwable cause) {
		each((l) -> l.onAborted(transactionId, cause));
	}

	@Override
	public void onInDoubt(String transactionId, Throwable cause) {
		each((l) -> l.onInDoubt(transactionId, cause));
	}

	@Override
	public void onRecovered(String transactionId) {
		each((l) -> l.onRecovered(transactionId));
	}

	@Override
	public void onHeuristicOutcome(HeuristicOutcome outcome) {
		each((l) -> l.onHeuristicOutcome(outcome));
	}

	@Override
	public void onSettled(String transactionId, Settlement action, TransactionState outcome) {
		each((l) -> l.onSettled(transactionId, action, outcome));
	}

}
