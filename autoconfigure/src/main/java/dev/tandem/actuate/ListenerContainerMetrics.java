package dev.tandem.actuate;

import java.util.List;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import dev.tandem.autoconfigure.kafka.ListenerContainerStatus;
import dev.tandem.autoconfigure.kafka.ListenerContainerStatus.State;

/**
 * Micrometer gauges of Tandem's listener containers: {@code tandem.listener.containers} (tag
 * {@code state}: running, paused, stalled, failed, stopped), the number of containers in each
 * state, and {@code tandem.listener.records.waiting}, records delivered and not yet committed
 * as the last stall check counted them. Alert on failed or stalled above 0. The gauges hold the
 * statuses' supplier strongly (a lambda nothing else keeps).
 *
 * @since 0.1.0
 */
public final class ListenerContainerMetrics {

	private ListenerContainerMetrics() {
	}

	/**
	 * Registers the gauges.
	 * @param registry the registry
	 * @param statuses the containers' statuses, read at each scrape
	 */
	public static void bindTo(MeterRegistry registry, Supplier<List<ListenerContainerStatus>> statuses) {
		for (State state : State.values()) {
			Gauge.builder("tandem.listener.containers", statuses,
					(s) -> s.get().stream().filter((status) -> status.state() == state).count())
				.description("Tandem listener containers in a state")
				.tag("state", state.tag())
				.strongReference(true)
				.register(registry);
		}
		Gauge.builder("tandem.listener.records.waiting", statuses,
				(s) -> s.get().stream().mapToLong(ListenerContainerStatus::waitingRecords).sum())
			.description("Records delivered to Tandem listeners and not yet committed, at the last stall check")
			.baseUnit("records")
			.strongReference(true)
			.register(registry);
	}

}
