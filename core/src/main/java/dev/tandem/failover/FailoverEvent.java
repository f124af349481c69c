package dev.tandem.failover;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A client succeeded on a partition's new leader for the first time: a failover completed.
 *
 * @param cluster the cluster name
 * @param clientId the client's {@code client.id}
 * @param clientType the kind of client
 * @param topic the topic
 * @param partition the partition number
 * @param previousLeaderId the leader of the last success before, or {@code null} if unknown
 * @param leaderId the new leader's broker id
 * @param leaderEpoch the new leader epoch, or {@code null} if unknown
 * @param duration from the first failed or retried attempt (estimated as described on
 * {@link LeaderCache}) to this first success, zero or positive
 * @param completedAt when the first success on the new leader was seen
 * @author Tandem
 * @since 0.1.0
 */
public record FailoverEvent(String cluster, String clientId, ClientType clientType, String topic, int partition,
		@Nullable Integer previousLeaderId, int leaderId, @Nullable Integer leaderEpoch, Duration duration,
		Instant completedAt) {

}
