package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.ClusterClients;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;

/**
 * Settles the transactions whose outcome is not final: recovery of decided-but-not-completed
 * transactions at start-up, and background resolution of those a commit left in-doubt (decided
 * but not committed everywhere, a decision write with an unknown outcome, a one-phase commit
 * without an answer). Keeps the heuristic outcomes it finds.
 * <p>
 * A decided transaction is committed by resuming each participant's producer id and epoch
 * ({@link ParticipantProtocol}); a participant that refuses is settled by its marker record
 * ({@link MarkerReader}): visible means it had committed, aborted means a heuristic outcome
 * (reported at ERROR and to the listener, never as success). An undecided transaction is
 * recorded as aborted (presumed abort). See {@code docs/architecture.md}, "Recovery".
 * <p>
 * Thread-safe. Background attempts run on one daemon thread, first after the recovery interval,
 * then doubling up to 30 s; a transaction's slot stays taken until it is resolved.
 */
final class InDoubtResolver implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(InDoubtResolver.class);

	private static final Duration MAX_RETRY_DELAY = Duration.ofSeconds(30);

	private final Settings settings;

	private final ParticipantPool pool;

	private final Map<String, PendingOutcome> pending = new ConcurrentHashMap<>();

	private final Map<String, HeuristicOutcome> heuristics = new ConcurrentHashMap<>();

	private final ScheduledExecutorService scheduler;

	private volatile boolean closed;

	/**
	 * What the resolver uses.
	 * @param owner the owner id of this instance's transactions
	 * @param clients the clusters' clients (marker reads)
	 * @param decisionLog the decision log
	 * @param protocol how prepared participants are committed
	 * @param listener told of recoveries, aborts and heuristic outcomes
	 * @param commitTimeout bound of one participant call
	 * @param decisionTimeout bound of one decision-log call
	 * @param recoveryInterval first delay between background attempts
	 */
	record Settings(String owner, ClusterClients clients, DecisionLog decisionLog, ParticipantProtocol protocol,
			TransactionListener listener, Duration commitTimeout, Duration decisionTimeout, Duration recoveryInterval) {
	}

	InDoubtResolver(Settings settings, ParticipantPool pool) {
		this.settings = settings;
		this.pool = pool;
		this.scheduler = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "tandem-recovery-" + settings.owner());
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Recovers every decided-but-not-completed transaction of this instance's owner (start-up,
	 * before the producers' {@code initTransactions()} would abort them).
	 * @throws TandemException if a transaction's outcome cannot be established
	 * @throws DecisionLogException if the decision log cannot be read
	 */
	void recoverAtStart() {
		List<Decision> decisions = this.settings.decisionLog().inDoubt(this.settings.owner(),
				this.settings.decisionTimeout());
		if (!decisions.isEmpty()) {
			logger.info("Recovering {} in-doubt transaction(s) of {}", decisions.size(), this.settings.owner());
		}
		for (Decision decision : decisions) {
			if (recover(decision) == null) {
				this.settings.listener().onRecovered(decision.transactionId());
			}
		}
	}

	/**
	 * Decides what won after a decision write with unknown outcome: records an abort (which the
	 * log refuses if the decision landed), then reads the state. Tries a few times.
	 * @return the state, never {@link DecisionState#UNKNOWN}
	 * @throws DecisionLogException if the decision log stays unreachable
	 */
	DecisionState resolveUnknownDecision(Decision decision) {
		DecisionLog log = this.settings.decisionLog();
		Duration timeout = this.settings.decisionTimeout();
		DecisionLogException last = null;
		for (int attempt = 0; attempt < 3; attempt++) {
			try {
				DecisionState state = log.state(decision.transactionId(), timeout);
				if (state == DecisionState.UNKNOWN) {
					log.abort(decision.transactionId(), decision.owner(), timeout);
					state = log.state(decision.transactionId(), timeout);
				}
				if (state != DecisionState.UNKNOWN) {
					return state;
				}
			}
			catch (RuntimeException ex) {
				last = new DecisionLogException("Decision log unreachable while resolving " + decision.transactionId(), ex);
				logger.warn("Decision log unreachable while resolving {}: {}", decision.transactionId(), ex.toString());
			}
		}
		throw (last != null) ? last : new DecisionLogException("State of " + decision.transactionId() + " stays unknown");
	}

	/**
	 * Takes over a decided transaction that some participant could not commit yet: abandons the
	 * slot's producers (a graceful close would abort), then commits it by resuming.
	 * @return the outcome: COMMITTED or HEURISTIC_MIXED when known
	 */
	CompletableFuture<TransactionState> decidedNotCommitted(Decision decision, ParticipantSlot slot) {
		abandon(slot);
		return settle(decision.transactionId(), slot, () -> commitDecided(decision));
	}

	/**
	 * Takes over a transaction whose decision write has an unknown outcome because the decision
	 * log is unreachable: once it answers, a landed decision is committed by resuming, otherwise
	 * the abort is recorded and the slot's participants aborted.
	 * @return the outcome: COMMITTED, ABORTED or HEURISTIC_MIXED when known
	 */
	CompletableFuture<TransactionState> decisionUnknown(Decision decision, ParticipantSlot slot) {
		abandon(slot);
		return settle(decision.transactionId(), slot, () -> {
			if (resolveUnknownDecision(decision) == DecisionState.ABORTED) {
				// initTransactions() on each participant's id aborts what the abandoned producer left open.
				for (Participant participant : slot.participants.values()) {
					this.pool.open(participant);
				}
				this.settings.listener().onAborted(decision.transactionId(),
						new DecisionLogException("decision of " + decision.transactionId() + " was not recorded"));
				return TransactionState.ABORTED;
			}
			return commitDecided(decision);
		});
	}

	/**
	 * Takes over a one-phase transaction whose {@code commitTransaction()} failed with an unknown
	 * outcome; see {@link OnePhaseSettlement}.
	 * @param failure what the first {@code commitTransaction()} threw
	 * @return the outcome: COMMITTED or ABORTED when known
	 */
	CompletableFuture<TransactionState> onePhaseUnknown(String transactionId, Participant participant,
			ParticipantRecord marker, ParticipantSlot slot, RuntimeException failure) {
		OnePhaseSettlement settlement = new OnePhaseSettlement(transactionId, participant, marker, failure,
				this.settings, this.pool, () -> this.closed);
		return settle(transactionId, slot, settlement::attempt);
	}

	private static void abandon(ParticipantSlot slot) {
		for (Participant participant : slot.participants.values()) {
			participant.abandon();
		}
	}

	/** One attempt at a decided transaction: COMMITTED or HEURISTIC_MIXED, or throws to retry. */
	private TransactionState commitDecided(Decision decision) {
		if (recover(decision) != null) {
			return TransactionState.HEURISTIC_MIXED;
		}
		this.settings.listener().onRecovered(decision.transactionId());
		return TransactionState.COMMITTED;
	}

	private CompletableFuture<TransactionState> settle(String transactionId, ParticipantSlot slot,
			Supplier<TransactionState> resolution) {
		PendingOutcome outcome = new PendingOutcome(transactionId, slot, resolution);
		this.pending.put(transactionId, outcome);
		attempt(outcome, this.settings.recoveryInterval());
		return outcome.future;
	}

	private void attempt(PendingOutcome outcome, Duration nextDelay) {
		String id = outcome.transactionId;
		try {
			TransactionState result = outcome.resolution.get();
			this.pending.remove(id);
			this.pool.release(outcome.slot);
			outcome.future.complete(result);
			logger.info("In-doubt transaction {} resolved: {}", id, result);
		}
		catch (RuntimeException ex) {
			if (this.closed) {
				logger.warn("Transaction {} stays in-doubt; it is resolved at the next start of {}", id,
						this.settings.owner());
				return;
			}
			logger.warn("Transaction {} still in-doubt ({}); retrying in {}", id, ex.toString(), nextDelay);
			Duration doubled = nextDelay.multipliedBy(2);
			Duration after = (doubled.compareTo(MAX_RETRY_DELAY) > 0) ? MAX_RETRY_DELAY : doubled;
			try {
				this.scheduler.schedule(() -> attempt(outcome, after), nextDelay.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (RejectedExecutionException rejected) {
				logger.warn("Transaction {} stays in-doubt; it is resolved at the next start of {}", id,
						this.settings.owner());
			}
		}
	}

	/**
	 * Commits every participant of a decided transaction by resuming it, then records the
	 * completion. A participant the broker refuses is checked through its marker: visible means
	 * it had committed already; aborted means a heuristic outcome.
	 * @return the heuristic outcome, or null if every participant committed
	 * @throws TandemException if a participant's outcome could not be established
	 */
	@Nullable HeuristicOutcome recover(Decision decision) {
		List<String> committed = new ArrayList<>();
		List<String> aborted = new ArrayList<>();
		Duration timeout = this.settings.commitTimeout();
		for (ParticipantRecord participant : decision.participants()) {
			Map<String, Object> config = this.pool.producerConfig(participant.cluster());
			if (this.settings.protocol().commitPrepared(participant, config, timeout)) {
				committed.add(participant.cluster());
				continue;
			}
			switch (MarkerReader.read(participant, this.settings.clients(), timeout)) {
				case COMMITTED -> committed.add(participant.cluster());
				case ABORTED -> aborted.add(participant.cluster());
				case OPEN -> throw new TandemException("Participant " + participant.transactionalId() + " of "
						+ decision.transactionId() + " refused the resumed commit and its marker is still open");
			}
		}
		complete(decision.transactionId());
		if (aborted.isEmpty()) {
			logger.info("Recovered transaction {}: committed on {}", decision.transactionId(), committed);
			return null;
		}
		HeuristicOutcome outcome = new HeuristicOutcome(decision.transactionId(), committed, aborted,
				System.currentTimeMillis());
		this.heuristics.put(decision.transactionId(), outcome);
		logger.error("HEURISTIC OUTCOME: decided transaction {} committed on {} but the broker aborted it on {}; "
				+ "data on those clusters must be repaired", decision.transactionId(), committed, aborted);
		this.settings.listener().onHeuristicOutcome(outcome);
		return outcome;
	}

	/**
	 * Records that a decided transaction committed everywhere; a failure is harmless (recovery
	 * commits it again, which is idempotent, and completes it then).
	 */
	void complete(String transactionId) {
		try {
			this.settings.decisionLog().complete(transactionId);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not record completion of transaction {}", transactionId, ex);
		}
	}

	/** Returns the eventual outcome of a transaction being resolved here, or null. */
	@Nullable CompletableFuture<TransactionState> outcome(String transactionId) {
		PendingOutcome outcome = this.pending.get(transactionId);
		return (outcome != null) ? outcome.future : null;
	}

	/** Returns the heuristic outcome found for a transaction, or null. */
	@Nullable HeuristicOutcome heuristicOutcome(String transactionId) {
		return this.heuristics.get(transactionId);
	}

	/** Returns the ids of the transactions still being resolved. */
	List<String> pendingIds() {
		return List.copyOf(this.pending.keySet());
	}

	/** Returns how many transactions are still being resolved. */
	int pendingCount() {
		return this.pending.size();
	}

	/** Stops background attempts; what is unresolved is resolved at the next start. */
	@Override
	public void close() {
		this.closed = true;
		this.scheduler.shutdownNow();
	}

	private static final class PendingOutcome {

		final String transactionId;

		final ParticipantSlot slot;

		final Supplier<TransactionState> resolution;

		final CompletableFuture<TransactionState> future = new CompletableFuture<>();

		PendingOutcome(String transactionId, ParticipantSlot slot, Supplier<TransactionState> resolution) {
			this.transactionId = transactionId;
			this.slot = slot;
			this.resolution = resolution;
		}

	}

}
