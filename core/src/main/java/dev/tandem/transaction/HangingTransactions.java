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
 * end them: their instance holds no live lease in the decision log and nobody claimed it (the
 * instance was killed and no survivor took it over), or they have been open longer than the
 * transaction timeout. Such a transaction pins the partitions' last stable offset until its
 * broker aborts it (FLINK-39218 and FLINK-40626 ask for the same for Flink). Reads, per cluster,
 * Admin {@code listTransactions} and {@code describeTransactions}, and the app's leases; a
 * cluster that does not answer is reported as unavailable. Thread-safe.
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
	 * Lists the hanging transactions on every cluster.
	 * @param timeout the bound of each cluster's reads and of the lease read
	 * @return what was found, oldest first, and the clusters that could not be read
	 */
	public Report find(Duration timeout) {
		long now = System.currentTimeMillis();
		List<String> prefixes = List.copyOf(this.idPrefixes.get());
		Map<String, InstanceLease> leases = new HashMap<>();
		boolean leasesKnown = false;
		Map<String, String> unavailable = new LinkedHashMap<>();
		if (this.decisionLog.supportsLeases()) {
			try {
				for (String idPrefix : prefixes) {
					this.decisionLog.leases(idPrefix, timeout).forEach((lease) -> leases.put(lease.owner(), lease));
				}
				leasesKnown = true;
			}
			catch (RuntimeException ex) {
				unavailable.put("decision log", "leases not readable: " + ex.getMessage());
			}
		}
		List<Hanging> hanging = new ArrayList<>();
		boolean known = leasesKnown;
		for (String cluster : this.clients.names()) {
			Admin admin = null;
			try {
				admin = this.clients.admin(cluster, timeout);
				Admin reader = admin;
				open(reader, cluster, prefixes, timeout).forEach((transactionalId, description) -> {
					String owner = owner(cluster, transactionalId, prefixes);
					if (owner == null) {
						return;
					}
					long startedAt = description.transactionStartTimeMs().orElse(now);
					long ageMs = Math.max(0, now - startedAt);
					String reason = reason(owner, ageMs, (known) ? leases : null, now);
					if (reason != null) {
						hanging.add(new Hanging(cluster, transactionalId, owner, description.producerId(),
								description.producerEpoch(), description.state().toString(), Instant.ofEpochMilli(startedAt),
								ageMs, description.topicPartitions().size(), reason));
					}
				});
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
		return new Report(List.copyOf(hanging), Collections.unmodifiableMap(unavailable));
	}

	/**
	 * Aborts one hanging transaction, an operator's decision: fences its transactional id (Admin
	 * {@code fenceProducers}, KIP-618), so that its broker aborts the open transaction at once and
	 * the partitions' last stable offset moves on; a later run of the owner initializes the id again
	 * as usual. Refused for a transaction that is not hanging (a live instance's, or not open) and
	 * for a participant of a decided transaction, which must commit (settle the decision instead).
	 * @param cluster the cluster it is open on
	 * @param transactionalId its transactional id
	 * @param timeout the bound of each read and of the fencing
	 * @return the transaction as it was listed before the abort
	 * @throws IllegalArgumentException if it is not a hanging transaction of the watched apps
	 * @throws IllegalStateException if a decided transaction names it as a participant
	 * @throws TandemException if a cluster or the decision log cannot be read, or the fencing fails
	 */
	public Hanging abort(String cluster, String transactionalId, Duration timeout) {
		Report report = find(timeout);
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
			throw new IllegalArgumentException("'" + transactionalId + "' on cluster '" + cluster
					+ "' is not a hanging transaction of " + ((this.self != null) ? "this app" : "a served app")
					+ " (not open, not " + ((this.self != null) ? "this app's" : "a served app's")
					+ ", or its instance is live)");
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
	 * Why a transaction of this owner, open {@code ageMs}, hangs, or null if it does not; without
	 * the leases (a log that keeps none, or could not be read) only its age tells.
	 */
	private @Nullable String reason(String owner, long ageMs, @Nullable Map<String, InstanceLease> leases, long now) {
		if (ageMs > this.transactionTimeout.toMillis()) {
			return "open longer than the transaction timeout (" + DurationText.of(this.transactionTimeout) + ")";
		}
		if (leases == null || owner.equals(this.self)) {
			return null;
		}
		InstanceLease lease = leases.get(owner);
		if (lease == null) {
			return "its instance holds no lease: it is not running";
		}
		if (lease.isExpiredAt(now) && !lease.isClaimed()) {
			return "its instance's lease expired at " + Instant.ofEpochMilli(lease.expiresAtMs())
					+ " and nobody claimed it";
		}
		return null;
	}

	/** The owner id of one of this app's transactional ids on a cluster, or null for another id. */
	@Nullable String owner(String cluster, String transactionalId) {
		return owner(cluster, transactionalId, List.copyOf(this.idPrefixes.get()));
	}

	/**
	 * The owner id of a transactional id of one of the apps on a cluster, or null for another id;
	 * the longest matching prefix wins.
	 */
	private static @Nullable String owner(String cluster, String transactionalId, List<String> idPrefixes) {
		String found = null;
		String foundPrefix = "";
		for (String idPrefix : idPrefixes) {
			String prefix = idPrefix + "." + cluster + ".";
			if (idPrefix.length() < foundPrefix.length() || !transactionalId.startsWith(prefix)) {
				continue;
			}
			String rest = transactionalId.substring(prefix.length());
			int dot = rest.lastIndexOf('.');
			if (dot <= 0 || dot == rest.length() - 1 || !rest.substring(dot + 1).chars().allMatch(Character::isDigit)) {
				continue;
			}
			found = idPrefix + "." + rest.substring(0, dot);
			foundPrefix = idPrefix;
		}
		return found;
	}

	private Map<String, TransactionDescription> open(Admin admin, String cluster, List<String> prefixes,
			Duration timeout) {
		try {
			List<String> ids = new ArrayList<>();
			for (TransactionListing listing : admin.listTransactions(new ListTransactionsOptions().filterStates(OPEN))
				.all()
				.get(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
				if (owner(cluster, listing.transactionalId(), prefixes) != null) {
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
