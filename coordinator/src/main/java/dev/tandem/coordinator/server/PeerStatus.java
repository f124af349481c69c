package dev.tandem.coordinator.server;

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
 * @since 0.1.0
 */
public record PeerStatus(String peerId, PeerRole role, long term, @Nullable String leaderId, boolean leaderReady,
		long commitIndex, long appliedIndex, long lastLogIndex) {

	public PeerStatus {
		Objects.requireNonNull(peerId, "peerId");
		Objects.requireNonNull(role, "role");
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

}
