package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.ClusterClients;
import dev.tandem.transaction.Decision.DatabaseRecord;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;

/**
 * Recovery of the transactions whose outcome is not final, and takeover: commits this instance's
 * decided-but-not-completed transactions at start-up ({@link #recoverAtStart}) and a dead
 * instance's when this one claimed its lease ({@link #takeOver}); and takes over a transaction a
 * commit left in-doubt (decided but not committed everywhere, a decision write with an unknown
 * outcome, a one-phase commit without an answer), which the {@link InDoubtQueue} then retries
 * until its outcome is known. Keeps the heuristic outcomes it finds.
 * <p>
 * A decided transaction is committed by resuming each participant's producer id and epoch
 * ({@link ParticipantProtocol}); a participant that refuses is settled by its marker record
 * ({@link MarkerReader}): visible means it had committed, aborted means a heuristic outcome
 * (reported at ERROR and to the listener, never as success). An undecided transaction is
 * recorded as aborted (presumed abort). See {@code docs/architecture.md}, "The protocol and recovery".
 * An operator's settlement is {@link OperatorSettlement}; a successful commit completes through
 * {@link Completions}, never through here.
 * <p>
 * Thread-safe.
 */
final class TransactionRecovery {

	private static final Logger logger = LoggerFactory.getLogger(TransactionRecovery.class);

	private final Settings settings;

	private final ParticipantPool pool;

	private final PendingRecoveries pendingRecoveries;

	private final Map<String, HeuristicOutcome> heuristics = new ConcurrentHashMap<>();

	private final InDoubtQueue queue;

	/**
	 * What recovery uses.
	 * @param owner the owner id of this instance's transactions
	 * @param clients the clusters' clients (marker reads)
	 * @param decisionLog the decision log
	 * @param protocol how prepared participants are committed
	 * @param listener told of recoveries, aborts and heuristic outcomes
	 * @param commitTimeout bound of one participant call
	 * @param decisionTimeout bound of one decision-log call
	 * @param recoveryInterval first delay between background attempts
	 * @param databases the database participants (commits and rollbacks of prepared branches)
	 */
	record Settings(String owner, ClusterClients clients, DecisionLog decisionLog, ParticipantProtocol protocol,
			TransactionListener listener, Duration commitTimeout, Duration decisionTimeout, Duration recoveryInterval,
			Databases databases) {
	}

	TransactionRecovery(Settings settings, ParticipantPool pool, PendingRecoveries pendingRecoveries, InDoubtQueue queue) {
		this.settings = settings;
		this.pool = pool;
		this.pendingRecoveries = pendingRecoveries;
		this.queue = queue;
	}

	/**
	 * Reads this instance's owner's decided-but-not-completed transactions from the decision log.
	 * @return them, in the log's order
	 * @throws DecisionLogException if the decision log cannot be read
	 */
	List<Decision> inDoubtAtStart() {
		return this.settings.decisionLog().inDoubt(this.settings.owner(), this.settings.decisionTimeout());
	}

	/**
	 * Returns the transactional ids of the decisions' Kafka participants.
	 * @param decisions the decisions
	 * @return the ids
	 */
	static Set<String> participantIds(List<Decision> decisions) {
		Set<String> ids = new HashSet<>();
		for (Decision decision : decisions) {
			for (ParticipantRecord participant : decision.participants()) {
				ids.add(participant.transactionalId());
			}
		}
		return ids;
	}

	/**
	 * Recovers every decided-but-not-completed transaction of this instance's owner (start-up,
	 * before the producers' {@code initTransactions()} would abort them). A transaction that cannot
	 * be recovered now (a participant's cluster is down) is recovered in the background unless
	 * {@code requireAll}; until then, no producer of its clusters is initialized
	 * ({@link PendingRecoveries}).
	 * @param decisions what {@link #inDoubtAtStart()} returned
	 * @param requireAll whether a transaction that cannot be recovered now fails the start
	 * @throws TandemException if a transaction's outcome cannot be established and {@code requireAll}
	 */
	void recoverAtStart(List<Decision> decisions, boolean requireAll) {
		if (!decisions.isEmpty()) {
			logger.info("Recovering {} in-doubt transaction(s) of {}", decisions.size(), this.settings.owner());
		}
		for (Decision decision : decisions) {
			try {
				if (recover(decision) == null) {
					this.settings.listener().onRecovered(decision.transactionId());
				}
			}
			catch (RuntimeException ex) {
				if (requireAll) {
					throw ex;
				}
				List<String> clusters = decision.participants().stream().map(ParticipantRecord::cluster).toList();
				logger.warn("In-doubt transaction {} cannot be recovered now ({}); recovering it in the background, and "
						+ "initializing no producer of {} until then", decision.transactionId(), ex.toString(), clusters);
				this.pendingRecoveries.add(clusters);
				this.queue.resolve(decision.transactionId(), null, () -> {
					TransactionState outcome = commitDecided(decision);
					this.pendingRecoveries.remove(clusters);
					return outcome;
				});
			}
		}
	}

	/**
	 * Takes over a dead instance of this app whose lease this instance has claimed: commits its
	 * decided transactions by resuming them (a participant its broker already aborted makes a
	 * heuristic outcome, reported at ERROR and to the listener), then, if {@code stillEntitled}
	 * says the claim still holds, fences the transactional ids of the claimed run and of every run
	 * before it in the lease's history ({@link InstanceLease#runsToFence()}) so their undecided Kafka
	 * transactions abort at once, and marks the lease taken over. None of those runs can decide
	 * again (the lease never returns to a run it left) and a newer run of the instance has
	 * transactional ids of its own, so the fence cannot abort a transaction of a live run, however
	 * long this instance pauses before it; the {@code stillEntitled} check only spares useless work.
	 * @param dead the claimed lease, with its run history where the log keeps one
	 * @param stillEntitled checked right before fencing: whether the claim and this instance's
	 *     own lease are still valid
	 * @return the number of decided transactions committed (heuristic ones included)
	 * @throws TandemException if a transaction's outcome cannot be established yet (the claim
	 *     stays, and the next attempt goes on)
	 * @throws DecisionLogException if the decision log cannot be reached
	 */
	int takeOver(InstanceLease dead, java.util.function.BooleanSupplier stillEntitled) {
		String owner = this.settings.owner();
		DecisionLog log = this.settings.decisionLog();
		List<Decision> decisions = log.inDoubt(dead.owner(), this.settings.decisionTimeout());
		logger.warn("Taking over instance {} (its lease expired at {} and was not renewed): {} decided transaction(s) "
				+ "to commit", dead.owner(), java.time.Instant.ofEpochMilli(dead.expiresAtMs()), decisions.size());
		int heuristic = 0;
		for (Decision decision : decisions) {
			if (recover(decision) == null) {
				this.settings.listener().onRecovered(decision.transactionId());
			}
			else {
				heuristic++;
			}
		}
		recoverPreparedBranches(dead.owner());
		if (!stillEntitled.getAsBoolean()) {
			// The claim lapsed while this instance committed (it paused past its own lease, and a new run
			// of the claimed instance may own those transactional ids now): fencing could abort its work.
			logger.warn("Takeover of {} stops before fencing: this instance's claim or lease is no longer valid; "
					+ "its decided transactions are committed, its open ones abort at transaction.timeout.ms or when "
					+ "its next run fences them", dead.owner());
			return decisions.size();
		}
		// the claimed run's ids and those of every run before it (its run history): a newer run of the
		// instance is never touched, however long this paused
		List<String> fenced = this.pool.fence(dead.instanceId(), dead.runsToFence());
		log.releaseLease(dead.owner(), owner, this.settings.decisionTimeout());
		logger.info("Took over instance {}: {} decided transaction(s) committed ({} heuristic), open transactions of "
				+ "{} aborted", dead.owner(), decisions.size() - heuristic, heuristic, fenced);
		return decisions.size();
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
		return this.queue.resolve(decision.transactionId(), slot, () -> commitDecided(decision));
	}

	/**
	 * Takes over a transaction whose decision write has an unknown outcome because the decision
	 * log is unreachable: once it answers, a landed decision is committed by resuming, otherwise
	 * the abort is recorded and the slot's participants aborted.
	 * @return the outcome: COMMITTED, ABORTED or HEURISTIC_MIXED when known
	 */
	CompletableFuture<TransactionState> decisionUnknown(Decision decision, ParticipantSlot slot) {
		abandon(slot);
		return this.queue.resolve(decision.transactionId(), slot, () -> {
			if (resolveUnknownDecision(decision) == DecisionState.ABORTED) {
				// initTransactions() on each participant's id aborts what the abandoned producer left open.
				for (Participant participant : slot.participants.values()) {
					this.pool.open(participant);
				}
				for (DatabaseRecord database : decision.databases()) {
					this.settings.databases().rollbackPrepared(database.database(),
							DatabaseXid.parse(database.preparedId()));
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
				this.settings, this.pool, this.queue::isClosed);
		return this.queue.resolve(transactionId, slot, settlement::attempt);
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
		for (DatabaseRecord database : decision.databases()) {
			String name = "database:" + database.database();
			(this.settings.databases().commitPrepared(database, decision.transactionId()) ? committed : aborted).add(name);
		}
		Completions.record(this.settings.decisionLog(), decision.transactionId());
		if (aborted.isEmpty()) {
			logger.info("Recovered transaction {}: committed on {}", decision.transactionId(), committed);
			return null;
		}
		HeuristicOutcome outcome = new HeuristicOutcome(decision.transactionId(), committed, aborted,
				System.currentTimeMillis());
		this.heuristics.put(decision.transactionId(), outcome);
		logger.error("HEURISTIC OUTCOME: decided transaction {} committed on {} but was aborted on {} (a broker's "
				+ "transaction timeout, or a database that rolled back its prepared branch); data there must be repaired",
				decision.transactionId(), committed, aborted);
		this.settings.listener().onHeuristicOutcome(outcome);
		return outcome;
	}

	/**
	 * Settles the prepared database branches of an owner that no decision of the in-doubt list
	 * covered (start-up, after {@link #recoverAtStart}; takeover): each branch's transaction is
	 * looked up in the decision log, an unknown one recorded as aborted first (so that a late
	 * decision is refused: presumed abort), then the branch is committed if the transaction is
	 * decided and rolled back otherwise.
	 * @param owner the owner whose branches to settle
	 * @return the number of branches settled
	 * @throws TandemException if a database cannot be reached or a branch cannot be settled
	 * @throws DecisionLogException if the decision log cannot be read
	 */
	int recoverPreparedBranches(String owner) {
		DecisionLog log = this.settings.decisionLog();
		Duration timeout = this.settings.decisionTimeout();
		int settled = 0;
		for (Map.Entry<String, List<String>> entry : this.settings.databases().prepared(owner).entrySet()) {
			String database = entry.getKey();
			for (String transactionId : entry.getValue()) {
				DatabaseXid xid = DatabaseXid.of(transactionId, database);
				DecisionState state = log.state(transactionId, timeout);
				if (state == DecisionState.UNKNOWN) {
					log.abort(transactionId, owner, timeout);
					state = log.state(transactionId, timeout);
				}
				if (state == DecisionState.DECIDED || state == DecisionState.COMPLETED) {
					this.settings.databases().commitPrepared(new DatabaseRecord(database, xid.toString()), transactionId);
					logger.info("Committed prepared branch {} of decided transaction {} on database '{}'", xid,
							transactionId, database);
				}
				else {
					this.settings.databases().rollbackPrepared(database, xid);
					logger.info("Rolled back prepared branch {} of undecided transaction {} on database '{}' (presumed "
							+ "abort)", xid, transactionId, database);
				}
				settled++;
			}
		}
		return settled;
	}

	/** Returns the heuristic outcome found for a transaction, or null. */
	@Nullable HeuristicOutcome heuristicOutcome(String transactionId) {
		return this.heuristics.get(transactionId);
	}

}
