package dev.tandem.actuate;

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
 * {@code /kafkaleaders/{cluster}/{topic}} narrow it down. Each read first refreshes the caches
 * from the clients' own metadata (no broker round trip), so a leader change shows at once.
 *
 * @since 0.1.0
 */
@Endpoint(id = "kafkaleaders")
public class KafkaLeadersEndpoint {

	private final LeaderCacheRegistry registry;

	private final Supplier<Map<String, FailoverReadinessReport>> readiness;

	/**
	 * Creates the endpoint.
	 * @param registry the leader caches
	 * @param readiness the latest readiness report of each cluster
	 */
	public KafkaLeadersEndpoint(LeaderCacheRegistry registry, Supplier<Map<String, FailoverReadinessReport>> readiness) {
		this.registry = registry;
		this.readiness = readiness;
	}

	@ReadOperation
	public LeadersView leaders() {
		this.registry.refresh();
		return new LeadersView(this.registry.describe(), this.readiness.get());
	}

	@ReadOperation
	public @Nullable ClusterView cluster(@Selector String cluster) {
		this.registry.refresh();
		ClusterLeadersDescriptor descriptor = this.registry.describe(cluster);
		return (descriptor != null) ? new ClusterView(descriptor, this.readiness.get().get(cluster)) : null;
	}

	@ReadOperation
	public @Nullable ClusterLeadersDescriptor topic(@Selector String cluster, @Selector String topic) {
		this.registry.refresh();
		return this.registry.describeTopic(cluster, topic);
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
