package dev.tandem.failover;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * What one client knows about the leader of one partition, as a {@link LeaderCache} reports
 * it: an immutable snapshot suitable for rendering as JSON.
 *
 * @param topic the topic
 * @param partition the partition number
 * @param leaderId the leader's broker id, or {@code null} if the client knows no leader
 * @param leaderEpoch the leader epoch, or {@code null} if the client does not know it
 * @param leaderEndpoint the leader's {@code host:port}, or {@code null} without a leader
 * @param leaderRack the leader's rack, or {@code null} if none is configured or no leader is
 * known
 * @param lastLeaderChange when the client last saw the leader (or its epoch) change, or
 * {@code null} if it has seen only one leader
 * @param leaderChanges how many leader changes the client has seen, 0 or more
 * @param lastFailoverDuration how long the last failover took for this client: from the first
 * failed or retried attempt (estimated, see {@link LeaderCache}) to the first success on the
 * new leader; {@code null} before the first failover
 * @param lastFailover when the last failover completed, or {@code null}
 * @param failovers how many failovers completed, 0 or more
 * @param lastSuccess when the client last succeeded on this partition (a record acknowledged
 * or records fetched), or {@code null}
 * @param successes acknowledged records (producers) or non-empty fetches (consumers), 0 or
 * more
 * @param failures records whose send failed for good (producers), 0 or more
 * @param lastError the last send failure as {@code ExceptionClass: message}, or {@code null}
 * @author Tandem
 * @since 0.1.0
 */
public record PartitionLeaderDescriptor(String topic, int partition, @Nullable Integer leaderId,
		@Nullable Integer leaderEpoch, @Nullable String leaderEndpoint, @Nullable String leaderRack,
		@Nullable Instant lastLeaderChange, long leaderChanges, @Nullable Duration lastFailoverDuration,
		@Nullable Instant lastFailover, long failovers, @Nullable Instant lastSuccess, long successes, long failures,
		@Nullable String lastError) {

}
