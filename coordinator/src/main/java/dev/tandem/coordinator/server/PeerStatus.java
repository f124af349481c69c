package dev.tandem.coordinator.server;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A snapshot of one coordinator peer's Raft state, as this peer sees it (what the
 * coordinator server's health endpoint shows).
 * <p>
 * Immutable and thread-safe.
 *
 * @param peerId this peer's id
 * @param role this peer's role
 * @param term this peer's current Raft term, zero or more
 * @param leaderId the leader this peer knows of (itself when leading), or {@code null} when it
 *     knows none (during an election, or when cut off from the leader)
 * @param leaderReady whether this peer leads and has committed an entry of its term, so it
 *     serves reads and writes; always {@code false} on a non-leader
 * @param commitIndex the highest log index this peer knows to be committed, {@code -1} when none
 * @param appliedIndex the highest log index applied to this peer's state machine, {@code -1}
 *     when none; at most {@code commitIndex} except just after loading a snapshot
 * @param lastLogIndex the index of the last entry in this peer's log, {@code -1} when empty
 * @param leaderCommitIndex the leader's commit index as this peer knows it: its own when it
 *     leads; on a follower the one the leader sent with its last accepted append entries or
 *     heartbeat; {@code -1} when unknown
 * @param behindLeaderMs for how long, in milliseconds, this follower's applied index has been
 *     short of a commit index the leader had already reached: zero while it keeps up (it then
 *     reaches every such index by the next observation, a fraction of a second), growing while
 *     it does not catch up; always zero on a leader or a peer that knows no leader
 * @param followers on a leader, the progress of every other peer of the group, in peer order;
 *     empty on any other peer
 * @since 0.1.0
 */
public record PeerStatus(String peerId, PeerRole role, long term, @Nullable String leaderId, boolean leaderReady,
		long commitIndex, long appliedIndex, long lastLogIndex, long leaderCommitIndex, long behindLeaderMs,
		List<FollowerProgress> followers) {

	public PeerStatus {
		Objects.requireNonNull(peerId, "peerId");
		Objects.requireNonNull(role, "role");
		followers = List.copyOf(followers);
	}

	/**
	 * Returns whether this peer has joined a working group: it leads and is ready, or it
	 * follows a known leader. A coordinator server is ready for traffic only then.
	 * @return whether a ready leader is known
	 */
	public boolean hasLeader() {
		return (this.role == PeerRole.LEADER) ? this.leaderReady
				: (this.leaderId != null && this.role != PeerRole.STOPPED);
	}

	/**
	 * Returns how many committed entries this peer has yet to apply.
	 * @return the lag in log entries, zero or more
	 */
	public long applyLag() {
		return Math.max(0, this.commitIndex - this.appliedIndex);
	}

	/**
	 * Returns how many entries this follower has yet to apply to reach the leader's commit
	 * index it knows: unlike {@link #applyLag()}, this counts the entries it has not even
	 * received. While the others serve, a follower that does not catch up leaves a group of
	 * three without tolerance for one more failure, unseen unless this is watched.
	 * @return the lag in log entries, zero or more; zero on a leader or when the leader's commit
	 *     index is unknown
	 */
	public long followerLag() {
		return (this.role == PeerRole.LEADER || this.leaderCommitIndex < 0) ? 0
				: Math.max(0, this.leaderCommitIndex - this.appliedIndex);
	}

	/**
	 * Returns whether this follower has trailed the leader's commit index for longer than the
	 * given time ({@link #behindLeaderMs()}).
	 * @param threshold how long a follower may take to catch up, zero or more
	 * @return whether it trails for longer
	 */
	public boolean isBehindLeaderLongerThan(Duration threshold) {
		return this.behindLeaderMs > threshold.toMillis();
	}

	/**
	 * Returns, on a leader, the followers that have trailed its commit index for longer than
	 * the given time.
	 * @param threshold how long a follower may take to catch up, zero or more
	 * @return the lagging followers in peer order; empty on a non-leader
	 */
	public List<FollowerProgress> followersBehindLongerThan(Duration threshold) {
		long thresholdMs = threshold.toMillis();
		return this.followers.stream().filter((follower) -> follower.behindMs() > thresholdMs).toList();
	}

}
