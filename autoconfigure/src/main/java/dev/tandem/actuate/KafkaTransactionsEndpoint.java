package dev.tandem.actuate;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import dev.tandem.autoconfigure.kafka.ListenerContainerStatus;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManager.TransactionInfo;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.HangingTransactions;
import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.Settlement;
import dev.tandem.transaction.StaleDecision;
import dev.tandem.transaction.TransactionStatistics;

/**
 * {@code /actuator/kafkatransactions}: the configured clusters and databases, outcome counts since this process started, in-flight and
 * in-doubt transactions, recent heuristic outcomes; {@code /actuator/kafkatransactions/{id}}: one
 * transaction, from this instance's in-flight set or else from the decision log (DECIDED,
 * COMPLETED or ABORTED; 404 when the log has no record: never decided, one-phase, or purged). Renders no client configuration, so no
 * secret can leak.
 *
 * @since 0.1.0
 */
@Endpoint(id = "kafkatransactions")
public class KafkaTransactionsEndpoint {

	private final CrossClusterTransactionManager manager;

	private final TransactionStatistics statistics;

	private final DecisionLog decisionLog;

	private final Duration timeout;

	private final Supplier<List<ListenerContainerStatus>> listeners;

	/**
	 * Creates the endpoint.
	 * @param manager the transaction manager
	 * @param statistics the outcome counters
	 * @param decisionLog the decision log, for transactions not in flight here
	 * @param timeout how long a decision-log read may take
	 */
	public KafkaTransactionsEndpoint(CrossClusterTransactionManager manager, TransactionStatistics statistics,
			DecisionLog decisionLog, Duration timeout) {
		this(manager, statistics, decisionLog, timeout, List::of);
	}

	/**
	 * Creates the endpoint with the status of Tandem's listener containers.
	 * @param manager the transaction manager
	 * @param statistics the outcome counters
	 * @param decisionLog the decision log, for transactions not in flight here
	 * @param timeout how long a decision-log read may take
	 * @param listeners the listener containers' statuses, read at each call
	 * @since 0.1.0
	 */
	public KafkaTransactionsEndpoint(CrossClusterTransactionManager manager, TransactionStatistics statistics,
			DecisionLog decisionLog, Duration timeout, Supplier<List<ListenerContainerStatus>> listeners) {
		this.manager = manager;
		this.statistics = statistics;
		this.decisionLog = decisionLog;
		this.timeout = timeout;
		this.listeners = listeners;
	}

	@ReadOperation
	public TransactionsDescriptor transactions() {
		TransactionStatistics.Snapshot snapshot = this.statistics.snapshot();
		List<TransactionDescriptor> inFlight = this.manager.activeTransactions().stream()
			.map(TransactionDescriptor::of)
			.toList();
		return new TransactionsDescriptor(this.manager.owner(), this.manager.clusters(),
				new Counts(snapshot.committed(), snapshot.committedOnePhase(), snapshot.aborted(), snapshot.inDoubt(),
						snapshot.recovered(), snapshot.heuristic()),
				snapshot.meanCommitMillis(), inFlight, this.manager.inDoubtCount(),
				snapshot.recentHeuristics().stream().map(HeuristicDescriptor::of).toList(),
				this.manager.staleDecisions().stream().map(StaleDecisionDescriptor::of).toList(),
				this.manager.leaseLostTo(), this.listeners.get(), leases(), this.manager.hangingTransactions(this.timeout),
				this.manager.databases());
	}

	/** The leases of this app's instances in the decision log, or the reason they could not be read. */
	private LeasesDescriptor leases() {
		if (!this.decisionLog.supportsLeases()) {
			return new LeasesDescriptor(List.of(), "the decision log keeps no leases");
		}
		try {
			long now = System.currentTimeMillis();
			return new LeasesDescriptor(this.decisionLog.leases(this.manager.idPrefix(), this.timeout)
				.stream()
				.map((lease) -> LeaseDescriptor.of(lease, this.manager.owner(), now))
				.toList(), null);
		}
		catch (RuntimeException ex) {
			return new LeasesDescriptor(List.of(), "could not read the leases: " + ex.getMessage());
		}
	}

	@ReadOperation
	public @Nullable TransactionDescriptor transaction(@Selector String id) {
		TransactionInfo info = this.manager.activeTransaction(id);
		if (info != null) {
			return TransactionDescriptor.of(info);
		}
		DecisionState state = this.decisionLog.state(id, this.timeout);
		if (state == DecisionState.UNKNOWN) {
			return null;
		}
		return new TransactionDescriptor(id, "decision-log:" + state.name(), List.of(), null, List.of());
	}

	/**
	 * Settles a stuck transaction by hand ({@code POST /actuator/kafkatransactions/{id}} with
	 * {@code {"action": "commit"}} or {@code "abort"}): commit resumes a decided transaction's
	 * participants, abort records the abort of one without a decision. Logged at WARN and metered
	 * ({@code tandem.transaction.settled}).
	 * @param id the transaction id
	 * @param action {@code commit} or {@code abort}
	 * @return the outcome
	 * @throws IllegalArgumentException if the action is neither, or the id is not a transaction of this app
	 *     (its id prefix): the endpoint never settles another app's transactions
	 */
	@WriteOperation
	public SettledDescriptor settle(@Selector String id, String action) {
		Settlement settlement;
		try {
			settlement = Settlement.valueOf(action.trim().toUpperCase(java.util.Locale.ROOT));
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("action must be 'commit' or 'abort', not '" + action + "'", ex);
		}
		return new SettledDescriptor(id, settlement.name(), this.manager.settle(id, settlement).name());
	}

	/**
	 * Aborts a hanging Kafka transaction by hand ({@code POST
	 * /actuator/kafkatransactions/{cluster}/{transactionalId}}): one listed under {@code hanging},
	 * fenced so that its broker aborts it and the last stable offset moves on. Refused (400) for a
	 * transaction that is not hanging and for a participant of a decided transaction, which must
	 * commit. Logged at WARN.
	 * @param cluster the cluster it is open on
	 * @param transactionalId its transactional id
	 * @return the transaction as it was listed before the abort
	 * @throws IllegalArgumentException if it is not hanging, or is a participant of a decided transaction
	 */
	@WriteOperation
	public HangingTransactions.Hanging abortHanging(@Selector String cluster, @Selector String transactionalId) {
		try {
			return this.manager.abortHanging(cluster, transactionalId, this.timeout);
		}
		catch (IllegalStateException ex) {
			throw new IllegalArgumentException(ex.getMessage(), ex);
		}
	}

	/**
	 * The outcome of a settlement.
	 *
	 * @param id the transaction id
	 * @param action what was asked
	 * @param outcome COMMITTED, HEURISTIC_MIXED or ABORTED
	 */
	public record SettledDescriptor(String id, String action, String outcome) {
	}

	/**
	 * The whole status.
	 *
	 * @param owner this instance's owner id ({@code <id-prefix>.<instance-id>})
	 * @param clusters configured cluster names
	 * @param counts outcome counts since start
	 * @param meanCommitMillis mean commit latency, ms
	 * @param inFlight transactions begun and not ended, oldest first
	 * @param inDoubt transactions awaiting recovery after a failed commit
	 * @param recentHeuristics latest heuristic outcomes, newest first
	 * @param staleDecisions decided but not completed transactions of any instance of this app,
	 *     older than {@code tandem.transaction.stale-decision-age}, oldest first
	 * @param leaseLostTo the instance that took this one's lease (it took this one for dead), or null
	 * @param listeners Tandem's listener containers: running, paused, stalled, failed (with the
	 *     record that stopped it) or stopped
	 * @param leases the leases of this app's instances in the decision log
	 * @param hanging this app's Kafka transactions open on a broker with nobody to end them (their
	 *     instance's lease expired unclaimed, or older than the transaction timeout), per cluster,
	 *     read at each call
	 * @param databases configured database participants' names ({@code tandem.datasources.*} and
	 *     {@code CrossClusterDataSource} beans)
	 */
	public record TransactionsDescriptor(String owner, List<String> clusters, Counts counts, double meanCommitMillis,
			List<TransactionDescriptor> inFlight, int inDoubt, List<HeuristicDescriptor> recentHeuristics,
			List<StaleDecisionDescriptor> staleDecisions, @Nullable String leaseLostTo,
			List<ListenerContainerStatus> listeners, LeasesDescriptor leases, HangingTransactions.Report hanging,
			List<String> databases) {
	}

	/**
	 * The leases of this app's instances (a linearizable read of the decision log at each call,
	 * bounded by {@code tandem.transaction.decision-timeout}).
	 *
	 * @param instances one lease per instance that holds or held one, by owner id
	 * @param unavailable why they could not be listed, or null
	 */
	public record LeasesDescriptor(List<LeaseDescriptor> instances, @Nullable String unavailable) {
	}

	/**
	 * One instance's lease.
	 *
	 * @param owner the instance's owner id ({@code <id-prefix>.<instance-id>})
	 * @param self whether it is this instance's
	 * @param run the incarnation of the run that holds it (a restart gets a new one)
	 * @param expiresAt when it expires unless renewed
	 * @param expired whether it had expired when read (the instance stopped renewing: dead, or paused)
	 * @param claimedBy the instance that claimed it to take over, or null
	 * @param takenOver whether that takeover finished
	 * @param released whether its run released it (a clean close, or a start-up that failed)
	 * @param pastRuns the runs that held it before {@code run}, oldest first (the lease's run history;
	 *     their transactional ids are fenced by the instance's next run or a claimant)
	 */
	public record LeaseDescriptor(String owner, boolean self, String run, Instant expiresAt, boolean expired,
			@Nullable String claimedBy, boolean takenOver, boolean released, List<String> pastRuns) {

		static LeaseDescriptor of(InstanceLease lease, String self, long nowMs) {
			return new LeaseDescriptor(lease.owner(), lease.owner().equals(self), lease.incarnation(),
					Instant.ofEpochMilli(lease.expiresAtMs()), lease.isExpiredAt(nowMs), lease.claimedBy(),
					lease.takenOver(), lease.released(),
					lease.pastRuns().stream().map(InstanceLease.PastRun::incarnation).toList());
		}

	}

	/**
	 * A stale decision: decided, not completed, older than the stale-decision age.
	 *
	 * @param id the transaction id
	 * @param owner the owning instance
	 * @param decidedAt when it was decided
	 * @param ageMs how long ago, milliseconds
	 */
	public record StaleDecisionDescriptor(String id, String owner, Instant decidedAt, long ageMs) {

		static StaleDecisionDescriptor of(StaleDecision stale) {
			return new StaleDecisionDescriptor(stale.transactionId(), stale.owner(),
					Instant.ofEpochMilli(stale.decidedAtMs()), stale.ageMs());
		}

	}

	/**
	 * Outcome counts.
	 *
	 * @param committed committed everywhere
	 * @param committedOnePhase of those, single-cluster
	 * @param aborted aborted everywhere
	 * @param inDoubt left in-doubt by a failed commit
	 * @param recovered committed by recovery
	 * @param heuristic mixed outcomes
	 */
	public record Counts(long committed, long committedOnePhase, long aborted, long inDoubt, long recovered,
			long heuristic) {
	}

	/**
	 * One transaction.
	 *
	 * @param id the transaction id
	 * @param state its state (or the decision log's, prefixed {@code decision-log:})
	 * @param clusters the clusters it touched
	 * @param startedAt when it began (in-flight only)
	 * @param databases the databases it touched (in-flight only)
	 */
	public record TransactionDescriptor(String id, String state, List<String> clusters, @Nullable Instant startedAt,
			List<String> databases) {

		static TransactionDescriptor of(TransactionInfo info) {
			return new TransactionDescriptor(info.transactionId(), info.state().name(), info.clusters(),
					Instant.ofEpochMilli(info.startedAtMs()), info.databases());
		}

	}

	/**
	 * A heuristic outcome.
	 *
	 * @param id the transaction id
	 * @param committedClusters clusters where it committed (a database as {@code database:<name>})
	 * @param abortedClusters clusters whose broker aborted it (a database that rolled its branch
	 *     back as {@code database:<name>})
	 * @param detectedAt when Tandem detected it
	 */
	public record HeuristicDescriptor(String id, List<String> committedClusters, List<String> abortedClusters,
			Instant detectedAt) {

		static HeuristicDescriptor of(HeuristicOutcome outcome) {
			return new HeuristicDescriptor(outcome.transactionId(), outcome.committedClusters(),
					outcome.abortedClusters(), Instant.ofEpochMilli(outcome.detectedAtMs()));
		}

	}

}
