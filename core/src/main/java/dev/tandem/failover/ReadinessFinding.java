package dev.tandem.failover;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One broker or topic setting that bounds how fast clients fail over, with its value, a
 * verdict and a recommendation; part of a {@link FailoverReadinessReport}.
 *
 * @param severity the verdict
 * @param setting the Kafka configuration key, such as {@code replica.fetch.backoff.ms}
 * @param value the value as the cluster reports it, or {@code null} if it could not be read
 * @param scope where the value applies, such as {@code brokers 0,1,2} or
 * {@code topic orders}
 * @param recommendation what to set, or {@code keep} when the value is fine
 * @param reason why the setting matters for failover, with the measurement behind it where
 * one exists
 * @author Tandem
 * @since 0.1.0
 */
public record ReadinessFinding(Severity severity, String setting, @Nullable String value, String scope,
		String recommendation, String reason) {

	/**
	 * Create a finding.
	 * @param severity the verdict
	 * @param setting the configuration key
	 * @param value the value or {@code null}
	 * @param scope the scope
	 * @param recommendation the recommendation
	 * @param reason the reason
	 */
	public ReadinessFinding {
		Objects.requireNonNull(severity, "severity must not be null");
		Objects.requireNonNull(setting, "setting must not be null");
		Objects.requireNonNull(scope, "scope must not be null");
		Objects.requireNonNull(recommendation, "recommendation must not be null");
		Objects.requireNonNull(reason, "reason must not be null");
	}

	/**
	 * Verdict of a {@link ReadinessFinding}.
	 *
	 * @since 0.1.0
	 */
	public enum Severity {

		/**
		 * The value does not slow failover down.
		 */
		OK,

		/**
		 * Worth knowing, not worth a warning: the value is a reasonable trade-off.
		 */
		INFO,

		/**
		 * The value makes failover slow or unsafe; Tandem warns at start-up.
		 */
		WARNING,

		/**
		 * The value could not be read (not reported, or not authorized).
		 */
		UNKNOWN

	}

}
