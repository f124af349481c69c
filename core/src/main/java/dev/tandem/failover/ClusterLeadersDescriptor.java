package dev.tandem.failover;

import java.util.List;

/**
 * The leaders known to the clients of one cluster.
 *
 * @param cluster the cluster name
 * @param clients the clients, in the order they were created
 * @author Tandem
 * @since 0.1.0
 */
public record ClusterLeadersDescriptor(String cluster, List<ClientLeadersDescriptor> clients) {

	/**
	 * Create a descriptor.
	 * @param cluster the cluster name
	 * @param clients the clients, copied
	 */
	public ClusterLeadersDescriptor {
		clients = List.copyOf(clients);
	}

}
