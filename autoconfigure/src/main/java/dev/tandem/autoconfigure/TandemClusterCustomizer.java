package dev.tandem.autoconfigure;

import java.util.Map;
import java.util.Set;

/**
 * Adjusts the client properties of each configured cluster before any client is created (the
 * failover profile is one). Implement as a bean; called once per cluster at start-up.
 *
 * @since 0.1.0
 */
public interface TandemClusterCustomizer {

	/**
	 * Adjusts producer properties.
	 * @param cluster the cluster name
	 * @param config mutable producer properties
	 * @param userKeys keys the user set explicitly for producers of this cluster (keep them)
	 */
	default void customizeProducer(String cluster, Map<String, Object> config, Set<String> userKeys) {
	}

	/**
	 * Adjusts consumer properties.
	 * @param cluster the cluster name
	 * @param config mutable consumer properties
	 * @param userKeys keys the user set explicitly for consumers of this cluster (keep them)
	 */
	default void customizeConsumer(String cluster, Map<String, Object> config, Set<String> userKeys) {
	}

	/**
	 * Adjusts admin client properties.
	 * @param cluster the cluster name
	 * @param config mutable admin properties
	 * @param userKeys keys the user set explicitly for admin clients of this cluster (keep them)
	 */
	default void customizeAdmin(String cluster, Map<String, Object> config, Set<String> userKeys) {
	}

}
