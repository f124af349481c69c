package dev.tandem.coordinator.client;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.TransferLeadershipException;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.util.JavaUtils;
import org.apache.ratis.util.TimeDuration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's retry policy: exponential backoff (the delegate) except where the failure
 * itself says where the leader went, in the spirit of KIP-951 (a NotLeader answer carries the
 * new leader, so the client need not wait before asking it):
 * <ul>
 * <li>a NotLeader reply that names the leader: Ratis retries on the named peer at once
 * (it ignores this policy's sleep for such replies); counted as a redirect;</li>
 * <li>an {@link AlreadyClosedException}, up to once per peer of the group: a leader that steps
 * down (for example after a leadership transfer) closes its clients' request streams, so the
 * request is retried at once on another peer, which is the leader or names it. Measured:
 * without this, the first write after a transfer waited for one backoff (1.6 s with a 1 s base
 * sleep);</li>
 * <li>a leader change in progress ({@link LeaderNotReadyException}: a new leader that has not
 * yet committed an entry of its term, Raft thesis §6.4; {@link LeaderSteppingDownException},
 * {@link TransferLeadershipException}, or NotLeader without a hint during an election): up to
 * {@value #LEADER_CHANGE_RETRIES} retries {@value #LEADER_CHANGE_PAUSE_MS} ms apart, since
 * the change normally completes within a round trip or an election timeout. Measured: with
 * the backoff instead, the first write after a transfer took 3.6 s in 1 of 6 runs (1 s base
 * sleep: leader not ready, then a closed stream);</li>
 * <li>anything else (timeouts, unreachable peers) and the above once their quick retries are
 * used up: the delegate's backoff.</li>
 * </ul>
 * Quick retries do not use up the delegate's attempts: it is asked with the attempt count less
 * the quick retries of the failure's kind (exact when one kind of leader-change failure
 * preceded the backoff; the caller's timeout bounds every request in any case).
 * Thread-safe.
 */
final class CoordinatorRetryPolicy implements RetryPolicy {

	private static final Logger logger = LoggerFactory.getLogger(CoordinatorRetryPolicy.class);

	/** Pause between quick retries while the leader changes, in ms. */
	static final long LEADER_CHANGE_PAUSE_MS = 25;

	/** Quick retries of one request per kind of leader-change failure. */
	static final int LEADER_CHANGE_RETRIES = 40;

	private static final Action LEADER_CHANGE_PAUSE = () -> TimeDuration.valueOf(LEADER_CHANGE_PAUSE_MS,
			TimeUnit.MILLISECONDS);

	private final RetryPolicy backoff;

	private final int maxAttempts;

	private final int peers;

	private final LongAdder redirects = new LongAdder();

	private final LongAdder streamsClosed = new LongAdder();

	private final LongAdder leaderChanges = new LongAdder();

	private final LongAdder otherFailures = new LongAdder();

	private final LongAdder backoffRetries = new LongAdder();

	CoordinatorRetryPolicy(RetryPolicy backoff, int maxAttempts, int peers) {
		this.backoff = backoff;
		this.maxAttempts = maxAttempts;
		this.peers = Math.max(1, peers);
	}

	@Override
	public Action handleAttemptFailure(Event event) {
		Throwable cause = (event.getCause() != null) ? JavaUtils.unwrapCompletionException(event.getCause()) : null;
		if (logger.isDebugEnabled()) {
			logger.debug("Coordinator request attempt {} failed: {}", event.getAttemptCount(), String.valueOf(cause));
		}
		if (cause instanceof NotLeaderException notLeader && notLeader.getSuggestedLeader() != null) {
			// Ratis retries on the named leader at once, whatever the action's sleep
			this.redirects.increment();
			return this.backoff.handleAttemptFailure(event);
		}
		if (cause instanceof AlreadyClosedException) {
			this.streamsClosed.increment();
			if (event.getCauseCount() <= this.peers) {
				return RETRY_WITHOUT_SLEEP_ACTION;
			}
			return backoff(event, this.peers);
		}
		if (isLeaderChange(cause)) {
			this.leaderChanges.increment();
			if (event.getCauseCount() <= LEADER_CHANGE_RETRIES) {
				return LEADER_CHANGE_PAUSE;
			}
			return backoff(event, LEADER_CHANGE_RETRIES);
		}
		this.otherFailures.increment();
		return backoff(event, 0);
	}

	/**
	 * Asks the backoff, not counting the quick retries of this kind among the attempts: they
	 * come on top of {@code maxAttempts} (bounded per kind, and by the caller's timeout).
	 */
	private Action backoff(Event event, int quickRetries) {
		int attempts = Math.max(1, event.getAttemptCount() - quickRetries);
		Action action = this.backoff.handleAttemptFailure(new Event() {

			@Override
			public int getAttemptCount() {
				return attempts;
			}

			@Override
			public int getCauseCount() {
				return event.getCauseCount();
			}

			@Override
			public Throwable getCause() {
				return event.getCause();
			}

		});
		if (action.shouldRetry()) {
			this.backoffRetries.increment();
		}
		return action;
	}


	private static boolean isLeaderChange(@Nullable Throwable cause) {
		return cause instanceof LeaderNotReadyException || cause instanceof LeaderSteppingDownException
				|| cause instanceof TransferLeadershipException
				|| (cause instanceof NotLeaderException notLeader && notLeader.getSuggestedLeader() == null);
	}

	long redirects() {
		return this.redirects.sum();
	}

	long backoffRetries() {
		return this.backoffRetries.sum();
	}

	long otherFailures() {
		return this.streamsClosed.sum() + this.leaderChanges.sum() + this.otherFailures.sum();
	}

	@Override
	public String toString() {
		return "CoordinatorRetryPolicy(" + this.backoff + ")";
	}

}
