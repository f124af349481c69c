package dev.tandem.autoconfigure.coordinator;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;

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
	public Decision decide(Decision decision, @Nullable String incarnation, Duration timeout) {
		return this.delegate.decide(decision, incarnation, timeout);
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
	public boolean supportsLeases() {
		return this.delegate.supportsLeases();
	}

	@Override
	public InstanceLease renewLease(String idPrefix, String instanceId, String incarnation, Duration duration,
			Duration timeout) {
		return this.delegate.renewLease(idPrefix, instanceId, incarnation, duration, timeout);
	}

	@Override
	public @Nullable InstanceLease claimLease(String owner, String claimant, Duration timeout) {
		return this.delegate.claimLease(owner, claimant, timeout);
	}

	@Override
	public void releaseLease(String owner, String by, Duration timeout) {
		this.delegate.releaseLease(owner, by, timeout);
	}

	@Override
	public List<InstanceLease> leases(String idPrefix, Duration timeout) {
		return this.delegate.leases(idPrefix, timeout);
	}

	@Override
	public List<Decision> appInDoubt(String idPrefix, Duration timeout) {
		return this.delegate.appInDoubt(idPrefix, timeout);
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
