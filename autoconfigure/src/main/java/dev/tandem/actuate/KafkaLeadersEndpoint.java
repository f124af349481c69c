package dev.tandem.actuate;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

import dev.tandem.failover.ClusterLeadersDescriptor;
import dev.tandem.failover.FailoverReadinessReport;
import dev.tandem.failover.LeaderCacheRegistry;
import dev.tandem.failover.LeadersDescriptor;

/**
 * {@code /actuator/kafkaleaders}: what every Tandem client knows of partition leaders (leader id,
 * leader epoch, endpoint, last change, number of changes, last failover duration; KIP-951), with
 * the failover readiness of each cluster's broker settings. {@code /kafkaleaders/{cluster}} and
 * {@code /kafkaleaders/{cluster}/{topic}} narrow it down (a configured cluster no client has
 * reached yet answers with no clients; clusters are listed in configuration order). Each read first refreshes the caches
 * from the clients' own metadata (no broker round trip), so a leader change shows at once.
 *
 * @since 0.1.0
 */
@Endpoint(id = "kafkaleaders")
public class KafkaLeadersEndpoint {

	private final LeaderCacheRegistry registry;

	private final Supplier<Map<String, FailoverReadinessReport>> readiness;

	private final List<String> clusters;

	/**
	 * Creates the endpoint.
	 * @param registry the leader caches
	 * @param readiness the latest readiness report of each cluster
	 */
	public KafkaLeadersEndpoint(LeaderCacheRegistry registry, Supplier<Map<String, FailoverReadinessReport>> readiness) {
		this(registry, readiness, List.of());
	}

	/**
	 * Creates the endpoint for configured clusters: they are listed in configuration order, and
	 * one that no client has reached yet answers with no clients rather than 404.
	 * @param registry the leader caches
	 * @param readiness the latest readiness report of each cluster
	 * @param clusters the configured cluster names, in configuration order
	 * @since 0.1.0
	 */
	public KafkaLeadersEndpoint(LeaderCacheRegistry registry, Supplier<Map<String, FailoverReadinessReport>> readiness,
			List<String> clusters) {
		this.registry = registry;
		this.readiness = readiness;
		this.clusters = List.copyOf(clusters);
	}

	@ReadOperation
	public LeadersView leaders() {
		this.registry.refresh();
		Map<String, ClusterLeadersDescriptor> known = this.registry.describe().clusters();
		Map<String, ClusterLeadersDescriptor> ordered = new LinkedHashMap<>();
		for (String cluster : this.clusters) {
			ordered.put(cluster, known.getOrDefault(cluster, new ClusterLeadersDescriptor(cluster, List.of())));
		}
		known.forEach(ordered::putIfAbsent);
		Map<String, FailoverReadinessReport> reports = this.readiness.get();
		Map<String, FailoverReadinessReport> orderedReports = new LinkedHashMap<>();
		for (String cluster : this.clusters) {
			FailoverReadinessReport report = reports.get(cluster);
			if (report != null) {
				orderedReports.put(cluster, report);
			}
		}
		reports.forEach(orderedReports::putIfAbsent);
		return new LeadersView(new LeadersDescriptor(ordered), orderedReports);
	}

	@ReadOperation
	public @Nullable ClusterView cluster(@Selector String cluster) {
		this.registry.refresh();
		ClusterLeadersDescriptor descriptor = orEmpty(cluster, this.registry.describe(cluster));
		return (descriptor != null) ? new ClusterView(descriptor, this.readiness.get().get(cluster)) : null;
	}

	@ReadOperation
	public @Nullable ClusterLeadersDescriptor topic(@Selector String cluster, @Selector String topic) {
		this.registry.refresh();
		return orEmpty(cluster, this.registry.describeTopic(cluster, topic));
	}

	/** A configured cluster that no client reached yet has no clients; an unknown one is not found. */
	private @Nullable ClusterLeadersDescriptor orEmpty(String cluster, @Nullable ClusterLeadersDescriptor descriptor) {
		if (descriptor == null && this.clusters.contains(cluster)) {
			return new ClusterLeadersDescriptor(cluster, List.of());
		}
		return descriptor;
	}

	/**
	 * All clusters.
	 *
	 * @param leaders the leader caches by cluster and client
	 * @param readiness failover readiness of each cluster's broker settings
	 */
	public record LeadersView(LeadersDescriptor leaders, Map<String, FailoverReadinessReport> readiness) {
	}

	/**
	 * One cluster.
	 *
	 * @param leaders the leader caches of the cluster's clients
	 * @param readiness failover readiness of its broker settings, if checked
	 */
	public record ClusterView(ClusterLeadersDescriptor leaders, @Nullable FailoverReadinessReport readiness) {
	}

}
