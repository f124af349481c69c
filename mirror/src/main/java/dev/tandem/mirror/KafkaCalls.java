package dev.tandem.mirror;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.common.KafkaFuture;

import dev.tandem.text.DurationText;

/** Waits for admin results, bounded, turning failures into {@link MirrorException}. */
final class KafkaCalls {

	private KafkaCalls() {
	}

	static <T> T get(KafkaFuture<T> future, Duration timeout, String what) {
		try {
			return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException ex) {
			throw new MirrorException("Mirror could not " + what + ": " + ex.getCause(), ex.getCause());
		}
		catch (TimeoutException ex) {
			throw new MirrorException("Mirror could not " + what + " within " + DurationText.of(timeout), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new MirrorException("Interrupted while trying to " + what, ex);
		}
	}

}
