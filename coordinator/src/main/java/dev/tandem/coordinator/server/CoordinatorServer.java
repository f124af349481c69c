package dev.tandem.coordinator.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.security.AccessPolicy;
import dev.tandem.coordinator.security.CoordinatorTls;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.RaftStorage;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
/**
 * One peer of the coordinator: an Apache Ratis {@link RaftServer} over gRPC hosting a
 * {@link DecisionStateMachine}, with the settings Tandem relies on ({@code docs/architecture.md}, "The coordinator"):
 * <ul>
 * <li>pre-vote on ({@code raft.server.leaderelection.pre-vote}, Raft thesis §9.6; the idea of
 * KIP-650/KIP-996): a follower that was cut off and heals does not depose a healthy leader;</li>
 * <li>LINEARIZABLE reads ({@code raft.server.read.option}, ReadIndex, Raft thesis §6.4), so
 * followers serve reads without stale answers; a leader answers only once a majority confirmed
 * it still leads (the state machine's {@code LeaderReadGuard} closes a stale-read window of
 * Ratis 3.3.0, in which a leader cut off from the majority answered from its old state);</li>
 * <li>while it knows no leader, the peer resets gRPC's reconnect backoff towards the other
 * peers every minimum election timeout, so a group that lost its majority elects a leader as
 * soon as a peer returns instead of after up to two minutes of backoff;</li>
 * <li>every minimum election timeout the peer also observes its {@link #status() status}, so a
 * follower that stops catching up with the leader's commit index shows, with the time it has
 * trailed, in its own status and in the leader's ({@link PeerStatus#behindLeaderMs()},
 * {@link PeerStatus#followers()});</li>
 * <li>start-up with {@link RaftStorage.StartupOption#RECOVER}: an existing log and snapshot
 * are loaded, an empty directory is formatted;</li>
 * <li>snapshots taken automatically every {@link CoordinatorServerBuilder#snapshotThreshold(long) N} log entries,
 * with the log purged up to the snapshot;</li>
 * <li>with {@link CoordinatorServerBuilder#tls(CoordinatorTls) TLS}: mutual TLS on every connection (peer to
 * peer and client to peer), and every request authorized by the caller's certificate
 * identity against an {@link AccessPolicy} (peers replicate, admins administer, apps act for
 * their own owners only); without it every caller may do everything, so bind a plain-text
 * peer to a trusted interface ({@link CoordinatorServerBuilder#bindHost(String)}).</li>
 * </ul>
 * Ratis logs much at INFO: an application should set the {@code org.apache.ratis} logger to
 * WARN.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class CoordinatorServer implements AutoCloseable {

	/** The JDK system property for the common pool's parallelism. */
	public static final String COMMON_POOL_PARALLELISM_PROPERTY = "java.util.concurrent.ForkJoinPool.common.parallelism";

	private static final AtomicBoolean COMMON_POOL_WARNED = new AtomicBoolean();

	private static final Logger logger = LoggerFactory.getLogger(CoordinatorServer.class);

	private static final AtomicLong callIds = new AtomicLong();

	private final String peerId;

	private final CoordinatorGroup group;

	private final RaftGroupId raftGroupId;

	private final Path dataDir;

	private final DecisionStateMachine stateMachine;

	private final RaftServer server;

	private final Duration electionTimeoutMin;

	private final Duration electionTimeoutMax;

	private final PeerReconnector reconnector;

	private final List<String> others;

	private final CatchUpClock catchUp = new CatchUpClock();

	private final boolean tls;

	private @Nullable ScheduledExecutorService maintenance;

	private final Object lifecycleMonitor = new Object();

	private Lifecycle lifecycle = Lifecycle.NEW;

	CoordinatorServer(CoordinatorServerBuilder builder) throws IOException {
		this.peerId = builder.peerId;
		this.group = builder.group;
		this.raftGroupId = RaftGroupId.valueOf(this.group.groupId());
		this.dataDir = builder.dataDir;
		this.stateMachine = new DecisionStateMachine(builder.accessPolicy, builder.quotas);
		this.electionTimeoutMin = builder.electionTimeoutMin;
		this.electionTimeoutMax = builder.electionTimeoutMax;
		this.tls = builder.tls != null;
		this.others = this.group.peers().keySet().stream().filter((id) -> !id.equals(this.peerId)).toList();
		this.reconnector = new PeerReconnector(this.peerId, this.others);
		Files.createDirectories(this.dataDir);
		this.server = RaftServer.newBuilder()
			.setServerId(RaftPeerId.valueOf(this.peerId))
			.setGroup(this.group.toRaftGroup())
			.setProperties(builder.properties())
			.setParameters(builder.parameters())
			.setStateMachine(this.stateMachine)
			.setOption(RaftStorage.StartupOption.RECOVER)
			.build();
	}

	/**
	 * Starts configuring a peer.
	 * @param peerId this peer's id; must be a key of the group's peers
	 * @param group the coordinator group
	 * @param dataDir the directory of this peer's log and snapshots (created if missing; one
	 *     directory per peer)
	 * @return a builder
	 * @throws IllegalArgumentException if the group has no peer of that id
	 */
	public static CoordinatorServerBuilder builder(String peerId, CoordinatorGroup group, Path dataDir) {
		return new CoordinatorServerBuilder(peerId, group, dataDir);
	}

	/**
	 * Starts the peer: opens its storage (replaying the log from the latest snapshot) and its
	 * gRPC endpoint, then takes part in elections. Returns without waiting for a leader.
	 * @throws IOException if the storage cannot be opened or the port is taken
	 * @throws IllegalStateException if the peer was already started or closed
	 */
	public void start() throws IOException {
		synchronized (this.lifecycleMonitor) {
			this.lifecycle = this.lifecycle.to(Lifecycle.STARTED);
		}
		long startNanos = System.nanoTime();
		this.server.start();
		if (this.group.peers().size() > 1) {
			warnIfCommonPoolStartsThreadPerTask();
			ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor((runnable) -> {
				Thread thread = new Thread(runnable, "tandem-peer-" + this.peerId + "-maintenance");
				thread.setDaemon(true);
				return thread;
			});
			long periodMs = this.electionTimeoutMin.toMillis();
			executor.scheduleWithFixedDelay(this::maintain, periodMs, periodMs, TimeUnit.MILLISECONDS);
			synchronized (this.lifecycleMonitor) {
				this.maintenance = executor;
			}
		}
		logger.info("Coordinator peer '{}' of group {} started on {} ({}) in {} ms (data dir {})", this.peerId,
				this.group.groupId(), this.group.peers().get(this.peerId), this.tls ? "mutual TLS" : "plain text",
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos), this.dataDir);
	}

	/**
	 * Sets the JDK's common pool parallelism ({@value #COMMON_POOL_PARALLELISM_PROPERTY}) to 2
	 * unless it is set already; call it first thing in {@code main}, before anything uses
	 * {@link java.util.concurrent.CompletableFuture}. Why: on a machine with fewer than 3 cores
	 * the common pool's parallelism is 1, and {@code CompletableFuture}'s async methods then
	 * start a new thread for every task; Ratis 3.3.0 runs every append a follower receives
	 * through such a method. Measured with 3 peers in one JVM on 2 cores: 408 vs 48 threads
	 * started in 6 s and 1,364 vs 1,681 decisions per CPU-second. Only multi-peer groups are
	 * concerned (a single embedded peer has no followers).
	 * @return whether the async methods now use the common pool (false if the property came
	 *     too late because {@code CompletableFuture} was already initialized)
	 * @since 0.1.0
	 */
	public static boolean useCommonPoolForAsyncTasks() {
		if (System.getProperty(COMMON_POOL_PARALLELISM_PROPERTY) == null) {
			System.setProperty(COMMON_POOL_PARALLELISM_PROPERTY, "2");
		}
		return ForkJoinPool.getCommonPoolParallelism() > 1;
	}

	private void warnIfCommonPoolStartsThreadPerTask() {
		if (ForkJoinPool.getCommonPoolParallelism() < 2 && COMMON_POOL_WARNED.compareAndSet(false, true)) {
			logger.warn("Coordinator peer '{}': the JDK common pool has parallelism {} on {} cores, so Ratis starts "
					+ "a new thread for every append a follower receives. Start the JVM with -D{}=2 (the "
					+ "coordinator-server app does this itself).", this.peerId, ForkJoinPool.getCommonPoolParallelism(),
					Runtime.getRuntime().availableProcessors(), COMMON_POOL_PARALLELISM_PROPERTY);
		}
	}

	private void maintain() {
		try {
			// Also an observation of how far the followers are from the leader's commit index
			PeerStatus status = status();
			if (status.role() != PeerRole.STOPPED && !status.hasLeader()) {
				this.reconnector.reconnect(this.server);
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Coordinator peer '{}' maintenance failed: {}", this.peerId, ex.toString());
		}
	}

	/**
	 * Waits until the group has a leader that is ready to serve (has committed an entry of its
	 * term), as seen from this peer.
	 * @param timeout how long to wait
	 * @return the leader's peer id
	 * @throws TimeoutException if no ready leader is known within the timeout
	 * @throws InterruptedException if interrupted while waiting
	 */
	public String awaitLeader(Duration timeout) throws TimeoutException, InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			DivisionInfo info = division().getInfo();
			if (info.isLeader() ? info.isLeaderReady() : (info.getLeaderId() != null)) {
				return info.isLeader() ? this.peerId : info.getLeaderId().toString();
			}
			if (System.nanoTime() > deadline) {
				throw new TimeoutException("No leader in coordinator group " + this.group.groupId() + " after " + timeout
						+ " (peer '" + this.peerId + "' is " + info.getCurrentRole() + ")");
			}
			Thread.sleep(5);
		}
	}

	/**
	 * Returns whether this peer is currently the leader.
	 * @return whether this peer leads
	 */
	public boolean isLeader() {
		return division().getInfo().isLeader();
	}

	/**
	 * Returns this peer's current Raft term.
	 * @return the term, zero or more
	 */
	public long currentTerm() {
		return division().getInfo().getCurrentTerm();
	}

	/**
	 * Returns this peer's Raft state now: role, term, known leader, commit and applied index,
	 * and how far this follower (or, on the leader, every follower) is from the leader's commit
	 * index and for how long. Cheap (no I/O, no remote call); safe to call from health checks and
	 * metrics. The peer also observes itself every minimum election timeout, so the time a
	 * follower has trailed is measured from the first observation that saw it short.
	 * @return the status; role {@link PeerRole#STOPPED} when the peer is not running
	 */
	public PeerStatus status() {
		synchronized (this.lifecycleMonitor) {
			if (this.lifecycle != Lifecycle.STARTED) {
				return stoppedStatus();
			}
		}
		RaftServer.Division division;
		try {
			division = this.server.getDivision(this.raftGroupId);
		}
		catch (IOException ex) {
			return stoppedStatus();
		}
		DivisionInfo info = division.getInfo();
		if (info.getLifeCycleState().isClosingOrClosed()) {
			return stoppedStatus();
		}
		RaftPeerId leaderId = info.getLeaderId();
		RaftLog log = division.getRaftLog();
		TermIndex last = log.getLastEntryTermIndex();
		boolean leader = info.isLeader();
		// Just after stepping down, Ratis may still name this peer as leader
		String knownLeader = leader ? this.peerId
				: ((leaderId != null && !leaderId.toString().equals(this.peerId)) ? leaderId.toString() : null);
		long commitIndex = log.getLastCommittedIndex();
		long appliedIndex = info.getLastAppliedIndex();
		long nowNanos = System.nanoTime();
		Map<String, Long> commitIndexes = commitIndexes(division);
		long leaderCommitIndex = -1;
		long behindLeaderMs = 0;
		List<FollowerProgress> followers = List.of();
		if (leader) {
			leaderCommitIndex = commitIndex;
			this.catchUp.forget(this.peerId);
			followers = this.others.stream().map((follower) -> {
				long followerCommit = commitIndexes.getOrDefault(follower, -1L);
				return new FollowerProgress(follower, followerCommit, Math.max(0, commitIndex - followerCommit),
						this.catchUp.behindMs(follower, followerCommit, commitIndex, nowNanos));
			}).toList();
		}
		else {
			this.others.forEach(this.catchUp::forget);
			Long known = (knownLeader != null) ? commitIndexes.get(knownLeader) : null;
			if (known != null) {
				leaderCommitIndex = known;
				behindLeaderMs = this.catchUp.behindMs(this.peerId, appliedIndex, leaderCommitIndex, nowNanos);
			}
			else {
				this.catchUp.forget(this.peerId);
			}
		}
		return new PeerStatus(this.peerId, PeerRole.of(info.getCurrentRole()), info.getCurrentTerm(), knownLeader,
				leader && info.isLeaderReady(), commitIndex, appliedIndex, (last != null) ? last.getIndex() : -1,
				leaderCommitIndex, behindLeaderMs, followers);
	}

	/**
	 * Returns the commit index of every peer as this peer knows it: a leader from its
	 * followers' answers, a follower from the commit indexes the leader sends with its append
	 * entries and heartbeats.
	 */
	private static Map<String, Long> commitIndexes(RaftServer.Division division) {
		Map<String, Long> indexes = new HashMap<>();
		for (CommitInfoProto info : division.getCommitInfos()) {
			indexes.put(RaftPeerId.valueOf(info.getServer().getId()).toString(), info.getCommitIndex());
		}
		return indexes;
	}

	private PeerStatus stoppedStatus() {
		return new PeerStatus(this.peerId, PeerRole.STOPPED, 0, null, false, -1, -1, -1, -1, 0, List.of());
	}

	/**
	 * Hands leadership over to the most up-to-date follower that answered the leader within
	 * the last two election timeouts, and waits until it leads. Ratis brings the target's log
	 * up to date, then tells it to start an election at once (Raft thesis §3.10), so the group
	 * pauses for about one round trip instead of an election timeout; clients follow the
	 * NotLeader hint to the new leader. Call it before stopping a leader on purpose.
	 * @param timeout how long to wait for the new leader, positive
	 * @return the new leader's id, or empty when this peer does not lead or no follower is
	 *     reachable (nothing to do)
	 * @throws IOException if the transfer failed or did not finish within the timeout; this
	 *     peer may then still lead
	 */
	public Optional<String> transferLeadership(Duration timeout) throws IOException {
		RaftServer.Division division = division();
		if (!division.getInfo().isLeader()) {
			return Optional.empty();
		}
		Optional<RaftPeerId> target = transferTarget(division);
		if (target.isEmpty()) {
			logger.warn("Coordinator peer '{}' leads but no follower is reachable: leadership not transferred",
					this.peerId);
			return Optional.empty();
		}
		long startNanos = System.nanoTime();
		TransferLeadershipRequest request = new TransferLeadershipRequest(ClientId.randomId(),
				RaftPeerId.valueOf(this.peerId), this.raftGroupId, callIds.incrementAndGet(), target.get(),
				timeout.toMillis());
		RaftClientReply reply = this.server.transferLeadership(request);
		if (!reply.isSuccess()) {
			throw new IOException("Coordinator peer '" + this.peerId + "' could not transfer leadership to '"
					+ target.get() + "'", reply.getException());
		}
		logger.info("Coordinator peer '{}' transferred leadership to '{}' in {} ms", this.peerId, target.get(),
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
		return Optional.of(target.get().toString());
	}

	private Optional<RaftPeerId> transferTarget(RaftServer.Division division) {
		long recentMs = 2 * this.electionTimeoutMax.toMillis();
		List<String> reachable = division.getInfo()
			.getRoleInfoProto()
			.getLeaderInfo()
			.getFollowerInfoList()
			.stream()
			.filter((follower) -> follower.getLastRpcElapsedTimeMs() <= recentMs)
			.map(ServerRpcProto::getId)
			.map((peer) -> RaftPeerId.valueOf(peer.getId()).toString())
			.toList();
		return division.getCommitInfos()
			.stream()
			.filter((info) -> reachable.contains(RaftPeerId.valueOf(info.getServer().getId()).toString()))
			.max(Comparator.comparingLong(CommitInfoProto::getCommitIndex))
			.map((info) -> RaftPeerId.valueOf(info.getServer().getId()));
	}

	/**
	 * Takes a snapshot of this peer's state now (and purges the log up to it), whatever the
	 * automatic threshold.
	 * @param timeout how long to wait for it
	 * @return the log index of the snapshot
	 * @throws IOException if the snapshot failed or did not finish within the timeout
	 */
	public long takeSnapshot(Duration timeout) throws IOException {
		SnapshotManagementRequest request = SnapshotManagementRequest.newCreate(ClientId.randomId(),
				RaftPeerId.valueOf(this.peerId), this.raftGroupId, callIds.incrementAndGet(),
				timeout.toMillis(), 1);
		RaftClientReply reply = this.server.snapshotManagement(request);
		if (!reply.isSuccess()) {
			throw new IOException("Snapshot of peer '" + this.peerId + "' failed", reply.getException());
		}
		return reply.getLogIndex();
	}

	/**
	 * Returns this peer's id.
	 * @return the peer id
	 */
	public String peerId() {
		return this.peerId;
	}

	/**
	 * Returns the coordinator group this peer belongs to.
	 * @return the group
	 */
	public CoordinatorGroup group() {
		return this.group;
	}

	/**
	 * Returns whether this peer requires mutual TLS on every connection.
	 * @return whether TLS is on
	 */
	public boolean tls() {
		return this.tls;
	}

	/**
	 * Returns this peer's data directory.
	 * @return the directory
	 */
	public Path dataDir() {
		return this.dataDir;
	}

	/**
	 * Returns the state machine of this peer (for metrics and tests; its counters are local to
	 * this replica).
	 * @return the state machine
	 */
	public DecisionStateMachine stateMachine() {
		return this.stateMachine;
	}

	/**
	 * Returns this peer's entry for client requests submitted in this JVM, the one its gRPC
	 * service hands requests to: an embedded coordinator's decision log writes through it
	 * ({@code RatisDecisionLogBuilder.inProcessPeer}). Requests submitted here skip the gRPC
	 * interceptor, so they carry no caller identity: only a peer without TLS (open access policy)
	 * accepts them.
	 * @return the peer's client-request entry
	 * @since 0.1.0
	 */
	public RaftClientAsynchronousProtocol clientRequests() {
		return this.server;
	}

	/**
	 * Returns the Ratis division of this peer in the coordinator group (escape hatch for
	 * operations and tests).
	 * @return the division
	 * @throws IllegalStateException if the peer is not started
	 */
	public RaftServer.Division division() {
		try {
			return this.server.getDivision(this.raftGroupId);
		}
		catch (IOException ex) {
			throw new IllegalStateException("Peer '" + this.peerId + "' has no division for " + this.group, ex);
		}
	}

	/**
	 * Stops the peer and releases its port and storage. Idempotent.
	 */
	@Override
	public void close() {
		synchronized (this.lifecycleMonitor) {
			if (this.lifecycle == Lifecycle.CLOSED) {
				return;
			}
			this.lifecycle = this.lifecycle.to(Lifecycle.CLOSED);
			if (this.maintenance != null) {
				this.maintenance.shutdownNow();
			}
		}
		try {
			this.server.close();
			logger.info("Coordinator peer '{}' closed", this.peerId);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Closing coordinator peer '" + this.peerId + "' failed", ex);
		}
	}

	@Override
	public String toString() {
		return "CoordinatorServer[" + this.peerId + "@" + this.group.peers().get(this.peerId) + "]";
	}

	private enum Lifecycle {

		NEW, STARTED, CLOSED;

		Lifecycle to(Lifecycle next) {
			boolean legal = switch (this) {
				case NEW -> next == STARTED || next == CLOSED;
				case STARTED -> next == CLOSED;
				case CLOSED -> false;
			};
			if (!legal) {
				throw new IllegalStateException("Coordinator peer cannot go from " + this + " to " + next);
			}
			return next;
		}

	}

}
