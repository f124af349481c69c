package dev.tandem.actuate;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import dev.tandem.autoconfigure.kafka.ListenerContainerStatus;
import dev.tandem.autoconfigure.kafka.ListenerContainerStatus.State;

/**
 * Health of Tandem's listener containers: DOWN when one was stopped by a failed record (the
 * record, the exception, the property that decides and how to go on under its id) or is stalled
 * (records waiting longer than {@code tandem.listener.stall-threshold} without a commit);
 * otherwise OUT_OF_SERVICE when one is not running (never started, or stopped on purpose);
 * otherwise UP. Each container's status is a detail under its id; no container is UP.
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class ListenerContainersHealthIndicator extends AbstractHealthIndicator {

	private final Supplier<List<ListenerContainerStatus>> statuses;

	/**
	 * Creates the indicator.
	 * @param statuses the containers' statuses, read at each check
	 */
	public ListenerContainersHealthIndicator(Supplier<List<ListenerContainerStatus>> statuses) {
		super("Listener container health check failed");
		this.statuses = statuses;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Status status = Status.UP;
		for (ListenerContainerStatus container : this.statuses.get()) {
			if (container.state() == State.FAILED || container.state() == State.STALLED) {
				status = Status.DOWN;
			}
			else if (container.state() == State.STOPPED && status == Status.UP) {
				status = Status.OUT_OF_SERVICE;
			}
			builder.withDetail(container.id(), details(container));
		}
		builder.status(status);
	}

	private static Map<String, Object> details(ListenerContainerStatus container) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("state", container.state().tag());
		details.put("cluster", container.cluster());
		if (container.groupId() != null) {
			details.put("group", container.groupId());
		}
		if (container.waitingRecords() > 0) {
			details.put("waitingRecords", container.waitingRecords());
			details.put("waitingMs", container.waitingMs());
		}
		ListenerContainerStatus.FailedRecord failed = container.failedRecord();
		if (failed != null) {
			details.put("failedRecord", failed);
		}
		return details;
	}

}
