package dev.tandem.transaction;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.text.DurationText;

/**
 * The pause of a consuming loop after a failed poll before its records are delivered again: 100
 * ms, doubling with each failure in a row up to 5 s, back to nothing after a poll that succeeds.
 * Used by {@link CrossClusterProcessor#run} and the mirror's loop, so both back off alike.
 * <p>
 * Not thread-safe: one per loop.
 *
 * @since 0.1.0
 */
public final class FailureBackOff {

	private static final Logger logger = LoggerFactory.getLogger(FailureBackOff.class);

	/** The first pause. */
	public static final Duration FIRST = Duration.ofMillis(100);

	/** The longest pause. */
	public static final Duration MAX = Duration.ofSeconds(5);

	private long currentMs;

	/** A poll succeeded: the next failure pauses {@link #FIRST} again. */
	public void succeeded() {
		this.currentMs = 0;
	}

	/**
	 * Returns the pause after one more failure in a row.
	 * @return {@link #FIRST} to {@link #MAX}
	 */
	public Duration next() {
		this.currentMs = (this.currentMs == 0) ? FIRST.toMillis() : Math.min(this.currentMs * 2, MAX.toMillis());
		return Duration.ofMillis(this.currentMs);
	}

	/**
	 * Logs a failure at WARN and pauses for {@link #next()}.
	 * @param what what failed, for the log ("Mirror a->[b]")
	 * @param failure the failure
	 * @return false if the thread was interrupted while pausing (its interrupt flag is set again):
	 *     the loop should end
	 */
	public boolean failed(String what, Throwable failure) {
		Duration pause = next();
		logger.warn("{} failed ({}); its records are delivered again in {}", what, failure.toString(),
				DurationText.of(pause));
		try {
			Thread.sleep(pause.toMillis());
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
