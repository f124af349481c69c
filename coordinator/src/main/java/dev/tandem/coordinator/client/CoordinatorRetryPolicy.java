package dev.tandem.coordinator.client;

import java.util.concurrent.atomic.LongAdder;

import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.util.JavaUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's retry policy: exponential backoff (the delegate) except where the failure
 * itself says where the leader went, in the spirit of KIP-951 (a NotLeader answer carries the
 * new leader, so the client need not wait before asking it):
 * <ul>
 * <li>a NotLeader reply that names the leader: Ratis retries on the named peer at once
 * (it ignores this policy's sleep for such replies); counted as a redirect;</li>
 * <li>the first {@link AlreadyClosedException} of a request: a leader that steps down (for
 * example after a leadership transfer) closes its clients' request streams, so the request is
 * retried at once on another peer, which is the leader or names it. Measured: without this,
 * the first write after a transfer waited for one backoff (1.6 s with a 1 s base sleep);</li>
 * <li>anything else (timeouts, unreachable peers, NotLeader without a hint during an
 * election, leader not ready): the delegate's backoff.</li>
 * </ul>
 * Thread-safe.
 */
final class CoordinatorRetryPolicy implements RetryPolicy {

	private static final Logger logger = LoggerFactory.getLogger(CoordinatorRetryPolicy.class);

	private final RetryPolicy backoff;

	private final int maxAttempts;

	private final LongAdder redirects = new LongAdder();

	private final LongAdder streamsClosed = new LongAdder();

	private final LongAdder otherFailures = new LongAdder();

	CoordinatorRetryPolicy(RetryPolicy backoff, int maxAttempts) {
		this.backoff = backoff;
		this.maxAttempts = maxAttempts;
	}

	@Override
	public Action handleAttemptFailure(Event event) {
		Throwable cause = (event.getCause() != null) ? JavaUtils.unwrapCompletionException(event.getCause()) : null;
		if (logger.isDebugEnabled()) {
			logger.debug("Coordinator request attempt {} failed: {}", event.getAttemptCount(), String.valueOf(cause));
		}
		if (cause instanceof NotLeaderException notLeader && notLeader.getSuggestedLeader() != null) {
			this.redirects.increment();
		}
		else if (cause instanceof AlreadyClosedException) {
			this.streamsClosed.increment();
			if (firstOfItsKind(event) && event.getAttemptCount() < this.maxAttempts) {
				return RETRY_WITHOUT_SLEEP_ACTION;
			}
		}
		else {
			this.otherFailures.increment();
		}
		return this.backoff.handleAttemptFailure(event);
	}

	private static boolean firstOfItsKind(Event event) {
		return event.getCauseCount() <= 1;
	}

	long redirects() {
		return this.redirects.sum();
	}

	long otherFailures() {
		return this.streamsClosed.sum() + this.otherFailures.sum();
	}

	@Override
	public String toString() {
		return "CoordinatorRetryPolicy(" + this.backoff + ")";
	}

}
