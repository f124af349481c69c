package dev.tandem.mirror.app;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import dev.tandem.mirror.Mirror;
import dev.tandem.mirror.MirrorStatus;

/**
 * Health of the mirror: DOWN when its thread stopped (a heuristic outcome), when more records
 * than {@code tandem.mirror.health.max-lag-records} wait to be mirrored, or when a partition has
 * lagged for longer than {@code tandem.mirror.health.max-lag}; UP otherwise, with the lag and
 * whether the instance stands by while instances keeping their positions in the other place run
 * ({@link Mirror#isStandingBy()}; its lag then grows until they stopped).
 *
 * @since 0.1.0
 */
public class MirrorHealthIndicator extends AbstractHealthIndicator {

	private final Mirror mirror;

	private final MirrorProperties.Health thresholds;

	/**
	 * Creates the indicator.
	 * @param mirror the mirror
	 * @param thresholds the lag thresholds
	 */
	public MirrorHealthIndicator(Mirror mirror, MirrorProperties.Health thresholds) {
		super("Tandem mirror health check failed");
		this.mirror = mirror;
		this.thresholds = thresholds;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		MirrorStatus status = this.mirror.status();
		boolean lagging = status.lagRecords() > this.thresholds.getMaxLagRecords()
				|| status.maxLagMs() > this.thresholds.getMaxLag().toMillis();
		if (!this.mirror.isRunning()) {
			builder.down().withDetail("stopped", String.valueOf(this.mirror.failure()));
		}
		else if (lagging) {
			builder.down();
		}
		else {
			builder.up();
		}
		builder.withDetail("source", status.source())
			.withDetail("targets", status.targets())
			.withDetail("lagRecords", status.lagRecords())
			.withDetail("maxLagMs", status.maxLagMs())
			.withDetail("maxLagRecordsThreshold", this.thresholds.getMaxLagRecords())
			.withDetail("maxLagThresholdMs", this.thresholds.getMaxLag().toMillis())
			.withDetail("maxTranslationLagMs", status.maxTranslationLagMs())
			.withDetail("standingBy", this.mirror.isStandingBy());
	}

}
