package dev.tandem.test;

import java.time.Duration;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * Polls a condition until it holds or a timeout expires. Exceptions thrown by the condition
 * count as "not yet" and the last one becomes the cause of the timeout failure.
 *
 * @author Tandem
 */
final class Awaits {

	static final Duration POLL_INTERVAL = Duration.ofMillis(50);

	private Awaits() {
	}

	static void until(Duration timeout, Supplier<String> description, Condition condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		@Nullable Exception lastFailure = null;
		while (true) {
			try {
				if (condition.test()) {
					return;
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new EmbeddedKafkaClusterException("Interrupted while waiting until " + description.get(), ex);
			}
			catch (Exception ex) {
				lastFailure = ex;
			}
			if (System.nanoTime() - deadline > 0) {
				String message = "Timed out after " + timeout.toMillis() + " ms waiting until " + description.get();
				throw (lastFailure != null) ? new EmbeddedKafkaClusterException(message, lastFailure)
						: new EmbeddedKafkaClusterException(message);
			}
			sleep(description);
		}
	}

	private static void sleep(Supplier<String> description) {
		try {
			Thread.sleep(POLL_INTERVAL.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new EmbeddedKafkaClusterException("Interrupted while waiting until " + description.get(), ex);
		}
	}

	/**
	 * A condition that may fail while the cluster is converging.
	 */
	@FunctionalInterface
	interface Condition {

		boolean test() throws Exception;

	}

}
