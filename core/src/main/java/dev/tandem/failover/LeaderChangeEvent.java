package dev.tandem.failover;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A client saw a new leader, or a new leader epoch, for a partition.
 *
 * @param cluster the cluster name
 * @param clientId the client's {@code client.id}
 * @param clientType the kind of client
 * @param topic the topic
 * @param partition the partition number
 * @param previousLeaderId the leader seen before, or {@code null} if none was known
 * @param previousLeaderEpoch the epoch seen before, or {@code null} if unknown
 * @param leaderId the new leader's broker id
 * @param leaderEpoch the new leader epoch, or {@code null} if unknown
 * @param leaderEndpoint the new leader's {@code host:port}
 * @param changedAt when the client's cache saw the change
 * @author Tandem
 * @since 0.1.0
 */
public record LeaderChangeEvent(String cluster, String clientId, ClientType clientType, String topic, int partition,
		@Nullable Integer previousLeaderId, @Nullable Integer previousLeaderEpoch, int leaderId,
		@Nullable Integer leaderEpoch, String leaderEndpoint, Instant changedAt) {

}
