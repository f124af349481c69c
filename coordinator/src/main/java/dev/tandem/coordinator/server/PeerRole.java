package dev.tandem.coordinator.server;

import org.apache.ratis.proto.RaftProtos.RaftPeerRole;

/**
 * The Raft role of one coordinator peer (Raft §5.1, pre-vote per Raft thesis §9.6).
 *
 * @since 0.1.0
 */
public enum PeerRole {

	/**
	 * Accepts writes and serves reads for the group.
	 */
	LEADER,

	/**
	 * Replicates the leader's log; serves linearizable reads through ReadIndex.
	 */
	FOLLOWER,

	/**
	 * Runs a pre-vote or an election: no leader is known to this peer.
	 */
	CANDIDATE,

	/**
	 * Replicates the log without voting (a Ratis listener).
	 */
	LISTENER,

	/**
	 * Not started, closing, or closed.
	 */
	STOPPED;

	static PeerRole of(RaftPeerRole role) {
		return switch (role) {
			case LEADER -> LEADER;
			case FOLLOWER -> FOLLOWER;
			case CANDIDATE -> CANDIDATE;
			case LISTENER -> LISTENER;
			default -> STOPPED;
		};
	}

}
