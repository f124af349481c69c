package dev.tandem.autoconfigure.failover;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.autoconfigure.TandemClusters;
import dev.tandem.failover.FailoverReadiness;
import dev.tandem.failover.FailoverReadinessReport;
import dev.tandem.clients.BoundedAdmin;

/**
 * Reads, once per cluster, the broker settings that bound failover speed (see {@link dev.tandem.failover.FailoverReadiness}:
 * {@code replica.fetch.backoff.ms}, {@code broker.session.timeout.ms}, ...), logs a WARN with the
 * recommendations when they make failover slow, and keeps the reports for
 * {@code /actuator/kafkaleaders}. A cluster that cannot be read is logged and skipped: the check
 * never stops the app. Thread-safe.
 *
 * @since 0.1.0
 */
public class FailoverReadinessChecks {

	private static final Logger logger = LoggerFactory.getLogger(FailoverReadinessChecks.class);

	private final TandemClusters clusters;

	private final Duration timeout;

	private final Map<String, FailoverReadinessReport> reports = new LinkedHashMap<>();

	/**
	 * Creates the checks.
	 * @param clusters the clusters
	 * @param timeout how long one cluster's check may take
	 */
	public FailoverReadinessChecks(TandemClusters clusters, Duration timeout) {
		this.clusters = clusters;
		this.timeout = timeout;
	}

	/**
	 * Checks every cluster (again) and logs the outcome.
	 */
	public void checkAll() {
		for (String cluster : this.clusters.names()) {
			FailoverReadinessReport report = check(cluster);
			if (report != null) {
				synchronized (this.reports) {
					this.reports.put(cluster, report);
				}
				if (!report.ready()) {
					logger.warn("Broker settings of cluster '{}' make leader failover slow: {}", cluster, report.summary());
				}
			}
		}
	}

	private @Nullable FailoverReadinessReport check(String cluster) {
		Admin admin = null;
		try {
			admin = BoundedAdmin.create(this.clusters.adminConfig(cluster), this.timeout);
			return new FailoverReadiness(cluster, admin).check(this.timeout);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not read the failover-related broker settings of cluster '{}': {}", cluster, ex.toString());
			return null;
		}
		finally {
			if (admin != null) {
				admin.close(Duration.ofSeconds(1));
			}
		}
	}

	/**
	 * Returns the latest report of each checked cluster.
	 * @return reports by cluster name
	 */
	public Map<String, FailoverReadinessReport> reports() {
		synchronized (this.reports) {
			return Map.copyOf(this.reports);
		}
	}

}
