package dev.tandem.coordinator.server;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;

import dev.tandem.coordinator.security.AccessPolicy;
import dev.tandem.coordinator.security.CoordinatorAccessDeniedException;
import dev.tandem.coordinator.state.Command;
import dev.tandem.coordinator.state.CommandLimits;
import dev.tandem.coordinator.state.CoordinatorQuotas;
import dev.tandem.coordinator.state.DecisionCodecException;
import dev.tandem.coordinator.state.DecisionTable;
import dev.tandem.coordinator.state.Grant;
import dev.tandem.coordinator.state.LogEntryCodec;
import dev.tandem.coordinator.state.MessageCodec;
import dev.tandem.coordinator.state.Operation;
import dev.tandem.coordinator.state.OperationResult;
import dev.tandem.coordinator.state.Query;
import dev.tandem.coordinator.state.QueryReply;
import dev.tandem.coordinator.state.QuotaExceededException;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.LifeCycle;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Apache Ratis adapter over a {@link DecisionTable}: commands are validated in
 * {@link #startTransaction}, applied only in {@link #applyTransaction}, queries are read-only;
 * snapshot files are {@link DecisionSnapshots}' job (one per term-index in a
 * {@link SimpleStateMachineStorage}), the wire messages {@link MessageCodec}'s and the log entries
 * {@link LogEntryCodec}'s.
 * <p>
 * With {@code raft.server.read.option=LINEARIZABLE} (set by {@link CoordinatorServer}), Ratis
 * runs {@link #query} only after the ReadIndex of the read is applied (Raft thesis §6.4), so a
 * follower serves reads without stale answers (KIP-996 applies the same idea to KRaft).
 * <p>
 * Authorization (see {@link AccessPolicy}): every client request arrives wrapped in an
 * envelope naming the caller's certificate identity (added by the peer's gRPC interceptor,
 * never by the client). {@link #startTransaction} resolves the caller's {@link Grant} and
 * refuses, with a {@link CoordinatorAccessDeniedException} and before anything reaches the
 * log, a command with any operation whose {@link Operation#scopes() scope} the grant does not
 * cover ({@code CommandAuthorizer}: owners, transaction ids bound to their owner, quotas); the
 * accepted command is logged together with its grant and the leader's time, so the apply is the
 * same on every replica. Queries are checked the same way.
 * <p>
 * No input stops the peer: a command is decoded strictly and checked against the
 * {@link CommandLimits} before the log; the apply refuses ({@link OperationResult.Refused}) what it
 * cannot apply instead of throwing, so a replay never fails.
 * <p>
 * Thread-safe: applies run on Ratis' single state machine updater thread; queries may run on
 * any thread and take a read lock.
 *
 * @since 0.1.0
 */
public class DecisionStateMachine extends BaseStateMachine {

	private static final Logger logger = LoggerFactory.getLogger(DecisionStateMachine.class);

	private final DecisionSnapshots snapshots = new DecisionSnapshots();

	private final DecisionTable table = new DecisionTable();

	private final ReadWriteLock lock = new ReentrantReadWriteLock();

	private final AtomicLong appliedEntries = new AtomicLong();

	private final AtomicLong appliedOperations = new AtomicLong();

	private final AtomicLong appliedDecisions = new AtomicLong();

	private final AtomicLong leaderChanges = new AtomicLong();

	private final AtomicLong refusedRequests = new AtomicLong();

	private final AtomicLong invalidRequests = new AtomicLong();

	private final AtomicLong quotaRefusals = new AtomicLong();

	private final AtomicLong refusedOperations = new AtomicLong();

	private final CommandAuthorizer authorizer;

	private volatile @Nullable LeaderReadGuard readGuard;

	private volatile RaftServer.@Nullable Division division;

	/**
	 * Creates a state machine that lets every caller do everything (no TLS).
	 */
	public DecisionStateMachine() {
		this(AccessPolicy.open());
	}

	/**
	 * Creates a state machine that authorizes every request by the caller's identity.
	 * @param policy who may act for which owners
	 */
	public DecisionStateMachine(AccessPolicy policy) {
		this(policy, CoordinatorQuotas.DEFAULTS);
	}

	/**
	 * Creates a state machine that authorizes every request by the caller's identity and limits
	 * what each identity holds.
	 * @param policy who may act for which owners
	 * @param quotas what one identity's owners may hold (not applied to admins and the open policy)
	 */
	public DecisionStateMachine(AccessPolicy policy, CoordinatorQuotas quotas) {
		this.authorizer = new CommandAuthorizer(policy, quotas, this::read);
	}

	@Override
	public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
		super.initialize(server, groupId, raftStorage);
		this.snapshots.init(raftStorage);
		load();
		long minTimeoutMs = RaftServerConfigKeys.Rpc.timeoutMin(server.getProperties()).toLong(TimeUnit.MILLISECONDS);
		long maxTimeoutMs = RaftServerConfigKeys.Rpc.timeoutMax(server.getProperties()).toLong(TimeUnit.MILLISECONDS);
		this.readGuard = new LeaderReadGuard(minTimeoutMs / 2, 2 * maxTimeoutMs);
		// Ratis reloads an installed snapshot only from a PAUSED state machine (see pause())
		getLifeCycle().transition(LifeCycle.State.STARTING);
		getLifeCycle().transition(LifeCycle.State.RUNNING);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Called by Ratis on a follower before it publishes a snapshot installed from the leader;
	 * its updater then reloads the state machine only if it is PAUSED, and otherwise stops the
	 * peer. Ratis 3.3.0's {@code BaseStateMachine.pause()} does nothing, so this moves the life
	 * cycle itself; {@link #reinitialize()} moves it back to RUNNING.
	 */
	@Override
	public void pause() {
		if (getLifeCycle().compareAndTransition(LifeCycle.State.RUNNING, LifeCycle.State.PAUSING)) {
			getLifeCycle().transition(LifeCycle.State.PAUSED);
		}
	}

	@Override
	public void close() throws IOException {
		LeaderReadGuard guard = this.readGuard;
		if (guard != null) {
			guard.close();
		}
		super.close();
	}

	@Override
	public void reinitialize() throws IOException {
		// Called after a snapshot was installed from the leader: read the newest one from disk
		this.snapshots.rescan();
		load();
		if (getLifeCycle().compareAndTransition(LifeCycle.State.PAUSED, LifeCycle.State.STARTING)) {
			getLifeCycle().transition(LifeCycle.State.RUNNING);
		}
	}

	@Override
	public @Nullable SnapshotInfo getLatestSnapshot() {
		return this.snapshots.latest();
	}

	@Override
	public StateMachineStorage getStateMachineStorage() {
		return this.snapshots.storage();
	}

	@Override
	public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
		TransactionContext.Builder builder = TransactionContext.newBuilder()
			.setStateMachine(this)
			.setClientRequest(request);
		ByteString content = request.getMessage().getContent();
		try {
			MessageCodec.Envelope envelope = envelope(content);
			Grant grant = this.authorizer.grantFor(envelope.identity());
			Command command = MessageCodec.decodeCommand(envelope.payload());
			CommandLimits.check(command);
			CommandAuthorizer.Refusal refusal = this.authorizer.commandRefusal(grant, command);
			if (refusal != null) {
				(refusal.quota() ? this.quotaRefusals : this.refusedRequests).incrementAndGet();
				logger.warn("Refusing a command of {} from client {}: {}", grant.identity(), request.getClientId(),
						refusal.reason());
				return builder.build()
					.setException(refusal.quota() ? new QuotaExceededException(refusal.reason())
							: new CoordinatorAccessDeniedException(refusal.reason()));
			}
			// The leader's clock, not the sender's, times the command (lease expiry, retention)
			long leaderTimeMs = System.currentTimeMillis();
			LogEntryCodec.LogEntry entry = new LogEntryCodec.LogEntry(grant,
					new Command(leaderTimeMs, command.operations()));
			return builder
				.setLogData(UnsafeByteOperations
					.unsafeWrap(LogEntryCodec.encodeLogEntry(grant, leaderTimeMs, envelope.payload())))
				.setStateMachineContext(entry)
				.build();
		}
		catch (DecisionCodecException ex) {
			this.invalidRequests.incrementAndGet();
			logger.warn("Refusing an invalid command from client {}: {}", request.getClientId(), ex.getMessage());
			return builder.build().setException(ex);
		}
		catch (RuntimeException ex) {
			// Nothing a client sends may fail the peer: an unexpected failure refuses the request
			this.invalidRequests.incrementAndGet();
			logger.error("Refusing a command from client {} that failed validation unexpectedly: {}",
					request.getClientId(), ex.toString(), ex);
			return builder.build().setException(new DecisionCodecException("Command refused: " + ex, ex));
		}
	}

	private MessageCodec.Envelope envelope(ByteString content) {
		if (content.size() >= 2 && MessageCodec.isEnvelope(content.byteAt(0), content.byteAt(1))) {
			return MessageCodec.decodeEnvelope(content.newInput());
		}
		return this.authorizer.barePayload(content.toByteArray());
	}

	@Override
	public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
		LogEntryProto entry = trx.getLogEntry();
		TermIndex termIndex = TermIndex.valueOf(entry);
		LogEntryCodec.LogEntry logEntry = (trx.getStateMachineContext() instanceof LogEntryCodec.LogEntry cached)
				? cached : null;
		try {
			if (logEntry == null) {
				logEntry = LogEntryCodec.decodeLogEntry(entry.getStateMachineLogEntry().getLogData().toByteArray());
			}
		}
		catch (DecisionCodecException ex) {
			// Same bytes on every replica: skip deterministically (startTransaction refuses these)
			logger.error("Skipping undecodable log entry {}: {}", termIndex, ex.getMessage());
			updateLastAppliedTermIndex(termIndex);
			return CompletableFuture.failedFuture(ex);
		}
		Command command = logEntry.command();
		List<OperationResult> results;
		this.lock.writeLock().lock();
		try {
			results = this.table.apply(command, logEntry.grant());
		}
		catch (RuntimeException ex) {
			// The table refuses what fails per operation; this is a last resort that keeps the peer up
			logger.error("Applying log entry {} failed; its {} operations are refused on every replica: {}", termIndex,
					command.operations().size(), ex.toString(), ex);
			results = refuseAll(command, "the coordinator failed to apply the command: " + ex.getClass().getSimpleName());
		}
		finally {
			updateLastAppliedTermIndex(termIndex);
			this.lock.writeLock().unlock();
		}
		this.appliedEntries.incrementAndGet();
		this.appliedOperations.addAndGet(command.operations().size());
		this.appliedDecisions.addAndGet(countDecisions(command));
		long refused = results.stream().filter(OperationResult.Refused.class::isInstance).count();
		if (refused > 0) {
			this.refusedOperations.addAndGet(refused);
			logger.warn("Refused {} of {} operations of log entry {}: {}", refused, results.size(), termIndex,
					results.stream().filter(OperationResult.Refused.class::isInstance).findFirst().orElseThrow());
		}
		byte[] reply;
		try {
			reply = MessageCodec.encodeResults(results);
		}
		catch (RuntimeException ex) {
			logger.error("Encoding the results of log entry {} failed; its client gets refusals: {}", termIndex,
					ex.toString(), ex);
			reply = MessageCodec.encodeResults(refuseAll(command, "the coordinator could not encode the results"));
		}
		return CompletableFuture.completedFuture(message(reply));
	}

	private static List<OperationResult> refuseAll(Command command, String reason) {
		OperationResult refused = new OperationResult.Refused(reason);
		return command.operations().stream().map((operation) -> refused).toList();
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * On the leader, answers only once leadership is confirmed by a majority (see
	 * {@code LeaderReadGuard}: Ratis 3.3.0 may skip that confirmation), else fails with a
	 * {@link org.apache.ratis.protocol.exceptions.ReadException}.
	 */
	@Override
	public CompletableFuture<Message> query(Message request) {
		Query query;
		try {
			MessageCodec.Envelope envelope = envelope(request.getContent());
			query = MessageCodec.decodeQuery(new ByteArrayInputStream(envelope.payload()));
			Grant grant = this.authorizer.grantFor(envelope.identity());
			String refusal = this.authorizer.queryRefusal(grant, query.scopes(), query.getClass().getSimpleName());
			if (refusal != null) {
				this.refusedRequests.incrementAndGet();
				logger.warn("Refusing a query of {}: {}", grant.identity(), refusal);
				// Ratis answers a StateMachineException to the client; anything else fails the call
				return CompletableFuture.failedFuture(
						new StateMachineException(new CoordinatorAccessDeniedException(refusal).toString()));
			}
		}
		catch (DecisionCodecException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		catch (RuntimeException ex) {
			// Nothing a client asks may fail the peer: an unexpected failure refuses the query
			logger.error("Refusing a query that failed unexpectedly: {}", ex.toString(), ex);
			return CompletableFuture.failedFuture(new StateMachineException("Query refused: " + ex));
		}
		LeaderReadGuard guard = this.readGuard;
		RaftServer.Division self = division();
		if (guard == null || self == null) {
			return CompletableFuture.completedFuture(answerNow(query));
		}
		CompletableFuture<Void> confirmed = guard.confirm(self);
		return confirmed.isDone() && !confirmed.isCompletedExceptionally()
				? CompletableFuture.completedFuture(answerNow(query)) : confirmed.thenApply((ignored) -> answerNow(query));
	}

	private RaftServer.@Nullable Division division() {
		RaftServer.Division self = this.division;
		if (self == null) {
			CompletableFuture<RaftServer> server = getServer();
			if (server.isDone() && !server.isCompletedExceptionally()) {
				try {
					self = server.join().getDivision(getGroupId());
					this.division = self;
				}
				catch (IOException ex) {
					logger.debug("Division of {} not available yet: {}", getGroupId(), ex.toString());
				}
			}
		}
		return self;
	}

	private Message answerNow(Query query) {
		QueryReply reply;
		this.lock.readLock().lock();
		try {
			reply = this.table.answer(query);
		}
		finally {
			this.lock.readLock().unlock();
		}
		return message(MessageCodec.encodeReply(reply));
	}

	@Override
	public void notifyLeaderChanged(RaftGroupMemberId groupMemberId, @Nullable RaftPeerId newLeaderId) {
		this.leaderChanges.incrementAndGet();
		logger.debug("Peer {} now sees leader {}", groupMemberId.getPeerId(), newLeaderId);
	}

	@Override
	public long takeSnapshot() throws IOException {
		this.lock.readLock().lock();
		try {
			TermIndex last = getLastAppliedTermIndex();
			if (last == null || last.getIndex() < 0) {
				return RaftLog.INVALID_LOG_INDEX;
			}
			this.snapshots.write(this.table, last);
			return last.getIndex();
		}
		finally {
			this.lock.readLock().unlock();
		}
	}

	private void load() throws IOException {
		DecisionSnapshots.Loaded loaded = this.snapshots.readLatest();
		if (loaded == null) {
			return;
		}
		this.lock.writeLock().lock();
		try {
			this.table.replaceWith(loaded.content().records(), loaded.content().leases());
			setLastAppliedTermIndex(loaded.last());
		}
		finally {
			this.lock.writeLock().unlock();
		}
		this.snapshots.loaded(loaded);
	}

	/**
	 * Returns the number of Raft log entries (commands) this replica applied since it started.
	 * @return the count, zero or more
	 */
	public long appliedEntries() {
		return this.appliedEntries.get();
	}

	/**
	 * Returns the number of operations this replica applied since it started (each entry
	 * holds one or more).
	 * @return the count, zero or more
	 */
	public long appliedOperations() {
		return this.appliedOperations.get();
	}

	/**
	 * Returns the number of decide operations this replica applied since it started;
	 * {@code appliedDecisions() / appliedEntries()} is the group-commit factor.
	 * @return the count, zero or more
	 */
	public long appliedDecisions() {
		return this.appliedDecisions.get();
	}

	/**
	 * Returns how the reads this replica served as leader were confirmed (counts since it
	 * started; zero before start-up).
	 * @return the counts
	 */
	public LeaderReads leaderReads() {
		LeaderReadGuard guard = this.readGuard;
		return (guard != null) ? new LeaderReads(guard.leaseReads(), guard.confirmedReads(), guard.refusedReads())
				: new LeaderReads(0, 0, 0);
	}

	/**
	 * Returns the number of commands and queries this peer refused because the caller's
	 * identity may not act for what they touch, since it started.
	 * @return the count, zero or more
	 */
	public long refusedRequests() {
		return this.refusedRequests.get();
	}

	/**
	 * Returns the number of commands this peer refused before the log because they were
	 * malformed or broke the {@link CommandLimits}, since it started.
	 * @return the count, zero or more
	 */
	public long invalidRequests() {
		return this.invalidRequests.get();
	}

	/**
	 * Returns the number of commands this peer refused before the log because they would take
	 * an identity past its {@link CoordinatorQuotas}, since it started.
	 * @return the count, zero or more
	 */
	public long quotaRefusals() {
		return this.quotaRefusals.get();
	}

	/**
	 * Returns the number of logged operations this replica refused when applying them (see
	 * {@link OperationResult.Refused}), since it started.
	 * @return the count, zero or more
	 */
	public long refusedOperations() {
		return this.refusedOperations.get();
	}

	/**
	 * Returns the number of snapshots of this replica that failed since it started; while
	 * snapshots fail the Raft log is never purged.
	 * @return the count, zero or more
	 */
	public long failedSnapshots() {
		return this.snapshots.failures();
	}

	/**
	 * Runs a read of this replica's decision table under its read lock (a local, possibly
	 * stale read: the admin API's view of this peer).
	 * @param <T> the result type
	 * @param reader reads the table; must not keep it or change it
	 * @return the reader's result
	 */
	public <T> T read(Function<DecisionTable, T> reader) {
		this.lock.readLock().lock();
		try {
			return reader.apply(this.table);
		}
		finally {
			this.lock.readLock().unlock();
		}
	}

	/**
	 * Returns how often this replica saw the leader change (including to "no leader") since it
	 * started; a steadily rising count means needless elections.
	 * @return the count, zero or more
	 */
	public long leaderChanges() {
		return this.leaderChanges.get();
	}

	/**
	 * Returns the log index of the snapshot this replica last loaded at start-up or on
	 * installation, or {@code -1} if it loaded none.
	 * @return the log index, or {@code -1}
	 */
	public long loadedSnapshotIndex() {
		return this.snapshots.loadedIndex();
	}

	/**
	 * Returns the number of records in the snapshot this replica last loaded, or 0.
	 * @return the count, zero or more
	 */
	public int loadedSnapshotRecords() {
		return this.snapshots.loadedRecords();
	}

	/**
	 * Returns the number of records per state on this replica (a local, possibly stale read).
	 * @return the counts
	 */
	public DecisionTable.Counts counts() {
		this.lock.readLock().lock();
		try {
			return this.table.counts();
		}
		finally {
			this.lock.readLock().unlock();
		}
	}

	private static long countDecisions(Command command) {
		return command.operations().stream().filter(Operation.Decide.class::isInstance).count();
	}

	private static Message message(byte[] bytes) {
		return Message.valueOf(UnsafeByteOperations.unsafeWrap(bytes));
	}

	/**
	 * How a leader confirmed its leadership before answering reads.
	 *
	 * @param withinLease reads answered at once because a majority answered the leader
	 *     within half the minimum election timeout
	 * @param confirmed reads answered after a majority answered a heartbeat sent after the
	 *     read arrived (Raft thesis §6.4)
	 * @param refused reads refused because no majority answered within twice the maximum
	 *     election timeout: a leader cut off from the majority
	 * @since 0.1.0
	 */
	public record LeaderReads(long withinLease, long confirmed, long refused) {

	}

}
