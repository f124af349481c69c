package dev.tandem.autoconfigure;

import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;

import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.clients.ClusterClients;

/**
 * The configured Kafka clusters and the client properties of each, resolved once from
 * {@code tandem.clusters.*} (with the failover profile applied where enabled). Immutable and
 * thread-safe.
 *
 * @since 0.1.0
 */
public final class TandemClusters {

	private final Map<String, Resolved> clusters;

	/**
	 * Resolves the clusters of the given properties.
	 * @param properties the Tandem properties
	 * @param customizers applied to every cluster's client properties, in order
	 * @throws TandemConfigurationException if a cluster name is invalid or has no bootstrap servers
	 */
	public TandemClusters(TandemProperties properties, List<TandemClusterCustomizer> customizers) {
		Map<String, Resolved> resolved = new LinkedHashMap<>();
		properties.getClusters().forEach((name, cluster) -> {
			if (!ClusterClients.isValidName(name)) {
				throw new TandemConfigurationException("tandem.clusters." + name,
						"Cluster name '" + name + "' is not valid.",
						"Use " + ClusterClients.NAME_RULE + " in cluster names under tandem.clusters.");
			}
			if (cluster.getBootstrapServers().stream().allMatch(String::isBlank)) {
				throw new TandemConfigurationException("tandem.clusters." + name + ".bootstrap-servers",
						"Cluster '" + name + "' has no bootstrap servers.",
						"Set tandem.clusters." + name + ".bootstrap-servers to the cluster's host:port list.");
			}
			Map<String, Object> common = new HashMap<>(cluster.getProperties());
			common.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, String.join(",", cluster.getBootstrapServers()));
			Map<String, Object> producer = merged(common, cluster.getProducer());
			Map<String, Object> consumer = merged(common, cluster.getConsumer());
			Map<String, Object> admin = merged(common, cluster.getAdmin());
			for (TandemClusterCustomizer customizer : customizers) {
				try {
					customizer.customizeProducer(name, producer, cluster.getProducer().keySet());
					customizer.customizeConsumer(name, consumer, cluster.getConsumer().keySet());
					customizer.customizeAdmin(name, admin, cluster.getAdmin().keySet());
				}
				catch (IllegalArgumentException ex) {
					throw new TandemConfigurationException("tandem.clusters." + name, "The client properties of cluster '"
							+ name + "' contradict each other: " + ex.getMessage(),
							"Fix tandem.clusters." + name + ".properties / .producer / .consumer, or set "
									+ "tandem.failover.enabled=false to configure every client setting yourself.");
				}
			}
			resolved.put(name, new Resolved(Map.copyOf(common), Map.copyOf(producer), Map.copyOf(consumer),
					Map.copyOf(admin)));
		});
		this.clusters = Collections.unmodifiableMap(resolved);
	}

	private static Map<String, Object> merged(Map<String, Object> common, Map<String, String> specific) {
		Map<String, Object> result = new HashMap<>(common);
		result.putAll(specific);
		return result;
	}

	/**
	 * Returns the cluster names in configuration order.
	 * @return the names
	 */
	public List<String> names() {
		return List.copyOf(this.clusters.keySet());
	}

	/**
	 * Returns properties every client of the cluster gets (bootstrap servers, security).
	 * @param cluster the cluster name
	 * @return an immutable map
	 * @throws UnknownClusterException if no such cluster is configured
	 */
	public Map<String, Object> commonConfig(String cluster) {
		return get(cluster).common();
	}

	/**
	 * Returns the producer properties of a cluster.
	 * @param cluster the cluster name
	 * @return an immutable map
	 * @throws UnknownClusterException if no such cluster is configured
	 */
	public Map<String, Object> producerConfig(String cluster) {
		return get(cluster).producer();
	}

	/**
	 * Returns the consumer properties of a cluster.
	 * @param cluster the cluster name
	 * @return an immutable map
	 * @throws UnknownClusterException if no such cluster is configured
	 */
	public Map<String, Object> consumerConfig(String cluster) {
		return get(cluster).consumer();
	}

	/**
	 * Returns the admin client properties of a cluster.
	 * @param cluster the cluster name
	 * @return an immutable map
	 * @throws UnknownClusterException if no such cluster is configured
	 */
	public Map<String, Object> adminConfig(String cluster) {
		return get(cluster).admin();
	}

	private Resolved get(String cluster) {
		Resolved resolved = this.clusters.get(cluster);
		if (resolved == null) {
			throw new UnknownClusterException(cluster, names());
		}
		return resolved;
	}

	private record Resolved(Map<String, Object> common, Map<String, Object> producer, Map<String, Object> consumer,
			Map<String, Object> admin) {
	}

	/**
	 * A cluster name that is not configured under {@code tandem.clusters}.
	 *
	 * @since 0.1.0
	 */
	public static class UnknownClusterException extends TandemConfigurationException {

		private static final long serialVersionUID = 1L;

		public UnknownClusterException(String cluster, List<String> known) {
			super("tandem.clusters." + cluster, "Kafka cluster '" + cluster + "' is not configured; configured clusters: "
					+ known + ".", "Add tandem.clusters." + cluster + ".bootstrap-servers, or use one of " + known + ".");
		}

	}

}
