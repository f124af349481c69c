package dev.tandem.coordinator.server;

import java.util.Objects;

/**
 * How far one follower is from the leader's commit index, as the leader sees it (from the
 * follower's answers to its append entries and heartbeats).
 * <p>
 * Immutable and thread-safe.
 *
 * @param peerId the follower's id
 * @param commitIndex the follower's commit index as it last reported it to the leader,
 *     {@code -1} before its first answer to this leader
 * @param lag the leader's commit index minus {@code commitIndex}, in log entries, zero or more
 * @param behindMs for how long, in milliseconds, the follower has been short of a commit index
 *     the leader had already reached (zero while it keeps up; see
 *     {@link PeerStatus#behindLeaderMs()})
 * @since 0.1.0
 */
public record FollowerProgress(String peerId, long commitIndex, long lag, long behindMs) {

	public FollowerProgress {
		Objects.requireNonNull(peerId, "peerId");
	}

}
