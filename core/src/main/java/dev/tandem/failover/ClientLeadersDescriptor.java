package dev.tandem.failover;

import java.util.List;

/**
 * The leaders one Kafka client knows, as its {@link LeaderCache} reports them.
 *
 * @param cluster the cluster name the client was instrumented with
 * @param clientId the client's {@code client.id}
 * @param clientType whether the client is a producer or a consumer
 * @param leaderEpochsKnown whether the cache reads leader epochs from the client's metadata
 * (see {@link LeaderCache}); if not, epochs come only from fetched records, if at all
 * @param partitions the partitions the client has used, ordered by topic and partition
 * @author Tandem
 * @since 0.1.0
 */
public record ClientLeadersDescriptor(String cluster, String clientId, ClientType clientType,
		boolean leaderEpochsKnown, List<PartitionLeaderDescriptor> partitions) {

	/**
	 * Create a descriptor.
	 * @param cluster the cluster name
	 * @param clientId the client id
	 * @param clientType the client type
	 * @param leaderEpochsKnown whether epochs are read from client metadata
	 * @param partitions the partitions, copied
	 */
	public ClientLeadersDescriptor {
		partitions = List.copyOf(partitions);
	}

}
