package dev.tandem.failover;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The leaders known to the clients of every cluster, keyed by cluster name: what
 * {@code /actuator/kafkaleaders} renders.
 *
 * @param clusters the clusters by name, in the order their first client was created
 * @author Tandem
 * @since 0.1.0
 */
public record LeadersDescriptor(Map<String, ClusterLeadersDescriptor> clusters) {

	/**
	 * Create a descriptor.
	 * @param clusters the clusters, copied preserving order
	 */
	public LeadersDescriptor {
		clusters = Collections.unmodifiableMap(new LinkedHashMap<>(clusters));
	}

}
