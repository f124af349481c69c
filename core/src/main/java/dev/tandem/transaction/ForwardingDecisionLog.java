package dev.tandem.transaction;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A {@link DecisionLog} that forwards every call to another one: the base of wrappers that change
 * one or two calls (closing more than the log, losing completions in a test). Forwarding every
 * method in one place means a wrapper never falls back to a default by accident: a wrapper that
 * missed {@link #decide(Decision, String, Duration)} would drop the deciding run and let a paused
 * run decide again. Thread-safe if the delegate is.
 *
 * @since 0.1.0
 */
public abstract class ForwardingDecisionLog implements DecisionLog {

	private final DecisionLog delegate;

	/**
	 * Creates a wrapper.
	 * @param delegate the log every call goes to
	 */
	protected ForwardingDecisionLog(DecisionLog delegate) {
		this.delegate = Objects.requireNonNull(delegate, "delegate");
	}

	/**
	 * Returns the log every call goes to.
	 * @return the delegate
	 */
	protected DecisionLog delegate() {
		return this.delegate;
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
	public boolean sharedByInstances() {
		return this.delegate.sharedByInstances();
	}

	@Override
	public boolean supportsLeases() {
		return this.delegate.supportsLeases();
	}

	@Override
	public @Nullable InstanceLease renewHeldLease(String idPrefix, String instanceId, String incarnation,
			Duration duration, Duration timeout) {
		return this.delegate.renewHeldLease(idPrefix, instanceId, incarnation, duration, timeout);
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
		this.delegate.close();
	}

}
