package dev.tandem.coordinator.client;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import dev.tandem.coordinator.security.CoordinatorTls;
import dev.tandem.coordinator.state.CommandLimits;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.retry.ExponentialBackoffRetry;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.util.TimeDuration;
import org.jspecify.annotations.Nullable;

/**
 * Settings of a {@link RatisDecisionLog}.
 *
 * @since 0.1.0
 */
public final class RatisDecisionLogBuilder {

	final CoordinatorGroup group;

	Duration requestTimeout = Duration.ofSeconds(3);

	Duration retryBaseSleep = Duration.ofMillis(50);

	Duration retryMaxSleep = Duration.ofSeconds(2);

	int retryMaxAttempts = 20;

	int maxBatchSize = 256;

	int maxInFlightBatches = 1;

	Duration completionLinger = Duration.ofMillis(5);

	/** Default retention of completed and aborted records and of gone instances' leases. */
	public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);

	/** Default interval between purges. */
	public static final Duration DEFAULT_PURGE_INTERVAL = Duration.ofMinutes(10);

	Duration retention = DEFAULT_RETENTION;

	Duration purgeInterval = DEFAULT_PURGE_INTERVAL;

	Duration closeTimeout = Duration.ofSeconds(5);

	@Nullable String readFrom;

	boolean readFromFollowers;

	boolean sharedByInstances = true;

	@Nullable String initialLeader;

	@Nullable CoordinatorTls tls;

	@Nullable String inProcessPeerId;

	@Nullable RaftClientAsynchronousProtocol inProcessPeer;

	RatisDecisionLogBuilder(CoordinatorGroup group) {
		this.group = Objects.requireNonNull(group, "group");
	}

	/**
	 * Sets how long one attempt of a request may take before Ratis retries it.
	 * @param timeout the per-attempt timeout, positive (default 3 s)
	 * @return this builder
	 */
	public RatisDecisionLogBuilder requestTimeout(Duration timeout) {
		this.requestTimeout = positive(timeout, "requestTimeout");
		return this;
	}

	/**
	 * Sets the retry policy: exponential backoff with random jitter from {@code baseSleep}
	 * up to {@code maxSleep}, at most {@code maxAttempts} attempts (Ratis' default retries
	 * in a busy loop).
	 * @param baseSleep the first backoff, positive (default 50 ms)
	 * @param maxSleep the largest backoff, at least {@code baseSleep} (default 2 s)
	 * @param maxAttempts the number of attempts, 1 or more (default 20)
	 * @return this builder
	 * @throws IllegalArgumentException if a value is out of range
	 */
	public RatisDecisionLogBuilder retry(Duration baseSleep, Duration maxSleep, int maxAttempts) {
		positive(baseSleep, "baseSleep");
		if (maxSleep.compareTo(baseSleep) < 0 || maxAttempts < 1) {
			throw new IllegalArgumentException("Invalid retry settings: baseSleep=" + baseSleep + ", maxSleep="
					+ maxSleep + ", maxAttempts=" + maxAttempts);
		}
		this.retryBaseSleep = baseSleep;
		this.retryMaxSleep = maxSleep;
		this.retryMaxAttempts = maxAttempts;
		return this;
	}

	/**
	 * Sets the largest number of operations in one command (one Raft log entry).
	 * @param operations the limit, 1 to {@link CommandLimits#MAX_OPERATIONS} (default 256)
	 * @return this builder
	 */
	public RatisDecisionLogBuilder maxBatchSize(int operations) {
		if (operations < 1 || operations > CommandLimits.MAX_OPERATIONS) {
			throw new IllegalArgumentException("maxBatchSize must be in [1, " + CommandLimits.MAX_OPERATIONS
					+ "] (a coordinator refuses larger commands): " + operations);
		}
		this.maxBatchSize = operations;
		return this;
	}

	/**
	 * Sets how many commands may await their reply at once; while that many are in
	 * flight, new operations queue up and leave together. One gives the largest batches
	 * and the least CPU per decision, and adds latency only under load (a decide waits
	 * for at most one command ahead of it); the measurement behind the default is in
	 * {@code docs/benchmarks.md}, "Coordinator".
	 * @param commands the limit, 1 or more (default 1)
	 * @return this builder
	 */
	public RatisDecisionLogBuilder maxInFlightBatches(int commands) {
		if (commands < 1) {
			throw new IllegalArgumentException("maxInFlightBatches must be at least 1: " + commands);
		}
		this.maxInFlightBatches = commands;
		return this;
	}

	/**
	 * Sets how long a completion may wait for others before it is written alone.
	 * @param linger the delay, zero or more (default 5 ms)
	 * @return this builder
	 */
	public RatisDecisionLogBuilder completionLinger(Duration linger) {
		if (linger.isNegative()) {
			throw new IllegalArgumentException("completionLinger must not be negative: " + linger);
		}
		this.completionLinger = linger;
		return this;
	}

	/**
	 * Sets how long completed and aborted records are kept before they are purged; keep it
	 * far above any transaction timeout, since a purged id reads as unknown.
	 * @param retention the retention, zero or more (default 7 days)
	 * @return this builder
	 */
	public RatisDecisionLogBuilder retention(Duration retention) {
		if (retention.isNegative()) {
			throw new IllegalArgumentException("retention must not be negative: " + retention);
		}
		this.retention = retention;
		return this;
	}

	/**
	 * Sets how often this client asks the coordinator to purge; {@link Duration#ZERO}
	 * disables purging by this client.
	 * @param interval the interval, zero or more (default 10 minutes)
	 * @return this builder
	 */
	public RatisDecisionLogBuilder purgeInterval(Duration interval) {
		if (interval.isNegative()) {
			throw new IllegalArgumentException("purgeInterval must not be negative: " + interval);
		}
		this.purgeInterval = interval;
		return this;
	}

	/**
	 * Sets how long {@link RatisDecisionLog#close()} waits for queued operations.
	 * @param timeout the timeout, positive (default 5 s)
	 * @return this builder
	 */
	public RatisDecisionLogBuilder closeTimeout(Duration timeout) {
		this.closeTimeout = positive(timeout, "closeTimeout");
		return this;
	}

	/**
	 * Sets the peer that serves linearizable reads ({@code state}, {@code inDoubt}), so
	 * followers can share the read load; by default the leader.
	 * @param peerId a peer id of the group, or {@code null} for the leader
	 * @return this builder
	 * @throws IllegalArgumentException if the group has no such peer
	 */
	public RatisDecisionLogBuilder readFrom(@Nullable String peerId) {
		if (peerId != null && !this.group.peers().containsKey(peerId)) {
			throw new IllegalArgumentException("Peer '" + peerId + "' is not in " + this.group);
		}
		this.readFrom = peerId;
		return this;
	}

	/**
	 * Sets whether linearizable reads ({@code state}, {@code inDoubt}) are spread
	 * round-robin over the peers this client does not take for the leader, so that read
	 * capacity grows with the number of peers. A follower answers only after it applied
	 * the leader's commit index as of the read (ReadIndex, Raft thesis §6.4), so answers
	 * are never stale; a read that fails on a follower (unreachable, no leader known, not
	 * caught up within the request timeout) is sent once more to the leader. Ignored when
	 * {@link #readFrom(String)} names a peer.
	 * @param readFromFollowers whether to read from followers (default false: the leader)
	 * @return this builder
	 */
	public RatisDecisionLogBuilder readFromFollowers(boolean readFromFollowers) {
		this.readFromFollowers = readFromFollowers;
		return this;
	}

	/**
	 * Sets whether every instance of the app uses this coordinator ({@link
	 * dev.tandem.transaction.DecisionLog#sharedByInstances()}): true for a coordinator service;
	 * {@link dev.tandem.coordinator.EmbeddedCoordinator} sets false (each instance has its own), so
	 * that the transaction manager checks for a duplicate instance through Kafka. Set true on an
	 * embedded coordinator only when every manager of the app uses that one coordinator (several
	 * managers in one JVM, as in tests).
	 * @param sharedByInstances whether every instance of the app uses this coordinator (default true)
	 * @return this builder
	 */
	public RatisDecisionLogBuilder sharedByInstances(boolean sharedByInstances) {
		this.sharedByInstances = sharedByInstances;
		return this;
	}

	/**
	 * Sets the peer this client first takes for the leader; by default the leader another
	 * client of the same group in this JVM last saw, else the first peer. A wrong guess
	 * costs one round trip: the peer's NotLeader reply names the leader.
	 * @param peerId a peer id of the group, or {@code null} for the default
	 * @return this builder
	 * @throws IllegalArgumentException if the group has no such peer
	 */
	public RatisDecisionLogBuilder initialLeader(@Nullable String peerId) {
		if (peerId != null && !this.group.peers().containsKey(peerId)) {
			throw new IllegalArgumentException("Peer '" + peerId + "' is not in " + this.group);
		}
		this.initialLeader = peerId;
		return this;
	}

	/**
	 * Hands commands (decide, abort, complete, leases, purge) straight to a peer of the group that
	 * runs in this JVM, as the peer's gRPC service would, instead of through a gRPC connection to
	 * it: the embedded coordinator's one peer. The reply is the same (given once the command is
	 * committed and applied); what saves time is the loopback connection, the serialisation and
	 * the gRPC and Netty threads of both sides, each a thread hand-off on the commit's path. A
	 * command the peer does not take (it is not the leader, or not ready) goes through the gRPC
	 * client as before, and reads always do. The peer must accept requests without the identity
	 * envelope of its gRPC interceptor: an open access policy (no TLS).
	 * @param peerId the peer's id in the group
	 * @param peer the peer ({@code RaftServer}), or {@code null} for none (default)
	 * @return this builder
	 * @throws IllegalArgumentException if the group has no such peer
	 * @since 0.1.0
	 */
	public RatisDecisionLogBuilder inProcessPeer(String peerId, @Nullable RaftClientAsynchronousProtocol peer) {
		if (!this.group.peers().containsKey(peerId)) {
			throw new IllegalArgumentException("Peer '" + peerId + "' is not in " + this.group);
		}
		this.inProcessPeerId = peerId;
		this.inProcessPeer = peer;
		return this;
	}

	/**
	 * Creates the client; it connects lazily, so the coordinator need not be up yet.
	 * @return the decision log
	 */
	public RatisDecisionLog build() {
		return new RatisDecisionLog(this);
	}

	/**
	 * Turns on mutual TLS towards the peers: this client presents the key manager's
	 * certificate (its identity for the coordinator's authorization) and verifies each
	 * peer's certificate and host name against the trust manager.
	 * @param tls the key and trust material, or {@code null} for plain text (default)
	 * @return this builder
	 */
	public RatisDecisionLogBuilder tls(@Nullable CoordinatorTls tls) {
		this.tls = tls;
		return this;
	}

	Parameters clientParameters() {
		Parameters parameters = new Parameters();
		if (this.tls != null) {
			GrpcConfigKeys.TLS.setConf(parameters, this.tls.grpcTlsConfig());
		}
		return parameters;
	}

	RaftProperties clientProperties() {
		RaftProperties properties = new RaftProperties();
		RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
		RaftClientConfigKeys.Rpc.setRequestTimeout(properties, timeDuration(this.requestTimeout));
		return properties;
	}

	RetryPolicy retryPolicy() {
		return ExponentialBackoffRetry.newBuilder()
			.setBaseSleepTime(timeDuration(this.retryBaseSleep))
			.setMaxSleepTime(timeDuration(this.retryMaxSleep))
			.setMaxAttempts(this.retryMaxAttempts)
			.build();
	}

	private static Duration positive(Duration duration, String name) {
		if (duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException(name + " must be positive: " + duration);
		}
		return duration;
	}

	private static TimeDuration timeDuration(Duration duration) {
		return TimeDuration.valueOf(duration.toMillis(), TimeUnit.MILLISECONDS);
	}

}
