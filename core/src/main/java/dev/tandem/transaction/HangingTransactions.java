package dev.tandem.transaction;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.jspecify.annotations.Nullable;

import dev.tandem.clients.ClusterClients;
import dev.tandem.text.DurationText;

/**
 * Finds Kafka transactions of an app's transactional ids
 * ({@code <id-prefix>.<cluster>.<instance-id>.<slot>}) that are open on a broker with nobody to
 * end them: their instance's lease expired and nobody claimed it (the instance was killed and no
 * survivor took it over), their instance holds no lease though the decision log holds decisions
 * of it, their per-run transactional id names a run that no longer holds its instance's lease (a
 * run in the lease's history, or one that released it: such a run never decides again, and the
 * open transaction waits for a fence), or they have been open longer than the transaction timeout. Such a transaction pins the
 * partitions' last stable offset until its broker aborts it (FLINK-39218 and FLINK-40626 ask for
 * the same for Flink). Reads, per cluster, Admin {@code listTransactions} and
 * {@code describeTransactions}, and the app's leases and decisions; a cluster that does not answer
 * is reported as unavailable. Thread-safe.
 * <p>
 * <b>Only Tandem's transactions.</b> An id prefix and an instance id are free text, so another
 * application's producer may open a transaction under an id of the same shape (a Spring Kafka app
 * with {@code transactionIdPrefix} {@code orders.east.billing.}, next to a Tandem app with id prefix
 * {@code orders}). A transaction is taken as Tandem's, listed and abortable, only when its
 * transactional id reads back exactly as Tandem builds it ({@code TransactionalIds}) <em>and</em>
 * the instance it names is known: this instance, or one the decision log holds a lease of (live,
 * expired or claimed) or decisions of. That no lease is held is never enough: any other open
 * transaction is not Tandem's, never listed and never aborted ({@link #abort} refuses it saying
 * so); while the decision log cannot be read, only this instance's transactions can be told
 * Tandem's.
 * <p>
 * An app's {@link CrossClusterTransactionManager} watches its own id prefix; the coordinator
 * service watches every app it serves ({@link #forApps}), with clusters named as the apps name
 * them (the cluster name is part of the transactional id).
 *
 * @since 0.1.0
 */
public final class HangingTransactions {

	private static final List<org.apache.kafka.clients.admin.TransactionState> OPEN = List.of(
			org.apache.kafka.clients.admin.TransactionState.ONGOING,
			org.apache.kafka.clients.admin.TransactionState.PREPARE_COMMIT,
			org.apache.kafka.clients.admin.TransactionState.PREPARE_ABORT);

	/** Key of {@link Report#unavailable()} for the decision log. */
	private static final String DECISION_LOG = "decision log";

	/** Why a look-alike is left alone when the decision log cannot tell whose it is. */
	private static final String UNDETERMINED = "the decision log cannot be read";

	private final ClusterClients clients;

	private final Supplier<? extends Collection<String>> idPrefixes;

	private final @Nullable String self;

	private final DecisionLog decisionLog;

	private final Duration transactionTimeout;

	HangingTransactions(ClusterClients clients, String idPrefix, String self, DecisionLog decisionLog,
			Duration transactionTimeout) {
		this(clients, () -> List.of(idPrefix), self, decisionLog, transactionTimeout);
	}

	private HangingTransactions(ClusterClients clients, Supplier<? extends Collection<String>> idPrefixes,
			@Nullable String self, DecisionLog decisionLog, Duration transactionTimeout) {
		this.clients = clients;
		this.idPrefixes = idPrefixes;
		this.self = self;
		this.decisionLog = decisionLog;
		this.transactionTimeout = transactionTimeout;
	}

	/**
	 * Returns a finder for the transactions of several apps, as a service that serves them sees
	 * them (the coordinator service): no instance of its own, the id prefixes read at each call.
	 * @param clients the clusters, named as the apps name them
	 * @param idPrefixes the apps' id prefixes ({@code tandem.transaction.id-prefix}), read at each
	 *     {@link #find} and {@link #abort}; prefixes of different apps must not nest
	 * @param decisionLog a log that may read every app's leases and decisions (an admin identity)
	 * @param transactionTimeout the apps' transaction timeout: a transaction open longer hangs
	 * @return the finder
	 */
	public static HangingTransactions forApps(ClusterClients clients, Supplier<? extends Collection<String>> idPrefixes,
			DecisionLog decisionLog, Duration transactionTimeout) {
		return new HangingTransactions(clients, idPrefixes, null, decisionLog, transactionTimeout);
	}

	/**
	 * Lists the hanging transactions on every cluster. A transaction open under a look-alike
	 * transactional id that is not Tandem's (see the class comment) is never listed.
	 * @param timeout the bound of each cluster's reads and of each read of the decision log
	 * @return what was found, oldest first, and the clusters that could not be read
	 */
	public Report find(Duration timeout) {
		return scan(timeout).report();
	}

	/** Reads every cluster's open transactions and sorts out the hanging ones and the foreign ones. */
	private Scan scan(Duration timeout) {
		long now = System.currentTimeMillis();
		List<String> prefixes = List.copyOf(this.idPrefixes.get());
		Map<String, InstanceLease> leases = new HashMap<>();
		boolean leasesKnown = false;
		Map<String, String> unavailable = new LinkedHashMap<>();
		if (this.decisionLog.supportsLeases()) {
			try {
				for (String idPrefix : prefixes) {
					this.decisionLog.leases(idPrefix, timeout)
						.stream()
						.filter((lease) -> lease.idPrefix().equals(idPrefix))
						.forEach((lease) -> leases.put(lease.owner(), lease));
				}
				leasesKnown = true;
			}
			catch (RuntimeException ex) {
				unavailable.put(DECISION_LOG, "leases not readable: " + ex.getMessage());
			}
		}
		Map<String, Boolean> decided = new HashMap<>();
		List<Hanging> hanging = new ArrayList<>();
		Map<String, String> foreign = new HashMap<>();
		for (String cluster : this.clients.names()) {
			Admin admin = null;
			try {
				admin = this.clients.admin(cluster, timeout);
				for (Map.Entry<String, TransactionDescription> open : open(admin, cluster, prefixes, timeout).entrySet()) {
					String transactionalId = open.getKey();
					TransactionDescription description = open.getValue();
					TransactionalIds.Parsed parsed = parse(cluster, transactionalId, prefixes);
					if (parsed == null) {
						continue;
					}
					String owner = parsed.owner();
					String unknown = unknown(parsed, (leasesKnown) ? leases : null, decided, unavailable, timeout);
					if (unknown != null) {
						foreign.put(key(cluster, transactionalId), unknown);
						continue;
					}
					long startedAt = description.transactionStartTimeMs().orElse(now);
					long ageMs = Math.max(0, now - startedAt);
					String reason = reason(parsed, ageMs, (leasesKnown) ? leases : null, now);
					if (reason != null) {
						hanging.add(new Hanging(cluster, transactionalId, owner, description.producerId(),
								description.producerEpoch(), description.state().toString(), Instant.ofEpochMilli(startedAt),
								ageMs, description.topicPartitions().size(), reason));
					}
				}
			}
			catch (RuntimeException ex) {
				unavailable.put(cluster, String.valueOf(ex.getMessage()));
			}
			finally {
				if (admin != null) {
					admin.close(Duration.ofSeconds(1));
				}
			}
		}
		hanging.sort(Comparator.comparing(Hanging::startedAt));
		return new Scan(new Report(List.copyOf(hanging), Collections.unmodifiableMap(unavailable)), foreign);
	}

	/**
	 * Null when the instance a transactional id names is known to be Tandem's: this instance, one
	 * with a lease in the decision log (live, expired or claimed), or one with decisions in it;
	 * otherwise why it is left alone. Absence of a lease alone never makes a transaction Tandem's:
	 * an id prefix and an instance id are free text, and another application's producer may use an
	 * id of the same shape (a Spring Kafka app with transactionIdPrefix {@code orders.east.billing.}).
	 */
	private @Nullable String unknown(TransactionalIds.Parsed parsed, @Nullable Map<String, InstanceLease> leases,
			Map<String, Boolean> decided, Map<String, String> unavailable, Duration timeout) {
		String owner = parsed.owner();
		if (owner.equals(this.self) || (leases != null && leases.containsKey(owner))) {
			return null;
		}
		Boolean hasDecisions = decided.get(owner);
		if (hasDecisions == null) {
			if (unavailable.containsKey(DECISION_LOG)) {
				return UNDETERMINED; // read once per scan: do not wait for a log that is down per transaction
			}
			try {
				hasDecisions = !this.decisionLog.inDoubt(owner, timeout).isEmpty();
			}
			catch (RuntimeException ex) {
				unavailable.putIfAbsent(DECISION_LOG, "decisions not readable: " + ex.getMessage());
				return UNDETERMINED;
			}
			decided.put(owner, hasDecisions);
		}
		if (hasDecisions) {
			return null;
		}
		return "instance '" + parsed.instanceId() + "' of '" + parsed.idPrefix()
				+ "' is not known to the decision log (no lease, no decision of " + owner
				+ "): not Tandem's, another application's producer whose transactional id looks like Tandem's; "
				+ "left alone";
	}

	/**
	 * Aborts one hanging transaction, an operator's decision: fences its transactional id (Admin
	 * {@code fenceProducers}, KIP-618), so that its broker aborts the open transaction at once and
	 * the partitions' last stable offset moves on; a later run of the owner initializes the id again
	 * as usual. Refused for a transaction that is not hanging (a live instance's, or not open), for
	 * one that is not Tandem's (see the class comment: another application's producer is never
	 * fenced) and for a participant of a decided transaction, which must commit (settle the decision
	 * instead). An id that is not of the form Tandem builds is refused without reading a cluster.
	 * @param cluster the cluster it is open on
	 * @param transactionalId its transactional id
	 * @param timeout the bound of each read and of the fencing
	 * @return the transaction as it was listed before the abort
	 * @throws IllegalArgumentException if it is not a hanging transaction of the watched apps (not
	 *     Tandem's among them)
	 * @throws IllegalStateException if a decided transaction names it as a participant
	 * @throws TandemException if a cluster or the decision log cannot be read, or the fencing fails
	 */
	public Hanging abort(String cluster, String transactionalId, Duration timeout) {
		String whose = (this.self != null) ? "this app" : "a served app";
		if (parse(cluster, transactionalId, List.copyOf(this.idPrefixes.get())) == null) {
			throw new IllegalArgumentException("'" + transactionalId + "' on cluster '" + cluster
					+ "' is not a transactional id of " + whose + " (<id-prefix>.<cluster>.<instance-id>.<slot>): "
					+ "not Tandem's, left alone");
		}
		Scan scan = scan(timeout);
		Report report = scan.report();
		Hanging hanging = report.transactions()
			.stream()
			.filter((candidate) -> candidate.cluster().equals(cluster) && candidate.transactionalId().equals(transactionalId))
			.findFirst()
			.orElse(null);
		if (hanging == null) {
			if (report.unavailable().containsKey(cluster)) {
				throw new TandemException("Cannot read the transactions of cluster '" + cluster + "': "
						+ report.unavailable().get(cluster));
			}
			String foreign = scan.foreign().get(key(cluster, transactionalId));
			if (UNDETERMINED.equals(foreign)) {
				throw new TandemException("Cannot tell whether '" + transactionalId + "' on cluster '" + cluster
						+ "' is Tandem's: the decision log cannot be read (" + report.unavailable().get(DECISION_LOG)
						+ ")");
			}
			if (foreign != null) {
				throw new IllegalArgumentException("'" + transactionalId + "' on cluster '" + cluster + "' is not "
						+ "aborted: " + foreign);
			}
			throw new IllegalArgumentException("'" + transactionalId + "' on cluster '" + cluster
					+ "' is not a hanging transaction of " + whose + " (not open, or its instance is live)");
		}
		for (Decision decision : this.decisionLog.inDoubt(hanging.owner(), timeout)) {
			for (Decision.ParticipantRecord participant : decision.participants()) {
				if (participant.cluster().equals(cluster) && participant.transactionalId().equals(transactionalId)) {
					throw new IllegalStateException("'" + transactionalId + "' on cluster '" + cluster
							+ "' is a participant of decided transaction " + decision.transactionId()
							+ ": it must commit, never abort; settle that transaction with action commit");
				}
			}
		}
		Admin admin = this.clients.admin(cluster, timeout);
		try {
			admin.fenceProducers(List.of(transactionalId)).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted while aborting '" + transactionalId + "' on cluster '" + cluster + "'",
					ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new TandemException("Could not abort '" + transactionalId + "' on cluster '" + cluster + "': " + cause,
					cause);
		}
		finally {
			admin.close(Duration.ofSeconds(1));
		}
		return hanging;
	}

	/**
	 * Why a transaction of a known instance ({@link #unknown} said null), open {@code ageMs}, hangs,
	 * or null if it does not; without the leases (a log that keeps none, or could not be read) only
	 * its age tells.
	 */
	private @Nullable String reason(TransactionalIds.Parsed parsed, long ageMs,
			@Nullable Map<String, InstanceLease> leases, long now) {
		String owner = parsed.owner();
		if (ageMs > this.transactionTimeout.toMillis()) {
			return "open longer than the transaction timeout (" + DurationText.of(this.transactionTimeout) + ")";
		}
		if (leases == null) {
			return null;
		}
		InstanceLease lease = leases.get(owner);
		String run = parsed.runId();
		if (lease != null && run != null && lease.isLeftBy(run)) {
			// a run that left the lease never gets it back, so never decides again: nobody ends what it left open
			// but a fence (this instance's own earlier runs included)
			return "its run " + run + " no longer holds its instance's lease ("
					+ (lease.incarnation().equals(run) ? "it released it" : "run " + lease.incarnation() + " took it")
					+ ") and never decides again";
		}
		if (owner.equals(this.self)) {
			return null;
		}
		if (lease == null) {
			return "its instance holds no lease: it is not running (the decision log holds decisions of it)";
		}
		if (lease.isExpiredAt(now) && !lease.isClaimed()) {
			return "its instance's lease expired at " + Instant.ofEpochMilli(lease.expiresAtMs())
					+ " and nobody claimed it";
		}
		return null;
	}

	/**
	 * A transactional id of one of the apps on a cluster read back, or null for another id; the
	 * longest matching prefix wins.
	 */
	private static TransactionalIds.@Nullable Parsed parse(String cluster, String transactionalId,
			List<String> idPrefixes) {
		TransactionalIds.Parsed found = null;
		for (String idPrefix : idPrefixes) {
			if (found != null && idPrefix.length() < found.idPrefix().length()) {
				continue;
			}
			TransactionalIds.Parsed parsed = TransactionalIds.parse(transactionalId, idPrefix, cluster);
			if (parsed != null) {
				found = parsed;
			}
		}
		return found;
	}

	private static String key(String cluster, String transactionalId) {
		return cluster + "\n" + transactionalId;
	}

	private Map<String, TransactionDescription> open(Admin admin, String cluster, List<String> prefixes,
			Duration timeout) {
		try {
			List<String> ids = new ArrayList<>();
			for (TransactionListing listing : admin.listTransactions(new ListTransactionsOptions().filterStates(OPEN))
				.all()
				.get(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
				if (parse(cluster, listing.transactionalId(), prefixes) != null) {
					ids.add(listing.transactionalId());
				}
			}
			if (ids.isEmpty()) {
				return Map.of();
			}
			return admin.describeTransactions(ids).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted while listing the transactions of cluster '" + cluster + "'", ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new TandemException("Could not list the transactions of cluster '" + cluster + "': " + cause, cause);
		}
	}

	/** A scan: the report, and why each foreign look-alike found open was left alone (by cluster and id). */
	private record Scan(Report report, Map<String, String> foreign) {
	}

	/**
	 * What {@link #find(Duration)} found.
	 *
	 * @param transactions the hanging transactions, oldest first
	 * @param unavailable what could not be read (the decision log's leases, then clusters in
	 *     configuration order), with why
	 */
	public record Report(List<Hanging> transactions, Map<String, String> unavailable) {
	}

	/**
	 * One hanging Kafka transaction.
	 *
	 * @param cluster the cluster it is open on
	 * @param transactionalId its transactional id
	 * @param owner the instance it belongs to ({@code <id-prefix>.<instance-id>})
	 * @param producerId its producer id
	 * @param producerEpoch its producer epoch
	 * @param state the broker's state of it (Ongoing, PrepareCommit, PrepareAbort)
	 * @param startedAt when it began
	 * @param ageMs how long it has been open, milliseconds
	 * @param partitions how many partitions it holds (their last stable offset waits for it)
	 * @param reason why nobody will end it
	 */
	public record Hanging(String cluster, String transactionalId, String owner, long producerId, int producerEpoch,
			String state, Instant startedAt, long ageMs, int partitions, String reason) {
	}

}
