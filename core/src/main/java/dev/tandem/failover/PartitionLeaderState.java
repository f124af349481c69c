package dev.tandem.failover;

import java.time.Duration;
import java.time.Instant;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import dev.tandem.failover.internals.LeaderSource.LeaderTerm;

/**
 * Mutable leader state of one partition as one client sees it, for {@link LeaderCache}: the
 * leader and leader epoch, the changes and failovers counted, the last success and failure.
 * Guarded by its own monitor (the cache synchronizes on it around every update, and reads the
 * package-private fields under it).
 */
final class PartitionLeaderState {

	private static final int NONE = -2;

	private final String cluster;

	private final String clientId;

	private final ClientType clientType;

	private final TopicPartition partition;

	/** Metadata version last applied, by identity. */
	@Nullable Object version;

	int leaderId = LeaderTerm.UNKNOWN;

	int leaderEpoch = LeaderTerm.UNKNOWN;

	@Nullable Node leaderNode;

	/** Last known leader (never UNKNOWN once set), to count changes across gaps. */
	private int knownLeaderId = NONE;

	private int knownLeaderEpoch = LeaderTerm.UNKNOWN;

	private long lastChangeMs = -1;

	private long changes;

	/** Leader at the last success; NONE before the first. */
	private int successLeaderId = NONE;

	private int successLeaderEpoch = LeaderTerm.UNKNOWN;

	long lastSuccessMs = -1;

	private long successes;

	private long failures;

	private @Nullable String lastError;

	private long lastFailoverDurationMs = -1;

	private long lastFailoverMs = -1;

	private long failovers;

	PartitionLeaderState(String cluster, String clientId, ClientType clientType, TopicPartition partition) {
		this.cluster = cluster;
		this.clientId = clientId;
		this.clientType = clientType;
		this.partition = partition;
	}

	@Nullable LeaderChangeEvent apply(@Nullable LeaderTerm term, @Nullable Object version, long nowMs) {
		this.version = version;
		if (term == null) {
			return null;
		}
		if (term.leaderEpoch() != LeaderTerm.UNKNOWN && this.leaderEpoch != LeaderTerm.UNKNOWN
				&& term.leaderEpoch() < this.leaderEpoch) {
			return null; // stale
		}
		this.leaderId = term.leaderId();
		this.leaderEpoch = (term.leaderEpoch() != LeaderTerm.UNKNOWN) ? term.leaderEpoch() : this.leaderEpoch;
		this.leaderNode = (term.node() != null || term.leaderId() == LeaderTerm.UNKNOWN) ? term.node()
				: this.leaderNode;
		if (this.leaderId == LeaderTerm.UNKNOWN) {
			return null; // leaderless for now; counted when a leader appears
		}
		if (this.knownLeaderId == NONE) {
			this.knownLeaderId = this.leaderId;
			this.knownLeaderEpoch = this.leaderEpoch;
			return null; // first leader seen: not a change
		}
		boolean sameLeader = this.knownLeaderId == this.leaderId;
		boolean sameEpoch = this.knownLeaderEpoch == this.leaderEpoch || this.leaderEpoch == LeaderTerm.UNKNOWN
				|| this.knownLeaderEpoch == LeaderTerm.UNKNOWN;
		if (sameLeader && sameEpoch) {
			this.knownLeaderEpoch = (this.leaderEpoch != LeaderTerm.UNKNOWN) ? this.leaderEpoch
					: this.knownLeaderEpoch;
			return null;
		}
		int previousId = this.knownLeaderId;
		int previousEpoch = this.knownLeaderEpoch;
		this.knownLeaderId = this.leaderId;
		this.knownLeaderEpoch = this.leaderEpoch;
		this.changes++;
		this.lastChangeMs = nowMs;
		return new LeaderChangeEvent(this.cluster, this.clientId,
				this.clientType, this.partition.topic(), this.partition.partition(), previousId,
				nullable(previousEpoch), this.leaderId, nullable(this.leaderEpoch), endpoint(this.leaderNode),
				Instant.ofEpochMilli(nowMs));
	}

	@Nullable FailoverEvent success(long nowMs, long startMs) {
		FailoverEvent event = null;
		if (this.leaderId != LeaderTerm.UNKNOWN && this.successLeaderId != NONE) {
			boolean sameLeader = this.successLeaderId == this.leaderId;
			boolean sameEpoch = this.successLeaderEpoch == this.leaderEpoch
					|| this.successLeaderEpoch == LeaderTerm.UNKNOWN || this.leaderEpoch == LeaderTerm.UNKNOWN;
			if (!sameLeader || !sameEpoch) {
				long durationMs = (startMs >= 0) ? Math.max(0, nowMs - startMs) : 0;
				this.lastFailoverDurationMs = durationMs;
				this.lastFailoverMs = nowMs;
				this.failovers++;
				event = new FailoverEvent(this.cluster, this.clientId,
						this.clientType, this.partition.topic(), this.partition.partition(),
						nullable(this.successLeaderId), this.leaderId, nullable(this.leaderEpoch),
						Duration.ofMillis(durationMs), Instant.ofEpochMilli(nowMs));
			}
		}
		if (this.leaderId != LeaderTerm.UNKNOWN) {
			this.successLeaderId = this.leaderId;
			this.successLeaderEpoch = this.leaderEpoch;
		}
		this.lastSuccessMs = nowMs;
		this.successes++;
		return event;
	}

	void failure(Exception exception) {
		this.failures++;
		this.lastError = exception.getClass().getSimpleName() + ": " + exception.getMessage();
	}

	synchronized PartitionLeaderDescriptor describe() {
		Node node = this.leaderNode;
		boolean hasLeader = this.leaderId != LeaderTerm.UNKNOWN;
		return new PartitionLeaderDescriptor(this.partition.topic(), this.partition.partition(),
				hasLeader ? this.leaderId : null, nullable(this.leaderEpoch),
				(hasLeader && node != null) ? endpoint(node) : null,
				(hasLeader && node != null) ? node.rack() : null, instant(this.lastChangeMs), this.changes,
				(this.lastFailoverDurationMs >= 0) ? Duration.ofMillis(this.lastFailoverDurationMs) : null,
				instant(this.lastFailoverMs), this.failovers, instant(this.lastSuccessMs), this.successes,
				this.failures, this.lastError);
	}

	private static @Nullable Integer nullable(int value) {
		return (value >= 0) ? value : null;
	}

	private static @Nullable Instant instant(long epochMillis) {
		return (epochMillis >= 0) ? Instant.ofEpochMilli(epochMillis) : null;
	}

	private static String endpoint(@Nullable Node node) {
		return (node != null) ? node.host() + ":" + node.port() : "unknown";
	}

}
