package dev.tandem.autoconfigure.kafka;

import java.util.List;

/**
 * The status of each of Tandem's listener containers; the actuator's view of
 * {@link ListenerContainerMonitor}, free of Spring Kafka types.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ListenerContainerStatuses {

	/**
	 * Returns the status of each of Tandem's listener containers. Thread-safe.
	 * @return the statuses, in the listener registry's order
	 */
	List<ListenerContainerStatus> statuses();

}
