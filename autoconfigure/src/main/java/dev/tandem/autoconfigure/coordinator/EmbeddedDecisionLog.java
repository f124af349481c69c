package dev.tandem.autoconfigure.coordinator;

import java.time.Duration;
import java.util.List;

import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.DecisionState;

/**
 * The decision log of an embedded coordinator; closing it stops the local Ratis peer too.
 */
final class EmbeddedDecisionLog implements DecisionLog {

	private final EmbeddedCoordinator coordinator;

	private final DecisionLog delegate;

	EmbeddedDecisionLog(EmbeddedCoordinator coordinator) {
		this.coordinator = coordinator;
		this.delegate = coordinator.decisionLog();
	}

	@Override
	public Decision decide(Decision decision, Duration timeout) {
		return this.delegate.decide(decision, timeout);
	}

	@Override
	public void complete(String transactionId) {
		this.delegate.complete(transactionId);
	}

	@Override
	public void abort(String transactionId, String owner, Duration timeout) {
		this.delegate.abort(transactionId, owner, timeout);
	}

	@Override
	public DecisionState state(String transactionId, Duration timeout) {
		return this.delegate.state(transactionId, timeout);
	}

	@Override
	public List<Decision> inDoubt(String owner, Duration timeout) {
		return this.delegate.inDoubt(owner, timeout);
	}

	@Override
	public void close() {
		this.coordinator.close();
	}

	@Override
	public String toString() {
		return "EmbeddedDecisionLog[" + this.coordinator + "]";
	}

}
