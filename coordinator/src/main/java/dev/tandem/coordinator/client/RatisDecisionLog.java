package dev.tandem.coordinator.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import dev.tandem.coordinator.security.CoordinatorAccessDeniedException;
import dev.tandem.coordinator.security.CoordinatorTls;
import dev.tandem.coordinator.state.Command;
import dev.tandem.coordinator.state.CommandLimits;
import dev.tandem.coordinator.state.DecisionCodec;
import dev.tandem.coordinator.state.DecisionTable;
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
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.ReadException;
import org.apache.ratis.protocol.exceptions.ReadIndexException;
import org.apache.ratis.retry.ExponentialBackoffRetry;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.TimeDuration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link DecisionLog} on Tandem's Raft-replicated coordinator (Apache Ratis over gRPC).
 * <ul>
 * <li>{@link #decide} and {@link #abort} use group commit: concurrent calls share one Raft log
 * entry (up to {@link Builder#maxBatchSize(int)} operations), and each caller gets its own
 * result.</li>
 * <li>{@link #complete} is asynchronous: completions are queued and written in batches every
 * {@link Builder#completionLinger(Duration) few milliseconds}; {@link #close()} flushes
 * them.</li>
 * <li>{@link #state} and {@link #inDoubt} are linearizable reads (ReadIndex, Raft thesis §6.4),
 * served by the leader, by {@link Builder#readFrom(String) a chosen peer}, or
 * {@link Builder#readFromFollowers(boolean) spread over the followers}; a follower asks the
 * leader for the commit index and answers once it has applied up to it, so it never answers
 * with data older than the read (KIP-996 brings the same to KRaft).</li>
 * <li>Completed and aborted records older than {@link Builder#retention(Duration)} are purged
 * every {@link Builder#purgeInterval(Duration)}.</li>
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

	private final @Nullable RaftPeerId readFrom;

	private final CoordinatorRetryPolicy retryPolicy;

	private final @Nullable RaftClient followerReadClient;

	private final List<RaftPeerId> peerIds;

	private final AtomicInteger nextReader = new AtomicInteger();

	private final LongAdder followerReads = new LongAdder();

	private final LongAdder followerReadFallbacks = new LongAdder();

	private final CommandBatcher batcher;

	private final @Nullable ScheduledExecutorService purger;

	private final Duration closeTimeout;

	private final Duration retryBaseSleep;

	private final Duration retryMaxSleep;

	private final AtomicBoolean closed = new AtomicBoolean();

	private RatisDecisionLog(Builder builder) {
		this.group = builder.group;
		this.readFrom = (builder.readFrom != null) ? RaftPeerId.valueOf(builder.readFrom) : null;
		this.closeTimeout = builder.closeTimeout;
		this.retryBaseSleep = builder.retryBaseSleep;
		this.retryMaxSleep = builder.retryMaxSleep;
		this.retryPolicy = new CoordinatorRetryPolicy(builder.retryPolicy(), builder.retryMaxAttempts,
				builder.group.peers().size());
		this.peerIds = this.group.peers().keySet().stream().map(RaftPeerId::valueOf).toList();
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
		this.followerReadClient = (builder.readFromFollowers && this.peerIds.size() > 1) ? RaftClient.newBuilder()
			.setClientId(ClientId.randomId())
			.setRaftGroup(this.group.toRaftGroup())
			.setProperties(builder.clientProperties())
			.setParameters(builder.clientParameters())
			.setRetryPolicy(RetryPolicies.noRetry())
			.build() : null;
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
	public static Builder builder(CoordinatorGroup group) {
		return new Builder(group);
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
	 * Queued and written with other completions within {@link Builder#completionLinger}; a
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
	public @Nullable InstanceLease claimLease(String owner, String claimant, Duration timeout)
			throws DecisionLogException {
		return leaseOperation(new Operation.ClaimLease(owner, claimant), timeout, "claim lease of " + owner);
	}

	@Override
	public void releaseLease(String owner, String by, Duration timeout) throws DecisionLogException {
		leaseOperation(new Operation.ReleaseLease(owner, by), timeout, "release lease of " + owner);
	}

	@Override
	public List<InstanceLease> leases(String idPrefix, Duration timeout) throws DecisionLogException {
		return ((QueryReply.LeasesReply) query(new Query.LeasesQuery(idPrefix), timeout, "leases of " + idPrefix))
			.leases();
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
		OperationResult result = await(this.batcher.submit(checked(operation)), timeout, what);
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
	 * Returns how many retries waited for the backoff of {@link Builder#retry} (timeouts,
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
	 * {@link Builder#readFromFollowers(boolean)}).
	 * @return the count, zero or more
	 */
	public long followerReads() {
		return this.followerReads.sum();
	}

	/**
	 * Returns how many reads failed on a follower and were sent to the leader instead (with
	 * {@link Builder#readFromFollowers(boolean)}).
	 * @return the count, zero or more
	 */
	public long followerReadFallbacks() {
		return this.followerReadFallbacks.sum();
	}

	/**
	 * Returns the coordinator group this client talks to.
	 * @return the group
	 */
	public CoordinatorGroup group() {
		return this.group;
	}

	/**
	 * Flushes queued completions (waiting up to {@link Builder#closeTimeout(Duration)}), then
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

	private CompletableFuture<List<OperationResult>> send(Command command) {
		Message message = Message.valueOf(UnsafeByteOperations.unsafeWrap(DecisionCodec.encodeCommand(command)));
		return this.client.async().send(message).thenApply((reply) -> {
			checkSuccess(reply);
			return DecisionCodec.decodeResults(reply.getMessage().getContent().newInput());
		});
	}

	private QueryReply query(Query query, Duration timeout, String what) {
		if (this.closed.get()) {
			throw new DecisionLogException("Decision log of " + this.group + " is closed");
		}
		Message message = Message.valueOf(UnsafeByteOperations.unsafeWrap(DecisionCodec.encodeQuery(query)));
		long deadline = System.nanoTime() + timeout.toNanos();
		for (int attempt = 0;; attempt++) {
			Duration remaining = Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
			try {
				return await(read(message).thenApply((reply) -> {
					checkSuccess(reply);
					return DecisionCodec.decodeReply(reply.getMessage().getContent().newInput());
				}), remaining, what);
			}
			catch (DecisionLogException ex) {
				// Ratis answers these in a reply instead of retrying: no leader known, or
				// leadership not confirmed; both pass once an election is over
				long sleepNanos = backoffNanos(attempt);
				if (!isTransientReadFailure(ex) || System.nanoTime() + sleepNanos >= deadline) {
					throw ex;
				}
				logger.debug("Retrying {} in {} ms: {}", what, TimeUnit.NANOSECONDS.toMillis(sleepNanos), ex.getMessage());
				try {
					TimeUnit.NANOSECONDS.sleep(sleepNanos);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					throw new DecisionLogException("Interrupted while waiting to retry " + what, interrupted);
				}
			}
		}
	}

	private long backoffNanos(int attempt) {
		long base = this.retryBaseSleep.toNanos() << Math.min(attempt, 16);
		long capped = Math.min(base, this.retryMaxSleep.toNanos());
		return capped / 2 + ThreadLocalRandom.current().nextLong(capped / 2 + 1);
	}

	private static boolean isTransientReadFailure(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof ReadException || cause instanceof ReadIndexException) {
				return true;
			}
		}
		return false;
	}

	private CompletableFuture<RaftClientReply> read(Message message) {
		if (this.readFrom != null) {
			return this.client.async().sendReadOnly(message, this.readFrom);
		}
		RaftPeerId follower = (this.followerReadClient != null) ? nextFollower() : null;
		if (follower == null || this.followerReadClient == null) {
			return this.client.async().sendReadOnly(message);
		}
		return this.followerReadClient.async().sendReadOnly(message, follower).thenApply((reply) -> {
			checkSuccess(reply);
			this.followerReads.increment();
			return reply;
		}).exceptionallyCompose((failure) -> {
			this.followerReadFallbacks.increment();
			logger.debug("Linearizable read on follower '{}' failed, asking the leader: {}", follower, failure.toString());
			return this.client.async().sendReadOnly(message);
		});
	}

	/**
	 * Round-robin over the peers other than the one this client takes for the leader.
	 */
	private @Nullable RaftPeerId nextFollower() {
		RaftPeerId leader = this.client.getLeaderId();
		List<RaftPeerId> followers = new ArrayList<>(this.peerIds.size());
		for (RaftPeerId peer : this.peerIds) {
			if (!peer.equals(leader)) {
				followers.add(peer);
			}
		}
		if (followers.isEmpty()) {
			return null;
		}
		return followers.get(Math.floorMod(this.nextReader.getAndIncrement(), followers.size()));
	}

	private static void checkSuccess(RaftClientReply reply) {
		if (!reply.isSuccess()) {
			String refusal = accessDenied(reply.getException());
			if (refusal != null) {
				throw new CompletionException(new CoordinatorAccessDeniedException(refusal));
			}
			throw new CompletionException(new DecisionLogException(
					"Coordinator refused the request: " + reply.getException(), reply.getException()));
		}
	}

	/**
	 * Returns the peer's reason when it refused the request for lack of rights (it travels as
	 * the message of a StateMachineException), or {@code null}.
	 */
	private static @Nullable String accessDenied(@Nullable Throwable failure) {
		String marker = CoordinatorAccessDeniedException.class.getName() + ": ";
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof CoordinatorAccessDeniedException denied) {
				return denied.getMessage();
			}
			String message = cause.getMessage();
			int at = (message != null) ? message.indexOf(marker) : -1;
			if (at >= 0) {
				return message.substring(at + marker.length());
			}
		}
		return null;
	}

	private <T> T await(CompletableFuture<T> future, Duration timeout, String what) {
		try {
			return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw new DecisionLogException("No answer from the coordinator " + this.group.peers().keySet() + " to "
					+ what + " within " + timeout + "; the outcome is unknown", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new DecisionLogException("Interrupted while waiting for " + what + "; the outcome is unknown", ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			String refusal = (cause instanceof CoordinatorAccessDeniedException) ? cause.getMessage() : accessDenied(cause);
			if (refusal != null) {
				throw new CoordinatorAccessDeniedException(what + " refused: " + refusal);
			}
			if (cause instanceof DecisionLogException logException) {
				throw new DecisionLogException(what + " failed: " + logException.getMessage(), logException);
			}
			throw new DecisionLogException(what + " failed: " + cause, cause);
		}
	}

	/**
	 * Settings of a {@link RatisDecisionLog}.
	 *
	 * @since 0.1.0
	 */
	public static final class Builder {

		private final CoordinatorGroup group;

		private Duration requestTimeout = Duration.ofSeconds(3);

		private Duration retryBaseSleep = Duration.ofMillis(50);

		private Duration retryMaxSleep = Duration.ofSeconds(2);

		private int retryMaxAttempts = 20;

		private int maxBatchSize = 256;

		private int maxInFlightBatches = 1;

		private Duration completionLinger = Duration.ofMillis(5);

		private Duration retention = Duration.ofDays(7);

		private Duration purgeInterval = Duration.ofMinutes(10);

		private Duration closeTimeout = Duration.ofSeconds(5);

		private @Nullable String readFrom;

		private boolean readFromFollowers;

		private @Nullable String initialLeader;

		private @Nullable CoordinatorTls tls;

		private Builder(CoordinatorGroup group) {
			this.group = Objects.requireNonNull(group, "group");
		}

		/**
		 * Sets how long one attempt of a request may take before Ratis retries it.
		 * @param timeout the per-attempt timeout, positive (default 3 s)
		 * @return this builder
		 */
		public Builder requestTimeout(Duration timeout) {
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
		public Builder retry(Duration baseSleep, Duration maxSleep, int maxAttempts) {
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
		public Builder maxBatchSize(int operations) {
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
		public Builder maxInFlightBatches(int commands) {
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
		public Builder completionLinger(Duration linger) {
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
		public Builder retention(Duration retention) {
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
		public Builder purgeInterval(Duration interval) {
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
		public Builder closeTimeout(Duration timeout) {
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
		public Builder readFrom(@Nullable String peerId) {
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
		public Builder readFromFollowers(boolean readFromFollowers) {
			this.readFromFollowers = readFromFollowers;
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
		public Builder initialLeader(@Nullable String peerId) {
			if (peerId != null && !this.group.peers().containsKey(peerId)) {
				throw new IllegalArgumentException("Peer '" + peerId + "' is not in " + this.group);
			}
			this.initialLeader = peerId;
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
		public Builder tls(@Nullable CoordinatorTls tls) {
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

}
