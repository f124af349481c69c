package dev.tandem.coordinator.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.tandem.coordinator.state.Command;
import dev.tandem.coordinator.state.CommandLimits;
import dev.tandem.coordinator.state.DecisionTable;
import dev.tandem.coordinator.state.MessageCodec;
import dev.tandem.coordinator.state.Operation;
import dev.tandem.coordinator.state.OperationResult;
import dev.tandem.coordinator.state.Query;
import dev.tandem.coordinator.state.QueryReply;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.DecisionLogException;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.LeaseClaimedException;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
/**
 * A {@link DecisionLog} on Tandem's Raft-replicated coordinator (Apache Ratis over gRPC).
 * <ul>
 * <li>{@link #decide} and {@link #abort} use group commit: concurrent calls share one Raft log
 * entry (up to {@link RatisDecisionLogBuilder#maxBatchSize(int)} operations), and each caller gets its own
 * result.</li>
 * <li>{@link #complete} is asynchronous: completions are queued and written in batches every
 * {@link RatisDecisionLogBuilder#completionLinger(Duration) few milliseconds}; {@link #close()} flushes
 * them.</li>
 * <li>{@link #state} and {@link #inDoubt} are linearizable reads (ReadIndex, Raft thesis §6.4),
 * served by the leader, by {@link RatisDecisionLogBuilder#readFrom(String) a chosen peer}, or
 * {@link RatisDecisionLogBuilder#readFromFollowers(boolean) spread over the followers}; a follower asks the
 * leader for the commit index and answers once it has applied up to it, so it never answers
 * with data older than the read (KIP-996 brings the same to KRaft).</li>
 * <li>Completed and aborted records older than {@link RatisDecisionLogBuilder#retention(Duration)} are purged
 * every {@link RatisDecisionLogBuilder#purgeInterval(Duration)}.</li>
 * </ul>
 * Leader discovery: a request sent to a non-leader is answered with a NotLeader reply that
 * names the leader when that peer knows it; the Ratis client retries at once on the named
 * peer, without backoff (the idea of KIP-951, applied to the coordinator's own quorum), and
 * remembers it for later requests ({@link #leaderRedirects()} counts these). A request whose
 * stream a stepped-down leader closed is retried at once on another peer. Other failed
 * attempts (timeouts, unreachable peers, elections in progress) are retried with exponential
 * backoff and jitter, not Ratis' default busy loop.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class RatisDecisionLog implements DecisionLog {

	private static final Logger logger = LoggerFactory.getLogger(RatisDecisionLog.class);

	private static final AtomicInteger instances = new AtomicInteger();

	private final RaftClient client;

	private final CoordinatorGroup group;

	private final CoordinatorRetryPolicy retryPolicy;

	private final @Nullable RaftClient followerReadClient;

	private final LinearizableReads reads;

	private final CommandBatcher batcher;

	/** The peer of this JVM that takes commands directly, or null: every command goes through {@link #client}. */
	private final @Nullable InProcessPeer inProcess;

	private final @Nullable ScheduledExecutorService purger;

	private final Duration closeTimeout;

	private final boolean sharedByInstances;

	private final AtomicBoolean closed = new AtomicBoolean();

	RatisDecisionLog(RatisDecisionLogBuilder builder) {
		this.group = builder.group;
		this.closeTimeout = builder.closeTimeout;
		this.sharedByInstances = builder.sharedByInstances;
		this.retryPolicy = new CoordinatorRetryPolicy(builder.retryPolicy(), builder.retryMaxAttempts,
				builder.group.peers().size());
		RaftClient.Builder client = RaftClient.newBuilder()
			.setClientId(ClientId.randomId())
			.setRaftGroup(this.group.toRaftGroup())
			.setProperties(builder.clientProperties())
			.setParameters(builder.clientParameters())
			.setRetryPolicy(this.retryPolicy);
		if (builder.initialLeader != null) {
			client.setLeaderId(RaftPeerId.valueOf(builder.initialLeader));
		}
		this.client = client.build();
		// One attempt per follower read: a failed one falls back to the leader at once
		this.followerReadClient = (builder.readFromFollowers && this.group.peers().size() > 1) ? RaftClient.newBuilder()
			.setClientId(ClientId.randomId())
			.setRaftGroup(this.group.toRaftGroup())
			.setProperties(builder.clientProperties())
			.setParameters(builder.clientParameters())
			.setRetryPolicy(RetryPolicies.noRetry())
			.build() : null;
		this.reads = new LinearizableReads(this.group, this.client, this.followerReadClient,
				(builder.readFrom != null) ? RaftPeerId.valueOf(builder.readFrom) : null, builder.retryBaseSleep,
				builder.retryMaxSleep);
		this.inProcess = (builder.inProcessPeer != null && builder.inProcessPeerId != null)
				? new InProcessPeer(builder.inProcessPeer, RaftPeerId.valueOf(builder.inProcessPeerId),
						this.group.toRaftGroup().getGroupId(),
						builder.requestTimeout.multipliedBy(builder.retryMaxAttempts))
				: null;
		String name = "tandem-decision-log-" + instances.incrementAndGet();
		this.batcher = new CommandBatcher(name, this::send, builder.maxBatchSize, builder.maxInFlightBatches,
				builder.completionLinger);
		if (builder.purgeInterval.isZero()) {
			this.purger = null;
		}
		else {
			long retentionMs = builder.retention.toMillis();
			this.purger = Executors.newSingleThreadScheduledExecutor((runnable) -> {
				Thread thread = new Thread(runnable, name + "-purge");
				thread.setDaemon(true);
				return thread;
			});
			long periodMs = builder.purgeInterval.toMillis();
			this.purger.scheduleWithFixedDelay(() -> schedulePurge(retentionMs), periodMs, periodMs,
					TimeUnit.MILLISECONDS);
		}
	}

	/**
	 * Starts configuring a decision log client of a coordinator group.
	 * @param group the coordinator's group (same id and peers as its servers)
	 * @return a builder
	 */
	public static RatisDecisionLogBuilder builder(CoordinatorGroup group) {
		return new RatisDecisionLogBuilder(group);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Batched with concurrent calls into one Raft log entry.
	 * @throws DecisionLogException if the write failed, or its outcome is unknown after the
	 *     timeout (it may still be applied later), or this log is closed
	 * @throws IllegalStateException if the transaction id is recorded as aborted
	 */
	@Override
	public Decision decide(Decision decision, Duration timeout) throws DecisionLogException {
		return decide(decision, null, timeout);
	}

	@Override
	public Decision decide(Decision decision, @Nullable String incarnation, Duration timeout)
			throws DecisionLogException {
		OperationResult result = applied(new Operation.Decide(decision, incarnation), timeout,
				"decide " + decision.transactionId());
		if (result instanceof OperationResult.Decided decided) {
			return decided.decision();
		}
		if (result instanceof OperationResult.AbortConflict) {
			throw new IllegalStateException(
					"Transaction " + decision.transactionId() + " is recorded as aborted: it cannot be decided");
		}
		if (result instanceof OperationResult.OwnerClaimed claimed) {
			throw new LeaseClaimedException("Transaction " + decision.transactionId() + " cannot be decided: the "
					+ "lease of " + decision.owner() + " is held by " + claimed.claimedBy() + ", not by the deciding run "
					+ "(it was taken for dead, or the instance was restarted)");
		}
		throw new DecisionLogException("Unexpected result " + result + " to decide " + decision.transactionId());
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Queued and written with other completions within {@link RatisDecisionLogBuilder#completionLinger}; a
	 * failed write is logged, not thrown.
	 * @throws DecisionLogException if this log is closed, or the id breaks the {@link CommandLimits}
	 */
	@Override
	public void complete(String transactionId) throws DecisionLogException {
		this.batcher.submitLazy(checked(new Operation.Complete(transactionId)));
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * A no-op when the transaction id is already decided or completed: an abort never
	 * overrides a decision (read {@link #state} to learn which won).
	 * @throws DecisionLogException if the write failed, timed out, or this log is closed
	 */
	@Override
	public void abort(String transactionId, String owner, Duration timeout) throws DecisionLogException {
		OperationResult result = applied(new Operation.Abort(transactionId, owner), timeout,
				"abort " + transactionId);
		if (result instanceof OperationResult.StateAfter after && after.state() != DecisionState.ABORTED) {
			logger.debug("Abort of {} (owner {}) ignored: the transaction is already {}", transactionId, owner,
					after.state());
		}
	}

	@Override
	public DecisionState state(String transactionId, Duration timeout) throws DecisionLogException {
		QueryReply reply = query(new Query.StateQuery(transactionId), timeout, "state of " + transactionId);
		return ((QueryReply.StateReply) reply).state();
	}

	@Override
	public List<Decision> inDoubt(String owner, Duration timeout) throws DecisionLogException {
		QueryReply reply = query(new Query.InDoubtQuery(owner), timeout, "in-doubt transactions of " + owner);
		return ((QueryReply.InDoubtReply) reply).decisions();
	}

	/**
	 * {@inheritDoc}
	 * @return as set by {@link RatisDecisionLogBuilder#sharedByInstances(boolean)}: true for a
	 *     coordinator service, false for the log of an {@link dev.tandem.coordinator.EmbeddedCoordinator}
	 */
	@Override
	public boolean sharedByInstances() {
		return this.sharedByInstances;
	}

	/**
	 * {@inheritDoc}
	 * @return true
	 */
	@Override
	public boolean supportsLeases() {
		return true;
	}

	@Override
	public InstanceLease renewLease(String idPrefix, String instanceId, String incarnation, Duration duration,
			Duration timeout) throws DecisionLogException {
		return requireLease(leaseOperation(new Operation.RenewLease(idPrefix, instanceId, incarnation,
				duration.toMillis()), timeout, "renew lease of " + idPrefix + "." + instanceId));
	}

	@Override
	public @Nullable InstanceLease renewHeldLease(String idPrefix, String instanceId, String incarnation,
			Duration duration, Duration timeout) throws DecisionLogException {
		return leaseOperation(new Operation.RenewLease(idPrefix, instanceId, incarnation, duration.toMillis(), true),
				timeout, "renew held lease of " + idPrefix + "." + instanceId);
	}

	@Override
	public @Nullable InstanceLease claimLease(String owner, String claimant, Duration timeout)
			throws DecisionLogException {
		return leaseOperation(new Operation.ClaimLease(owner, claimant), timeout, "claim lease of " + owner);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * A release by the holder keeps the lease, marked released, with its run history (operation
	 * code 10: the coordinator's peers must run a version that knows it, see
	 * {@code docs/architecture.md}, "Run histories").
	 */
	@Override
	public void releaseLease(String owner, String by, Duration timeout) throws DecisionLogException {
		leaseOperation(new Operation.ReleaseLease(owner, by, true), timeout, "release lease of " + owner);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The leases come with their run histories (query type 6: the coordinator's peers must run a
	 * version that knows it, see {@code docs/architecture.md}, "Run histories").
	 */
	@Override
	public List<InstanceLease> leases(String idPrefix, Duration timeout) throws DecisionLogException {
		return ((QueryReply.LeasesReply) query(new Query.LeasesQuery(idPrefix, true), timeout,
				"leases of " + idPrefix)).leases();
	}

	@Override
	public List<Decision> appInDoubt(String idPrefix, Duration timeout) throws DecisionLogException {
		return ((QueryReply.InDoubtReply) query(new Query.AppInDoubtQuery(idPrefix), timeout,
				"in-doubt transactions of " + idPrefix)).decisions();
	}

	private @Nullable InstanceLease leaseOperation(Operation operation, Duration timeout, String what) {
		OperationResult result = applied(operation, timeout, what);
		if (result instanceof OperationResult.LeaseAfter after) {
			return after.lease();
		}
		throw new DecisionLogException("Unexpected result " + result + " to " + what);
	}

	/**
	 * Sends one operation and waits for its result; a refusal by the coordinator (a logged
	 * entry it did not apply, see {@link OperationResult.Refused}) fails with the reason.
	 */
	private OperationResult applied(Operation operation, Duration timeout, String what) {
		OperationResult result = CoordinatorReplies.await(this.batcher.submit(checked(operation)), timeout, what,
				this.group);
		if (result instanceof OperationResult.Refused refused) {
			throw new DecisionLogException("The coordinator refused to " + what + " (nothing was recorded): "
					+ refused.reason());
		}
		return result;
	}

	/**
	 * Returns an operation that keeps the {@link CommandLimits}, or fails its caller alone: batched
	 * with others', an operation past a limit would make the coordinator refuse them all.
	 */
	private static Operation checked(Operation operation) {
		String refusal = CommandLimits.refusal(Command.of(System.currentTimeMillis(), operation));
		if (refusal != null) {
			throw new DecisionLogException("Refused before it was sent (nothing was recorded): " + refusal);
		}
		return operation;
	}

	private static InstanceLease requireLease(@Nullable InstanceLease lease) {
		if (lease == null) {
			throw new DecisionLogException("A renewed lease is missing from the decision log");
		}
		return lease;
	}

	/**
	 * Counts the records per state (a linearizable read).
	 * @param timeout how long to wait
	 * @return the counts
	 * @throws DecisionLogException if the read failed or timed out
	 */
	public DecisionTable.Counts counts(Duration timeout) throws DecisionLogException {
		return ((QueryReply.CountsReply) query(new Query.CountsQuery(), timeout, "counts")).counts();
	}

	/**
	 * Purges completed and aborted records that finished more than {@code retention} ago (by
	 * this client's clock) and waits for it.
	 * @param retention how long finished records are kept, zero or more
	 * @param timeout how long to wait
	 * @return the number of purged records
	 * @throws DecisionLogException if the write failed, timed out, or this log is closed
	 */
	public int purge(Duration retention, Duration timeout) throws DecisionLogException {
		OperationResult result = applied(new Operation.Purge(retention.toMillis()), timeout,
				"purge");
		return ((OperationResult.Purged) result).count();
	}

	/**
	 * Returns the number of commands (Raft log entries) this client has sent.
	 * @return the count, zero or more
	 */
	public long commandsSent() {
		return this.batcher.commandsSent();
	}

	/**
	 * Returns the number of commands the coordinator's peer in this JVM took directly
	 * ({@link RatisDecisionLogBuilder#inProcessPeer}), without gRPC; the rest of
	 * {@link #commandsSent()} went through the gRPC client.
	 * @return the count, zero or more; zero without an in-process peer
	 * @since 0.1.0
	 */
	public long commandsSentInProcess() {
		return (this.inProcess != null) ? this.inProcess.taken() : 0;
	}

	/**
	 * Returns the number of operations (decisions, completions, aborts, purges) this client
	 * has sent; divided by {@link #commandsSent()} it is the group-commit factor.
	 * @return the count, zero or more
	 */
	public long operationsSent() {
		return this.batcher.operationsSent();
	}

	/**
	 * Returns the peer this client currently takes for the leader (its first guess, or the
	 * last one a reply or a NotLeader hint named).
	 * @return the peer id
	 */
	public String leaderId() {
		return this.client.getLeaderId().toString();
	}

	/**
	 * Returns how many attempts were redirected by a NotLeader reply that named the leader;
	 * each such retry leaves at once, without backoff.
	 * @return the count, zero or more
	 */
	public long leaderRedirects() {
		return this.retryPolicy.redirects();
	}

	/**
	 * Returns how many attempts failed for another reason (stream closed by a stepped-down
	 * leader, NotLeader without a hint, timeout, unreachable peer, leader not ready).
	 * @return the count, zero or more
	 */
	public long failedAttempts() {
		return this.retryPolicy.otherFailures();
	}

	/**
	 * Returns how many retries waited for the backoff of {@link RatisDecisionLogBuilder#retry} (timeouts,
	 * unreachable peers, and leader changes that outlasted their quick retries). A leadership
	 * transfer or a new leader that is not ready yet is retried without it.
	 * @return the count, zero or more
	 * @since 0.1.0
	 */
	public long backoffRetries() {
		return this.retryPolicy.backoffRetries();
	}

	/**
	 * Returns how many linearizable reads a follower answered (with
	 * {@link RatisDecisionLogBuilder#readFromFollowers(boolean)}).
	 * @return the count, zero or more
	 */
	public long followerReads() {
		return this.reads.followerReads();
	}

	/**
	 * Returns how many reads failed on a follower and were sent to the leader instead (with
	 * {@link RatisDecisionLogBuilder#readFromFollowers(boolean)}).
	 * @return the count, zero or more
	 */
	public long followerReadFallbacks() {
		return this.reads.followerReadFallbacks();
	}

	/**
	 * Returns the coordinator group this client talks to.
	 * @return the group
	 */
	public CoordinatorGroup group() {
		return this.group;
	}

	/**
	 * Flushes queued completions (waiting up to {@link RatisDecisionLogBuilder#closeTimeout(Duration)}), then
	 * closes the Ratis client. Idempotent.
	 */
	@Override
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		if (this.purger != null) {
			this.purger.shutdownNow();
		}
		if (!this.batcher.close(this.closeTimeout)) {
			logger.warn("Decision log of {} closed before every queued operation was answered (waited {})", this.group,
					this.closeTimeout);
		}
		try {
			this.client.close();
			if (this.followerReadClient != null) {
				this.followerReadClient.close();
			}
		}
		catch (Exception ex) {
			logger.warn("Closing the Ratis client of {} failed: {}", this.group, ex.toString());
		}
	}

	private void schedulePurge(long retentionMs) {
		// A command of its own, never batched with the app's operations: a purge is administrative,
		// and a coordinator refuses a whole command when its caller is not an admin
		if (this.closed.get()) {
			return;
		}
		send(Command.of(System.currentTimeMillis(), new Operation.Purge(retentionMs))).whenComplete((results, failure) -> {
			if (failure != null) {
				logger.warn("Purge of decision log '{}' failed (purging is for an admin identity; set purgeInterval "
						+ "to zero for an app): {}", this.group, failure.toString());
			}
		});
	}

	private QueryReply query(Query query, Duration timeout, String what) {
		if (this.closed.get()) {
			throw new DecisionLogException("Decision log of " + this.group + " is closed");
		}
		return this.reads.query(query, timeout, what);
	}

	private CompletableFuture<List<OperationResult>> send(Command command) {
		Message message = Message.valueOf(UnsafeByteOperations.unsafeWrap(MessageCodec.encodeCommand(command)));
		CompletableFuture<RaftClientReply> reply;
		if (this.inProcess != null) {
			// a command the in-process peer did not take (nothing appended) goes the usual way
			reply = this.inProcess.write(message)
				.thenCompose((answer) -> (answer != null) ? CompletableFuture.completedFuture(answer)
						: this.client.async().send(message));
		}
		else {
			reply = this.client.async().send(message);
		}
		return reply.thenApply((answer) -> {
			CoordinatorReplies.checkSuccess(answer);
			return MessageCodec.decodeResults(answer.getMessage().getContent().newInput());
		});
	}

}
