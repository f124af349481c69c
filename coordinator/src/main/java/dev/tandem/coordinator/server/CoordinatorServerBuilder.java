package dev.tandem.coordinator.server;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.security.AccessPolicy;
import dev.tandem.coordinator.security.CoordinatorTls;
import dev.tandem.coordinator.state.CoordinatorQuotas;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.TimeDuration;
import org.jspecify.annotations.Nullable;

/**
 * Settings of a {@link CoordinatorServer}.
 *
 * @since 0.1.0
 */
public final class CoordinatorServerBuilder {

	final String peerId;

	final CoordinatorGroup group;

	final Path dataDir;

	/** Default lower bound of the randomised election timeout (Raft §5.2). */
	public static final Duration DEFAULT_ELECTION_TIMEOUT_MIN = Duration.ofMillis(150);

	/** Default upper bound of the randomised election timeout. */
	public static final Duration DEFAULT_ELECTION_TIMEOUT_MAX = Duration.ofMillis(300);

	/** Default number of log entries after which a snapshot is taken. */
	public static final long DEFAULT_SNAPSHOT_THRESHOLD = 10_000;

	/** Default number of snapshot files kept. */
	public static final int DEFAULT_SNAPSHOT_RETENTION = 2;

	Duration electionTimeoutMin = DEFAULT_ELECTION_TIMEOUT_MIN;

	Duration electionTimeoutMax = DEFAULT_ELECTION_TIMEOUT_MAX;

	@Nullable Duration firstElectionTimeoutMin;

	@Nullable Duration firstElectionTimeoutMax;

	boolean preVote = true;

	boolean snapshotOnStop = true;

	long snapshotThreshold = DEFAULT_SNAPSHOT_THRESHOLD;

	int snapshotRetention = DEFAULT_SNAPSHOT_RETENTION;

	@Nullable String bindHost;

	@Nullable Consumer<RaftProperties> customizer;

	@Nullable CoordinatorTls tls;

	AccessPolicy accessPolicy = AccessPolicy.open();

	CoordinatorQuotas quotas = CoordinatorQuotas.DEFAULTS;

	CoordinatorServerBuilder(String peerId, CoordinatorGroup group, Path dataDir) {
		this.peerId = Objects.requireNonNull(peerId, "peerId");
		this.group = Objects.requireNonNull(group, "group");
		this.dataDir = Objects.requireNonNull(dataDir, "dataDir");
		if (!group.peers().containsKey(peerId)) {
			throw new IllegalArgumentException("Peer '" + peerId + "' is not in " + group);
		}
	}

	/**
	 * Sets the range of the randomised election timeout (Raft §5.2): how long a follower
	 * waits without hearing from a leader before it starts a (pre-)vote. Lower values fail
	 * over faster but risk needless elections under GC or CPU pauses (measurements in
	 * {@code docs/benchmarks.md}, "Coordinator").
	 * @param min the lower bound, positive (default 150 ms)
	 * @param max the upper bound, greater than {@code min} (default 300 ms)
	 * @return this builder
	 * @throws IllegalArgumentException if the range is empty or not positive
	 */
	public CoordinatorServerBuilder electionTimeout(Duration min, Duration max) {
		if (min.isNegative() || min.isZero() || max.compareTo(min) <= 0) {
			throw new IllegalArgumentException("Election timeout range [" + min + ", " + max + "] is invalid");
		}
		this.electionTimeoutMin = min;
		this.electionTimeoutMax = max;
		return this;
	}

	/**
	 * Sets the election timeout range used once at start-up only; by default the
	 * {@link #electionTimeout(Duration, Duration) election timeout}. A single peer has no one
	 * to wait for, so a short first timeout makes it serve sooner after a restart.
	 * @param min the lower bound, positive
	 * @param max the upper bound, greater than {@code min}
	 * @return this builder
	 * @throws IllegalArgumentException if the range is empty or not positive
	 */
	public CoordinatorServerBuilder firstElectionTimeout(Duration min, Duration max) {
		if (min.isNegative() || min.isZero() || max.compareTo(min) <= 0) {
			throw new IllegalArgumentException("First election timeout range [" + min + ", " + max + "] is invalid");
		}
		this.firstElectionTimeoutMin = min;
		this.firstElectionTimeoutMax = max;
		return this;
	}

	/**
	 * Sets whether a snapshot is taken when the peer stops, so that the next start replays
	 * less log.
	 * @param snapshotOnStop whether to snapshot on stop (default true)
	 * @return this builder
	 */
	public CoordinatorServerBuilder snapshotOnStop(boolean snapshotOnStop) {
		this.snapshotOnStop = snapshotOnStop;
		return this;
	}

	/**
	 * Sets whether candidates run a pre-vote first (Raft thesis §9.6); keep it on outside
	 * tests that show what it prevents.
	 * @param preVote whether pre-vote is on (default true)
	 * @return this builder
	 */
	public CoordinatorServerBuilder preVote(boolean preVote) {
		this.preVote = preVote;
		return this;
	}

	/**
	 * Sets after how many log entries a snapshot is taken automatically (the log is then
	 * purged up to it). With group commit one entry holds up to a batch of decisions.
	 * @param entries the number of entries, positive (default 10000)
	 * @return this builder
	 * @throws IllegalArgumentException if not positive
	 */
	public CoordinatorServerBuilder snapshotThreshold(long entries) {
		if (entries <= 0) {
			throw new IllegalArgumentException("snapshotThreshold must be positive: " + entries);
		}
		this.snapshotThreshold = entries;
		return this;
	}

	/**
	 * Sets how many snapshot files to keep.
	 * @param files the number of files, 1 or more (default 2)
	 * @return this builder
	 * @throws IllegalArgumentException if less than 1
	 */
	public CoordinatorServerBuilder snapshotRetention(int files) {
		if (files < 1) {
			throw new IllegalArgumentException("snapshotRetention must be at least 1: " + files);
		}
		this.snapshotRetention = files;
		return this;
	}

	/**
	 * Sets the address the gRPC endpoint binds to; by default every interface. The port is
	 * always the one of this peer's address in the group.
	 * @param host the host name or IP address to bind, or {@code null} for all
	 * @return this builder
	 */
	public CoordinatorServerBuilder bindHost(@Nullable String host) {
		this.bindHost = host;
		return this;
	}

	/**
	 * Turns on mutual TLS: the peer presents this certificate to peers and clients,
	 * requires a certificate of every caller and verifies it against the trust manager;
	 * towards the other peers it verifies their certificate and host name.
	 * @param tls the key and trust material, or {@code null} for plain text (default)
	 * @return this builder
	 */
	public CoordinatorServerBuilder tls(@Nullable CoordinatorTls tls) {
		this.tls = tls;
		return this;
	}

	/**
	 * Sets who may do what, by certificate identity; needs {@link #tls(CoordinatorTls)}.
	 * @param policy the policy (default {@link AccessPolicy#open()}: everyone everything)
	 * @return this builder
	 */
	public CoordinatorServerBuilder accessPolicy(AccessPolicy policy) {
		this.accessPolicy = Objects.requireNonNull(policy, "policy");
		return this;
	}

	/**
	 * Sets what the owners of one app identity may hold (open decisions, leases); applies to
	 * the identities of {@link #accessPolicy(AccessPolicy)}, not to admins or the open policy.
	 * @param quotas the quotas (default {@link CoordinatorQuotas#DEFAULTS})
	 * @return this builder
	 */
	public CoordinatorServerBuilder quotas(CoordinatorQuotas quotas) {
		this.quotas = Objects.requireNonNull(quotas, "quotas");
		return this;
	}

	/**
	 * Sets a callback that may change any Ratis property after Tandem's settings are
	 * applied (escape hatch; Tandem's guarantees assume pre-vote and LINEARIZABLE reads).
	 * @param customizer the callback, or {@code null}
	 * @return this builder
	 */
	public CoordinatorServerBuilder properties(@Nullable Consumer<RaftProperties> customizer) {
		this.customizer = customizer;
		return this;
	}

	/**
	 * Creates the peer (not started).
	 * @return the peer
	 * @throws IOException if the data directory cannot be created or opened
	 */
	public CoordinatorServer build() throws IOException {
		if (this.tls == null && !this.accessPolicy.isOpen()) {
			throw new IllegalStateException("Coordinator peer '" + this.peerId + "' has an access policy but no TLS: "
					+ "identities come from client certificates, so set tls(...) as well");
		}
		return new CoordinatorServer(this);
	}

	Parameters parameters() {
		Parameters parameters = new Parameters();
		CallerIdentityInterceptor interceptor = new CallerIdentityInterceptor(this.peerId, this.accessPolicy);
		GrpcConfigKeys.Server.setServicesCustomizer(parameters, (builder, types) -> builder.intercept(interceptor));
		if (this.tls != null) {
			GrpcConfigKeys.TLS.setConf(parameters, this.tls.grpcTlsConfig());
		}
		return parameters;
	}

	RaftProperties properties() {
		RaftProperties properties = new RaftProperties();
		RaftServerConfigKeys.setStorageDir(properties, List.of(this.dataDir.toFile()));
		RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
		GrpcConfigKeys.Server.setPort(properties, port(this.group.peers().get(this.peerId)));
		if (this.bindHost != null) {
			GrpcConfigKeys.Server.setHost(properties, this.bindHost);
		}
		RaftServerConfigKeys.LeaderElection.setPreVote(properties, this.preVote);
		RaftServerConfigKeys.Read.setOption(properties, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
		RaftServerConfigKeys.Rpc.setTimeoutMin(properties, timeDuration(this.electionTimeoutMin));
		RaftServerConfigKeys.Rpc.setTimeoutMax(properties, timeDuration(this.electionTimeoutMax));
		if (this.firstElectionTimeoutMin != null && this.firstElectionTimeoutMax != null) {
			RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(properties, timeDuration(this.firstElectionTimeoutMin));
			RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(properties, timeDuration(this.firstElectionTimeoutMax));
		}
		RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(properties, true);
		RaftServerConfigKeys.Snapshot.setTriggerWhenStopEnabled(properties, this.snapshotOnStop);
		RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(properties, this.snapshotThreshold);
		RaftServerConfigKeys.Snapshot.setRetentionFileNum(properties, this.snapshotRetention);
		RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(properties, true);
		if (this.customizer != null) {
			this.customizer.accept(properties);
		}
		return properties;
	}

	private static int port(@Nullable String address) {
		Objects.requireNonNull(address, "address");
		return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
	}

	private static TimeDuration timeDuration(Duration duration) {
		return TimeDuration.valueOf(duration.toMillis(), TimeUnit.MILLISECONDS);
	}

}
