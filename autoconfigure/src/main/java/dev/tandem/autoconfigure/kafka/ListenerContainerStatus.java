package dev.tandem.autoconfigure.kafka;

import java.time.Instant;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * What one of Tandem's listener containers is doing, as {@link ListenerContainerMonitor} sees it:
 * rendered by the {@code tandemListeners} health indicator, {@code /actuator/kafkatransactions}
 * and the {@code tandem.listener.containers} meter. Immutable.
 *
 * @param id the listener container's id (the {@code @KafkaListener} id)
 * @param cluster the cluster it consumes from
 * @param groupId its consumer group, or null
 * @param state what it is doing
 * @param waitingRecords records delivered to the listener and not yet committed by its group, as
 *     the last background check counted them; 0 when none or not checked
 * @param waitingMs milliseconds since its group last committed while records waited; 0 when
 *     nothing waits
 * @param failedRecord the record that stopped it, when {@code state} is {@link State#FAILED}
 * @since 0.1.0
 */
public record ListenerContainerStatus(String id, String cluster, @Nullable String groupId, State state,
		long waitingRecords, long waitingMs, @Nullable FailedRecord failedRecord) {

	/**
	 * The state of a listener container.
	 */
	public enum State {

		/** Consuming, and committing whatever waits. */
		RUNNING,

		/** Paused on request ({@code pause()}): consumes nothing until resumed. */
		PAUSED,

		/** Running, but records have waited longer than {@code tandem.listener.stall-threshold} without a commit. */
		STALLED,

		/** Stopped by a record that failed every attempt ({@code tandem.listener.failed-record=stop}). */
		FAILED,

		/** Not running, and not stopped by a failed record (never started, or stopped on purpose). */
		STOPPED;

		/**
		 * Returns the state's lower-case name, as meters and health details spell it.
		 * @return the name
		 */
		public String tag() {
			return name().toLowerCase(Locale.ROOT);
		}

	}

	/**
	 * The record that stopped a container, and how to go on.
	 *
	 * @param topic the record's topic
	 * @param partition its partition
	 * @param offset its offset, not committed: the record is delivered again when the container starts
	 * @param attempts how often it was processed
	 * @param exception the last failure's class and message
	 * @param property the property that decides what happens to such a record
	 * @param remedy how to go on
	 * @param failedAt when the container was stopped
	 */
	public record FailedRecord(String topic, int partition, long offset, int attempts, String exception,
			String property, String remedy, Instant failedAt) {
	}

}
