package dev.tandem.coordinator.server;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.exceptions.ReadException;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.jspecify.annotations.Nullable;

/**
 * Makes a leader confirm that it still leads before it answers a linearizable read, closing a
 * stale-read window of Apache Ratis 3.3.0.
 * <p>
 * Raft's ReadIndex (Raft thesis §6.4) requires the leader to exchange heartbeats with a
 * majority <em>after</em> the read arrived. Ratis 3.3.0 skips that round when the read index
 * was already confirmed by an earlier round ({@code ReadIndexHeartbeats}: {@code commitIndex
 * <= ackedCommitIndex}), so a leader cut off from the majority, which has not yet noticed and
 * stepped down (that takes at least the maximum election timeout and only happens when its
 * event queue is idle), answers reads from its old state while a new leader already commits
 * new writes. Tandem's stale-read test caught it.
 * <p>
 * The guard runs in the state machine's {@code query}, on the leader only:
 * <ol>
 * <li>lease: if a majority (counting the leader) answered an append-entries request within
 * the last {@code leaseMs}, the read is answered at once. A follower grants a pre-vote only
 * when it has not heard from its leader for the minimum election timeout, so no other leader
 * can exist within that time after a follower heard this one; {@code leaseMs} is half the
 * minimum election timeout, leaving the other half for the reply's way back. This is the
 * timing assumption of Raft's lease-based reads (thesis §6.4.1), with a wide margin;</li>
 * <li>otherwise it waits (checking every few milliseconds) until a majority answered after the
 * read started: a plain ReadIndex confirmation with no timing assumption; the leader sends
 * heartbeats at least every half minimum election timeout;</li>
 * <li>if that does not happen within {@code confirmTimeoutMs}, the read fails with a
 * {@link ReadException}, which Tandem's client retries elsewhere.</li>
 * </ol>
 * Followers need no guard: they take their read index from the leader. In a group of five, a
 * follower cut off together with the old leader can still get an unconfirmed read index from
 * it (the same Ratis shortcut); three-peer groups cannot be split that way.
 * <p>
 * Thread-safe.
 */
final class LeaderReadGuard implements AutoCloseable {

	private static final long POLL_MS = 2;

	private final long leaseMs;

	private final long confirmTimeoutMs;

	private final AtomicReference<@Nullable ScheduledExecutorService> scheduler = new AtomicReference<>();

	private final LongAdder leaseReads = new LongAdder();

	private final LongAdder confirmedReads = new LongAdder();

	private final LongAdder refusedReads = new LongAdder();

	private volatile boolean closed;

	LeaderReadGuard(long leaseMs, long confirmTimeoutMs) {
		this.leaseMs = leaseMs;
		this.confirmTimeoutMs = confirmTimeoutMs;
	}

	/**
	 * Completes when this peer may answer a read: at once on a follower or a single peer,
	 * else once leadership is confirmed as described above.
	 * @param division this peer's division
	 * @return a future that fails with a {@link ReadException} when leadership could not be
	 *     confirmed
	 */
	CompletableFuture<Void> confirm(RaftServer.Division division) {
		DivisionInfo info = division.getInfo();
		if (!info.isLeader()) {
			return CompletableFuture.completedFuture(null);
		}
		int voters = division.getRaftConf().getCurrentPeers().size();
		if (voters <= 1 || majorityAnsweredWithin(info, voters, this.leaseMs)) {
			this.leaseReads.increment();
			return CompletableFuture.completedFuture(null);
		}
		ScheduledExecutorService executor = scheduler();
		if (executor == null) {
			return CompletableFuture.failedFuture(new ReadException(division.getMemberId() + ": closing"));
		}
		long startNanos = System.nanoTime();
		CompletableFuture<Void> result = new CompletableFuture<>();
		ScheduledFuture<?> poll = executor.scheduleWithFixedDelay(() -> {
			long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
			// "Answered within elapsedMs - 1" means answered after the read started
			if (info.isLeader() && majorityAnsweredWithin(info, voters, elapsedMs - 1)) {
				this.confirmedReads.increment();
				result.complete(null);
			}
			else if (elapsedMs > this.confirmTimeoutMs) {
				this.refusedReads.increment();
				result.completeExceptionally(new ReadException(division.getMemberId()
						+ ": no majority confirmed this leader within " + this.confirmTimeoutMs + " ms; refusing a read"));
			}
		}, POLL_MS, POLL_MS, TimeUnit.MILLISECONDS);
		result.whenComplete((ignored, failure) -> poll.cancel(false));
		return result;
	}

	long leaseReads() {
		return this.leaseReads.sum();
	}

	long confirmedReads() {
		return this.confirmedReads.sum();
	}

	long refusedReads() {
		return this.refusedReads.sum();
	}

	@Override
	public void close() {
		this.closed = true;
		ScheduledExecutorService executor = this.scheduler.getAndSet(null);
		if (executor != null) {
			executor.shutdownNow();
		}
	}

	private static boolean majorityAnsweredWithin(DivisionInfo info, int voters, long windowMs) {
		if (windowMs <= 0) {
			return false;
		}
		RoleInfoProto role = info.getRoleInfoProto();
		if (!role.hasLeaderInfo()) {
			return false;
		}
		int answered = 1;
		for (ServerRpcProto follower : role.getLeaderInfo().getFollowerInfoList()) {
			if (follower.getLastRpcElapsedTimeMs() < windowMs) {
				answered++;
			}
		}
		return 2 * answered > voters;
	}

	private @Nullable ScheduledExecutorService scheduler() {
		ScheduledExecutorService executor = this.scheduler.get();
		if (executor != null || this.closed) {
			return executor;
		}
		ScheduledExecutorService created = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "tandem-leader-read-guard");
			thread.setDaemon(true);
			return thread;
		});
		if (this.scheduler.compareAndSet(null, created)) {
			if (this.closed) {
				close();
				return null;
			}
			return created;
		}
		created.shutdownNow();
		return this.scheduler.get();
	}

}
