package dev.tandem.failover;

import java.time.Instant;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The leaders one Kafka client knows, as its {@link LeaderCache} reports them.
 *
 * @param cluster the cluster name the client was instrumented with
 * @param clientId the client's {@code client.id}
 * @param clientType whether the client is a producer or a consumer
 * @param leaderEpochsKnown whether the cache reads leader epochs from the client's metadata
 * (see {@link LeaderCache}); if not, epochs come only from fetched records, if at all
 * @param brokers whether the client's brokers answer its metadata requests (see
 * {@link BrokerReachability})
 * @param lastMetadataUpdate when a broker last answered the client's metadata request, or
 * {@code null} if never or unknown
 * @param unreachableSince when the cache found the brokers {@link BrokerReachability#UNREACHABLE
 * unreachable} (and logged it), if they are; {@code null} otherwise
 * @param partitions the partitions the client has used, ordered by topic and partition
 * @author Tandem
 * @since 0.1.0
 */
public record ClientLeadersDescriptor(String cluster, String clientId, ClientType clientType,
		boolean leaderEpochsKnown, BrokerReachability brokers, @Nullable Instant lastMetadataUpdate,
		@Nullable Instant unreachableSince, List<PartitionLeaderDescriptor> partitions) {

	/**
	 * Create a descriptor.
	 * @param cluster the cluster name
	 * @param clientId the client id
	 * @param clientType the client type
	 * @param leaderEpochsKnown whether epochs are read from client metadata
	 * @param brokers whether the client's brokers answer
	 * @param lastMetadataUpdate the last answered metadata request, or {@code null}
	 * @param unreachableSince when the brokers were found unreachable, or {@code null}
	 * @param partitions the partitions, copied
	 */
	public ClientLeadersDescriptor {
		partitions = List.copyOf(partitions);
	}

}
