package dev.tandem.coordinator.service;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLogBuilder;
import dev.tandem.coordinator.server.CoordinatorServerBuilder;
import dev.tandem.coordinator.state.CoordinatorQuotas;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the coordinator peer this server hosts ({@code tandem.coordinator.server.*};
 * as environment variables {@code TANDEM_COORDINATOR_SERVER_PEER_ID},
 * {@code TANDEM_COORDINATOR_SERVER_PEERS}, ...). The HTTP port of health and metrics is
 * Spring Boot's {@code server.port}; the Raft (gRPC) port is the one of this peer's address
 * in {@link #getPeers() the peer list}.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("tandem.coordinator.server")
public class CoordinatorServerProperties {

	/**
	 * Id of the peer this server hosts; must be one of the ids of the peer list. In Kubernetes,
	 * the pod name of the StatefulSet.
	 */
	private @Nullable String peerId;

	/**
	 * Every peer of the group as comma-separated id=host:port items, in the same order on
	 * every server, for example "coordinator-0=coordinator-0.coordinator:9872,...". The port
	 * is the Raft (gRPC) port.
	 */
	private @Nullable String peers;

	/**
	 * Raft group id shared by all peers and their clients; by default the id Tandem's clients
	 * assume.
	 */
	private UUID groupId = CoordinatorGroup.DEFAULT_GROUP_ID;

	/**
	 * Directory of this peer's Raft log and snapshots; must survive restarts (a persistent
	 * volume), one per peer.
	 */
	private Path dataDir = Path.of("data");

	/**
	 * Address the Raft endpoint binds to; all interfaces when not set.
	 */
	private @Nullable String bindHost;

	/**
	 * Whether the Raft endpoint may run without TLS when no SSL bundle is set. Every caller
	 * that reaches the port may then change decisions: only on a trusted network or a
	 * loopback bind host.
	 */
	private boolean plaintextAllowed;

	private final Ssl ssl = new Ssl();

	private final Authorization authorization = new Authorization();

	private final Purge purge = new Purge();

	private final Quotas quotas = new Quotas();

	private final ElectionTimeout electionTimeout = new ElectionTimeout();

	private final Snapshot snapshot = new Snapshot();

	private final Shutdown shutdown = new Shutdown();

	private final Health health = new Health();

	public boolean isPlaintextAllowed() {
		return this.plaintextAllowed;
	}

	public void setPlaintextAllowed(boolean plaintextAllowed) {
		this.plaintextAllowed = plaintextAllowed;
	}

	public Ssl getSsl() {
		return this.ssl;
	}

	public Authorization getAuthorization() {
		return this.authorization;
	}

	public Quotas getQuotas() {
		return this.quotas;
	}

	public Purge getPurge() {
		return this.purge;
	}

	public @Nullable String getPeerId() {
		return this.peerId;
	}

	public void setPeerId(@Nullable String peerId) {
		this.peerId = peerId;
	}

	public @Nullable String getPeers() {
		return this.peers;
	}

	public void setPeers(@Nullable String peers) {
		this.peers = peers;
	}

	public UUID getGroupId() {
		return this.groupId;
	}

	public void setGroupId(UUID groupId) {
		this.groupId = groupId;
	}

	public Path getDataDir() {
		return this.dataDir;
	}

	public void setDataDir(Path dataDir) {
		this.dataDir = dataDir;
	}

	public @Nullable String getBindHost() {
		return this.bindHost;
	}

	public void setBindHost(@Nullable String bindHost) {
		this.bindHost = bindHost;
	}

	public ElectionTimeout getElectionTimeout() {
		return this.electionTimeout;
	}

	public Snapshot getSnapshot() {
		return this.snapshot;
	}

	public Shutdown getShutdown() {
		return this.shutdown;
	}

	public Health getHealth() {
		return this.health;
	}

	/**
	 * Returns the group described by {@code peers} and {@code group-id}.
	 * @return the group
	 * @throws IllegalStateException if the peer id or peer list is missing, malformed, or the
	 *     peer id is not in the list
	 */
	public CoordinatorGroup group() {
		if (this.peerId == null || this.peerId.isBlank()) {
			throw new IllegalStateException("tandem.coordinator.server.peer-id is not set");
		}
		if (this.peers == null || this.peers.isBlank()) {
			throw new IllegalStateException("tandem.coordinator.server.peers is not set (id=host:port,...)");
		}
		CoordinatorGroup group;
		try {
			group = CoordinatorGroup.of(this.groupId, CoordinatorGroup.parse(this.peers).peers());
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("tandem.coordinator.server.peers is invalid: " + ex.getMessage(), ex);
		}
		if (!group.peers().containsKey(this.peerId)) {
			throw new IllegalStateException("tandem.coordinator.server.peer-id '" + this.peerId
					+ "' is not in tandem.coordinator.server.peers " + group.peers().keySet());
		}
		return group;
	}

	/**
	 * Mutual TLS of the Raft endpoint.
	 */
	public static class Ssl {

		/**
		 * Name of the Spring Boot SSL bundle (spring.ssl.bundle.*) whose key store holds this
		 * peer's certificate and whose trust store holds the CA of the peers' and clients'
		 * certificates. Peers verify each other's host names against the certificates'
		 * subject alternative names.
		 */
		private @Nullable String bundle;

		public @Nullable String getBundle() {
			return this.bundle;
		}

		public void setBundle(@Nullable String bundle) {
			this.bundle = bundle;
		}

	}

	/**
	 * Who may do what, by the common name (CN) of the caller's TLS certificate; only with an
	 * SSL bundle.
	 */
	public static class Authorization {

		/**
		 * Certificate common names of the peers (they replicate the log and are admins); by
		 * default the common name of this peer's own certificate, so peers sharing one
		 * certificate need no setting.
		 */
		private List<String> peers = new ArrayList<>();

		/**
		 * Certificate common names of operators and tools that may act for every app and run
		 * purges and settles.
		 */
		private List<String> admins = new ArrayList<>();

		/**
		 * Certificate common name of each app, mapped to the tandem.transaction.id-prefix
		 * values whose transactions it may decide, complete, abort and read, for example
		 * apps.orders-app=orders,orders-replay.
		 */
		private Map<String, List<String>> apps = new LinkedHashMap<>();

		public List<String> getPeers() {
			return this.peers;
		}

		public void setPeers(List<String> peers) {
			this.peers = peers;
		}

		public List<String> getAdmins() {
			return this.admins;
		}

		public void setAdmins(List<String> admins) {
			this.admins = admins;
		}

		public Map<String, List<String>> getApps() {
			return this.apps;
		}

		public void setApps(Map<String, List<String>> apps) {
			this.apps = apps;
		}

	}

	/**
	 * What the owners of one app identity (tandem.coordinator.server.authorization.apps) may
	 * hold at once; a command past a quota is refused before it reaches the log, naming the
	 * property. Admins and peers are not limited.
	 */
	public static class Quotas {

		/**
		 * Most decided, not yet completed transactions of one app identity's owners.
		 */
		private int maxOpenDecisions = CoordinatorQuotas.DEFAULTS.maxOpenDecisions();

		/**
		 * Most instance leases (running or not yet purged instances) of one app identity's owners.
		 */
		private int maxLeases = CoordinatorQuotas.DEFAULTS.maxLeases();

		/**
		 * Most aborted records of one app identity's owners (kept until the purge retention).
		 */
		private int maxAborted = CoordinatorQuotas.DEFAULTS.maxAborted();

		public int getMaxOpenDecisions() {
			return this.maxOpenDecisions;
		}

		public void setMaxOpenDecisions(int maxOpenDecisions) {
			this.maxOpenDecisions = maxOpenDecisions;
		}

		public int getMaxLeases() {
			return this.maxLeases;
		}

		public void setMaxLeases(int maxLeases) {
			this.maxLeases = maxLeases;
		}

		public int getMaxAborted() {
			return this.maxAborted;
		}

		public void setMaxAborted(int maxAborted) {
			this.maxAborted = maxAborted;
		}

		/**
		 * Returns the quotas for the peer.
		 * @return the quotas
		 * @throws IllegalArgumentException if a value is not positive
		 */
		public CoordinatorQuotas toQuotas() {
			positive("max-open-decisions", this.maxOpenDecisions);
			positive("max-leases", this.maxLeases);
			positive("max-aborted", this.maxAborted);
			return new CoordinatorQuotas(this.maxOpenDecisions, this.maxLeases, this.maxAborted);
		}

		private static void positive(String property, int value) {
			if (value <= 0) {
				throw new IllegalArgumentException(
						"tandem.coordinator.server.quotas." + property + " must be positive, not " + value);
			}
		}

	}

	/**
	 * Removal of completed and aborted records, and of the leases (and their owners' decisions)
	 * of instances gone for longer than the retention, run by the coordinator service itself
	 * (apps in remote mode do not purge: it is an administrative operation).
	 */
	public static class Purge {

		/**
		 * How often this peer asks the group to purge; 0 to never purge.
		 */
		private Duration interval = RatisDecisionLogBuilder.DEFAULT_PURGE_INTERVAL;

		/**
		 * How long completed and aborted records, and the leases of instances that stopped
		 * renewing, are kept; longer than any app's recovery could still ask about them.
		 */
		private Duration retention = RatisDecisionLogBuilder.DEFAULT_RETENTION;

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public Duration getRetention() {
			return this.retention;
		}

		public void setRetention(Duration retention) {
			this.retention = retention;
		}

	}

	/**
	 * Randomised Raft election timeout (Raft §5.2).
	 */
	public static class ElectionTimeout {

		/**
		 * Lower bound of the election timeout: how long a follower waits for the leader before
		 * it starts a pre-vote. Lower fails over faster but risks needless elections under GC
		 * or CPU pauses.
		 */
		private Duration min = CoordinatorServerBuilder.DEFAULT_ELECTION_TIMEOUT_MIN;

		/**
		 * Upper bound of the election timeout; must be greater than the lower bound.
		 */
		private Duration max = CoordinatorServerBuilder.DEFAULT_ELECTION_TIMEOUT_MAX;

		public Duration getMin() {
			return this.min;
		}

		public void setMin(Duration min) {
			this.min = min;
		}

		public Duration getMax() {
			return this.max;
		}

		public void setMax(Duration max) {
			this.max = max;
		}

	}

	/**
	 * Automatic snapshots of the decision table.
	 */
	public static class Snapshot {

		/**
		 * Number of Raft log entries after which a snapshot is taken and the log purged up to
		 * it.
		 */
		private long threshold = CoordinatorServerBuilder.DEFAULT_SNAPSHOT_THRESHOLD;

		/**
		 * Number of snapshot files to keep.
		 */
		private int retention = CoordinatorServerBuilder.DEFAULT_SNAPSHOT_RETENTION;

		public long getThreshold() {
			return this.threshold;
		}

		public void setThreshold(long threshold) {
			this.threshold = threshold;
		}

		public int getRetention() {
			return this.retention;
		}

		public void setRetention(int retention) {
			this.retention = retention;
		}

	}

	/**
	 * What the peer does when the server shuts down.
	 */
	public static class Shutdown {

		/**
		 * Whether a leading peer hands leadership to the most up-to-date follower before it
		 * stops, so the group pauses for about a round trip instead of an election timeout.
		 */
		private boolean transferLeadership = true;

		/**
		 * How long to wait for the new leader when transferring leadership at shutdown.
		 */
		private Duration transferTimeout = Duration.ofSeconds(5);

		public boolean isTransferLeadership() {
			return this.transferLeadership;
		}

		public void setTransferLeadership(boolean transferLeadership) {
			this.transferLeadership = transferLeadership;
		}

		public Duration getTransferTimeout() {
			return this.transferTimeout;
		}

		public void setTransferTimeout(Duration transferTimeout) {
			this.transferTimeout = transferTimeout;
		}

	}

	/**
	 * How the peer's health indicator judges it.
	 */
	public static class Health {

		/**
		 * How long a follower may trail the leader's commit index before its health is
		 * DEGRADED (and, on the leader, it is listed as lagging). Positive.
		 */
		private Duration catchUpThreshold = CoordinatorPeerHealthIndicator.DEFAULT_CATCH_UP_THRESHOLD;

		public Duration getCatchUpThreshold() {
			return this.catchUpThreshold;
		}

		public void setCatchUpThreshold(Duration catchUpThreshold) {
			this.catchUpThreshold = catchUpThreshold;
		}

	}

}
