package dev.tandem.autoconfigure.coordinator;

import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.transaction.ForwardingDecisionLog;

/**
 * The decision log of an embedded coordinator; closing it stops the local Ratis peer too.
 */
final class EmbeddedDecisionLog extends ForwardingDecisionLog {

	private final EmbeddedCoordinator coordinator;

	EmbeddedDecisionLog(EmbeddedCoordinator coordinator) {
		super(coordinator.decisionLog());
		this.coordinator = coordinator;
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
