package dev.tandem.autoconfigure.transaction;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.tandem.autoconfigure.TandemProperties.Listener.FailedRecordAction;

/**
 * What a {@code @CrossClusterTransactional} listener does with a record whose processing keeps
 * failing ({@code tandem.listener.*}).
 *
 * @param attempts times a failing record is processed before it is given up, at least 1
 * @param backOff pause between two attempts, not negative
 * @param action what happens to a record that failed every attempt
 * @param deadLetterCluster cluster of the dead-letter topics, or null for the listener's own
 * @param deadLetterSuffix appended to a record's topic to name its dead-letter topic
 * @since 0.1.0
 */
public record FailedRecordPolicy(int attempts, Duration backOff, FailedRecordAction action,
		@Nullable String deadLetterCluster, String deadLetterSuffix) {

	/** Three attempts one second apart, then stop the container. */
	public static final FailedRecordPolicy DEFAULT = new FailedRecordPolicy(3, Duration.ofSeconds(1),
			FailedRecordAction.STOP, null, "-dlt");

	/**
	 * Checks the values.
	 * @throws IllegalArgumentException if attempts is below 1, the back-off is negative or the
	 *     suffix is empty
	 */
	public FailedRecordPolicy {
		Objects.requireNonNull(backOff, "backOff");
		Objects.requireNonNull(action, "action");
		Objects.requireNonNull(deadLetterSuffix, "deadLetterSuffix");
		if (attempts < 1) {
			throw new IllegalArgumentException("attempts must be at least 1 but was " + attempts);
		}
		if (backOff.isNegative()) {
			throw new IllegalArgumentException("backOff must not be negative but was " + backOff);
		}
		if (deadLetterSuffix.isBlank()) {
			throw new IllegalArgumentException("deadLetterSuffix must not be empty");
		}
	}

	/**
	 * Returns the cluster a record consumed from {@code sourceCluster} is dead-lettered to.
	 * @param sourceCluster the listener's cluster
	 * @return the dead-letter cluster
	 */
	public String deadLetterClusterOf(String sourceCluster) {
		return (this.deadLetterCluster != null && !this.deadLetterCluster.isBlank()) ? this.deadLetterCluster
				: sourceCluster;
	}

	/**
	 * Returns the dead-letter topic of a topic.
	 * @param topic the record's topic
	 * @return the topic name with the configured suffix
	 */
	public String deadLetterTopicOf(String topic) {
		return topic + this.deadLetterSuffix;
	}

}
