package dev.tandem.test;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The broker settings shared by {@link EmbeddedKafkaClusters} and {@link KafkaProcessCluster}:
 * what a small test cluster needs to behave like a production one (replicated internal
 * topics, no auto-created topics, no unclean elections) and to fail over quickly
 * ({@code broker.session.timeout.ms=2000}, {@code replica.fetch.backoff.ms=50}).
 *
 * @author Tandem
 */
final class BrokerDefaults {

	private BrokerDefaults() {
	}

	/**
	 * Return the defaults for a cluster of {@code brokers} brokers.
	 * @param brokers the number of brokers, 1 or more
	 * @param minInSyncReplicas {@code min.insync.replicas}, or {@code null} for
	 * {@code min(2, brokers)}; capped at {@code brokers}
	 * @return a new, mutable map of Kafka server properties
	 */
	static Map<String, Object> of(int brokers, @Nullable Integer minInSyncReplicas) {
		String replicationFactor = String.valueOf(Math.min(3, brokers));
		String minIsr = String.valueOf(Math.min(2, brokers));
		String minInSync = (minInSyncReplicas != null) ? String.valueOf(Math.min(minInSyncReplicas, brokers)) : minIsr;
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("offsets.topic.replication.factor", replicationFactor);
		properties.put("offsets.topic.num.partitions", "3");
		properties.put("transaction.state.log.replication.factor", replicationFactor);
		properties.put("transaction.state.log.min.isr", minIsr);
		properties.put("transaction.state.log.num.partitions", "3");
		properties.put("share.coordinator.state.topic.replication.factor", replicationFactor);
		properties.put("share.coordinator.state.topic.min.isr", minIsr);
		properties.put("default.replication.factor", replicationFactor);
		properties.put("min.insync.replicas", minInSync);
		properties.put("group.initial.rebalance.delay.ms", "0");
		properties.put("broker.session.timeout.ms", "2000");
		properties.put("broker.heartbeat.interval.ms", "500");
		properties.put("replica.fetch.backoff.ms", "50");
		properties.put("auto.create.topics.enable", "false");
		properties.put("unclean.leader.election.enable", "false");
		properties.put("unstable.api.versions.enable", "false");
		properties.put("unstable.feature.versions.enable", "false");
		return properties;
	}

}
