package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link DecisionLog} in memory, for tests of the protocol engine: same semantics as the Ratis
 * one (idempotent decide, abort conflict), no durability across JVMs.
 */
class InMemoryDecisionLog implements DecisionLog {

	private final Map<String, Decision> decisions = new ConcurrentHashMap<>();

	/** Shared by every manager given it (all in this JVM): the duplicate check is a test's own choice. */
	@Override
	public boolean sharedByInstances() {
		return true;
	}

	private final Map<String, DecisionState> states = new ConcurrentHashMap<>();

	@Override
	public synchronized Decision decide(Decision decision, Duration timeout) {
		DecisionState state = this.states.getOrDefault(decision.transactionId(), DecisionState.UNKNOWN);
		if (state == DecisionState.ABORTED) {
			throw new IllegalStateException(decision.transactionId() + " is aborted");
		}
		if (state != DecisionState.UNKNOWN) {
			return this.decisions.get(decision.transactionId());
		}
		this.decisions.put(decision.transactionId(), decision);
		this.states.put(decision.transactionId(), DecisionState.DECIDED);
		return decision;
	}

	/** Returns the decision recorded for a transaction, or null. */
	Decision decision(String transactionId) {
		return this.decisions.get(transactionId);
	}

	@Override
	public synchronized void complete(String transactionId) {
		if (this.states.get(transactionId) == DecisionState.DECIDED) {
			this.states.put(transactionId, DecisionState.COMPLETED);
		}
	}

	@Override
	public synchronized void abort(String transactionId, String owner, Duration timeout) {
		this.states.putIfAbsent(transactionId, DecisionState.ABORTED);
	}

	@Override
	public DecisionState state(String transactionId, Duration timeout) {
		return this.states.getOrDefault(transactionId, DecisionState.UNKNOWN);
	}

	@Override
	public synchronized List<Decision> inDoubt(String owner, Duration timeout) {
		List<Decision> result = new ArrayList<>();
		this.decisions.forEach((id, decision) -> {
			if (decision.owner().equals(owner) && this.states.get(id) == DecisionState.DECIDED) {
				result.add(decision);
			}
		});
		result.sort(Comparator.comparingLong(Decision::decidedAtMs));
		return result;
	}

	@Override
	public void close() {
	}

}
