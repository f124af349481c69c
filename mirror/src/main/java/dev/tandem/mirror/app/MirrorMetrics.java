package dev.tandem.mirror.app;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;

import dev.tandem.mirror.Mirror;
import dev.tandem.mirror.MirrorStatus;

/**
 * The mirror's meters, tagged with {@code source} and {@code targets}:
 * {@code tandem.mirror.records} (record copies committed on the targets),
 * {@code tandem.mirror.records.skipped} (not copied back to their origin),
 * {@code tandem.mirror.transactions}, {@code tandem.mirror.lag} (records not mirrored yet),
 * {@code tandem.mirror.lag.time} (longest partition lag) and
 * {@code tandem.mirror.translation.lag} (longest time a group's translated offsets were behind).
 *
 * @since 0.1.0
 */
public class MirrorMetrics implements MeterBinder {

	private final Mirror mirror;

	/**
	 * Creates the meters' binder.
	 * @param mirror the mirror
	 */
	public MirrorMetrics(Mirror mirror) {
		this.mirror = mirror;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		List<Tag> tags = List.of(Tag.of("source", this.mirror.settings().source()),
				Tag.of("targets", String.join(",", this.mirror.settings().targets())));
		FunctionCounter.builder("tandem.mirror.records", this.mirror, (m) -> m.status().recordsMirrored())
			.description("Record copies the mirror committed on its targets")
			.baseUnit("records")
			.tags(tags)
			.register(registry);
		FunctionCounter.builder("tandem.mirror.records.skipped", this.mirror, (m) -> m.status().recordsSkipped())
			.description("Records not copied to a target because they originate there")
			.baseUnit("records")
			.tags(tags)
			.register(registry);
		FunctionCounter.builder("tandem.mirror.transactions", this.mirror, (m) -> m.status().transactions())
			.description("Mirror transactions committed")
			.tags(tags)
			.register(registry);
		Gauge.builder("tandem.mirror.lag", this.mirror, (m) -> m.status().lagRecords())
			.description("Source records not mirrored yet, over this instance's partitions")
			.baseUnit("records")
			.tags(tags)
			.register(registry);
		TimeGauge.builder("tandem.mirror.lag.time", this.mirror, TimeUnit.MILLISECONDS,
				(m) -> status(m).maxLagMs())
			.description("How long the most lagging partition has been behind the source")
			.tags(tags)
			.register(registry);
		TimeGauge.builder("tandem.mirror.translation.lag", this.mirror, TimeUnit.MILLISECONDS,
				(m) -> status(m).maxTranslationLagMs())
			.description("How long the most lagging group's translated offsets have been behind its source offsets")
			.tags(tags)
			.register(registry);
	}

	private static MirrorStatus status(Mirror mirror) {
		return mirror.status();
	}

}
