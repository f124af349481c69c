package dev.tandem.test;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.apache.kafka.common.KafkaFuture;

/**
 * Waits for the result of an admin call on a test cluster, turning every failure into an
 * {@link EmbeddedKafkaClusterException} that names the action and the cluster.
 *
 * @author Tandem
 */
final class KafkaFutures {

	private KafkaFutures() {
	}

	static <T> T get(KafkaFuture<T> future, Duration timeout, String cluster, Supplier<String> action) {
		try {
			return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new EmbeddedKafkaClusterException(
					"Interrupted while trying to " + action.get() + " on cluster '" + cluster + "'", ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new EmbeddedKafkaClusterException(
					"Failed to " + action.get() + " on cluster '" + cluster + "': " + cause.getMessage(), cause);
		}
		catch (TimeoutException ex) {
			throw new EmbeddedKafkaClusterException("Timed out after " + timeout.toMillis() + " ms trying to "
					+ action.get() + " on cluster '" + cluster + "'", ex);
		}
	}

}
