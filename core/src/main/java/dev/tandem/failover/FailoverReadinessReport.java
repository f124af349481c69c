package dev.tandem.failover;

import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;

import dev.tandem.failover.ReadinessFinding.Severity;

/**
 * The result of a {@link FailoverReadiness} check of one cluster: a finding per setting (and
 * per group of brokers or topic that shares a value).
 *
 * @param cluster the cluster name
 * @param checkedAt when the settings were read
 * @param findings the findings, in the order the settings are checked
 * @author Tandem
 * @since 0.1.0
 */
public record FailoverReadinessReport(String cluster, Instant checkedAt, List<ReadinessFinding> findings) {

	/**
	 * Create a report.
	 * @param cluster the cluster name
	 * @param checkedAt the time of the check
	 * @param findings the findings, copied
	 */
	public FailoverReadinessReport {
		findings = List.copyOf(findings);
	}

	/**
	 * Return whether no finding is a {@link Severity#WARNING warning}.
	 * @return whether the cluster's settings allow fast, safe failover as far as they could
	 * be read
	 * @since 0.1.0
	 */
	public boolean ready() {
		return warnings().isEmpty();
	}

	/**
	 * Return the findings that are warnings.
	 * @return the warnings, possibly empty
	 * @since 0.1.0
	 */
	public List<ReadinessFinding> warnings() {
		return findings(Severity.WARNING);
	}

	/**
	 * Return the findings of one severity.
	 * @param severity the severity
	 * @return the findings, possibly empty
	 * @since 0.1.0
	 */
	public List<ReadinessFinding> findings(Severity severity) {
		return this.findings.stream().filter((finding) -> finding.severity() == severity).toList();
	}

	/**
	 * Return the finding for a setting and scope.
	 * @param setting the configuration key
	 * @return the findings for the key (one per scope), possibly empty
	 * @since 0.1.0
	 */
	public List<ReadinessFinding> findings(String setting) {
		return this.findings.stream().filter((finding) -> finding.setting().equals(setting)).toList();
	}

	/**
	 * Return a one-line-per-warning summary for a start-up log message.
	 * @return the summary, or an "all good" sentence when {@link #ready()}
	 * @since 0.1.0
	 */
	public String summary() {
		if (ready()) {
			return "Kafka cluster '" + this.cluster + "': broker settings allow fast failover";
		}
		return warnings().stream()
			.map((finding) -> finding.setting() + "=" + finding.value() + " (" + finding.scope() + "): "
					+ finding.recommendation() + ". " + finding.reason())
			.collect(Collectors.joining(System.lineSeparator() + "  ",
					"Kafka cluster '" + this.cluster + "' has settings that slow down failover:"
							+ System.lineSeparator() + "  ",
					""));
	}

}
