package dev.tandem.transaction;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.text.DurationText;

/**
 * The manager's background thread for work that must eventually succeed: resolving in-doubt
 * transactions ({@link InDoubtQueue}) and start-up housekeeping of a cluster that was down (its
 * marker topic). A task that throws runs again after a delay that starts at the recovery
 * interval and doubles up to 30 s, until it succeeds or the manager closes.
 * <p>
 * Thread-safe; tasks run on one daemon thread, never on the caller's unless asked.
 */
final class BackgroundRetries implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(BackgroundRetries.class);

	private static final Duration MAX_DELAY = Duration.ofSeconds(30);

	private final ScheduledExecutorService scheduler;

	private final Duration firstDelay;

	private volatile boolean closed;

	/**
	 * @param owner the instance's owner id, in the thread's name
	 * @param firstDelay the recovery interval: the first delay between attempts
	 */
	BackgroundRetries(String owner, Duration firstDelay) {
		this.firstDelay = firstDelay;
		this.scheduler = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "tandem-recovery-" + owner);
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Runs a task after the recovery interval and, while it throws, again with a doubling delay.
	 * @param what what the task does, for the log
	 * @param task the task; throws to be tried again
	 */
	void untilDone(String what, Runnable task) {
		later(what, task, () -> {
		}, this.firstDelay);
	}

	/**
	 * Runs a task now, on the caller's thread, and, while it throws, again in the background.
	 * @param what what the task does, for the log
	 * @param task the task; throws to be tried again
	 * @param whenClosed run once instead of a next attempt when the manager closed
	 */
	void nowAndUntilDone(String what, Runnable task, Runnable whenClosed) {
		attempt(what, task, whenClosed, this.firstDelay);
	}

	boolean isClosed() {
		return this.closed;
	}

	private void attempt(String what, Runnable task, Runnable whenClosed, Duration nextDelay) {
		try {
			task.run();
		}
		catch (RuntimeException ex) {
			if (this.closed) {
				whenClosed.run();
				return;
			}
			logger.warn("{} failed ({}); retrying in {}", what, ex.toString(), DurationText.of(nextDelay));
			later(what, task, whenClosed, nextDelay);
		}
	}

	private void later(String what, Runnable task, Runnable whenClosed, Duration delay) {
		Duration after = delay.multipliedBy(2);
		Duration next = (after.compareTo(MAX_DELAY) > 0) ? MAX_DELAY : after;
		try {
			this.scheduler.schedule(() -> attempt(what, task, whenClosed, next), delay.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (RejectedExecutionException rejected) {
			whenClosed.run();
		}
	}

	/** Stops the thread; tasks waiting for their next attempt are not run again. */
	@Override
	public void close() {
		this.closed = true;
		this.scheduler.shutdownNow();
	}

}
