package dev.tandem.coordinator.testing;

import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.util.CodeInjectionForTesting;
import org.jspecify.annotations.Nullable;

/**
 * Network partitions between coordinator peers running in one JVM, made with Apache Ratis'
 * test hooks ({@link CodeInjectionForTesting}, in the main {@code ratis-common} jar).
 * <p>
 * While a peer is cut off, every Raft request between it and the other peers is held until
 * the partition heals: (pre-)vote requests, append entries and heartbeats, snapshot
 * installations and leadership hand-overs are held by the receiving peer, a follower's
 * ReadIndex request by the sending peer. This is what a network that drops packets does,
 * except that held requests are delivered late when the partition heals, which Raft tolerates
 * (they carry old terms or indexes). The hooks are the ones Ratis' own
 * {@code BlockRequestHandlingInjection} uses; holding a request parks one gRPC thread.
 * <p>
 * Client requests are not held: a cut-off peer still hears its clients, like a leader in a
 * minority partition does, which is what a stale-read test needs.
 * <p>
 * The hooks are static: install one partition per JVM at a time and close it (which heals and
 * removes the hooks) before the peers are closed. Thread-safe.
 */
public final class NetworkPartition implements AutoCloseable {

	/** Receiver side: {@code RaftServerImpl.REQUEST_VOTE}, arguments (local, candidate). */
	static final String REQUEST_VOTE = "RaftServerImpl.requestVote";

	/** Receiver side: {@code RaftServerImpl.APPEND_ENTRIES}, arguments (local, leader, previous, request). */
	static final String APPEND_ENTRIES = "RaftServerImpl.appendEntries";

	/** Receiver side: {@code RaftServerImpl.INSTALL_SNAPSHOT}, arguments (local, leader). */
	static final String INSTALL_SNAPSHOT = "RaftServerImpl.installSnapshot";

	/** Receiver side: {@code RaftServerImpl.START_LEADER_ELECTION}, arguments (local, leader). */
	static final String START_LEADER_ELECTION = "RaftServerImpl.startLeaderElection";

	/** Sender side: {@code GrpcServicesImpl.GRPC_SEND_SERVER_REQUEST}, arguments (local, null, request). */
	static final String SEND_SERVER_REQUEST = "GrpcServicesImpl.sendRequest";

	private static final List<String> RECEIVER_POINTS = List.of(REQUEST_VOTE, INSTALL_SNAPSHOT, START_LEADER_ELECTION);

	private final Object monitor = new Object();

	private final LongAdder held = new LongAdder();

	private Set<String> isolated = Set.of();

	private Set<String> entriesHeld = Set.of();

	private boolean closed;

	private NetworkPartition() {
	}

	/**
	 * Installs the hooks; no peer is cut off yet.
	 * @return the partition control
	 */
	public static NetworkPartition install() {
		NetworkPartition partition = new NetworkPartition();
		for (String point : RECEIVER_POINTS) {
			CodeInjectionForTesting.put(point, partition::holdIncoming);
		}
		CodeInjectionForTesting.put(APPEND_ENTRIES, partition::holdIncomingAppend);
		CodeInjectionForTesting.put(SEND_SERVER_REQUEST, partition::holdOutgoingReadIndex);
		return partition;
	}

	/**
	 * Cuts the given peers off from all others (they still reach each other).
	 * @param peerIds the peers of the minority side
	 */
	public void isolate(String... peerIds) {
		synchronized (this.monitor) {
			this.isolated = Set.of(peerIds);
			this.monitor.notifyAll();
		}
	}

	/**
	 * Holds every append entries request that carries log entries on its way to the given
	 * peers, while heartbeats still reach them: they keep following the leader and learn its
	 * commit index, but receive nothing to apply (a follower that does not catch up).
	 * @param peerIds the peers that receive no entries
	 */
	public void holdEntriesTo(String... peerIds) {
		synchronized (this.monitor) {
			this.entriesHeld = Set.of(peerIds);
			this.monitor.notifyAll();
		}
	}

	/**
	 * Heals the partition: held requests are delivered.
	 */
	public void heal() {
		synchronized (this.monitor) {
			this.isolated = Set.of();
			this.entriesHeld = Set.of();
			this.monitor.notifyAll();
		}
	}

	/**
	 * Returns how many requests were held so far (proof that the partition was real).
	 * @return the count
	 */
	public long heldRequests() {
		return this.held.sum();
	}

	/**
	 * Heals and removes the hooks. Idempotent.
	 */
	@Override
	public void close() {
		synchronized (this.monitor) {
			this.closed = true;
			this.isolated = Set.of();
			this.entriesHeld = Set.of();
			this.monitor.notifyAll();
		}
		for (String point : RECEIVER_POINTS) {
			CodeInjectionForTesting.remove(point);
		}
		CodeInjectionForTesting.remove(APPEND_ENTRIES);
		CodeInjectionForTesting.remove(SEND_SERVER_REQUEST);
	}

	private boolean holdIncomingAppend(Object localId, @Nullable Object remoteId, Object... args) {
		if (holdIncoming(localId, remoteId, args)) {
			return true;
		}
		boolean entries = args.length > 1 && args[1] instanceof AppendEntriesRequestProto request
				&& request.getEntriesCount() > 0;
		if (!entries) {
			return false;
		}
		String local = localId.toString();
		synchronized (this.monitor) {
			if (this.closed || !this.entriesHeld.contains(local)) {
				return false;
			}
			this.held.increment();
			while (!this.closed && this.entriesHeld.contains(local)) {
				try {
					this.monitor.wait();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return true;
				}
			}
			return true;
		}
	}

	private boolean holdIncoming(Object localId, @Nullable Object remoteId, Object... args) {
		return (remoteId != null) && hold(localId.toString(), remoteId.toString());
	}

	private boolean holdOutgoingReadIndex(Object localId, @Nullable Object remoteId, Object... args) {
		if (args.length > 0 && args[0] instanceof ReadIndexRequestProto request) {
			return hold(localId.toString(), RaftPeerId.valueOf(request.getServerRequest().getReplyId()).toString());
		}
		return false;
	}

	private boolean hold(String local, String remote) {
		synchronized (this.monitor) {
			if (!cut(local, remote)) {
				return false;
			}
			this.held.increment();
			while (cut(local, remote)) {
				try {
					this.monitor.wait();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return true;
				}
			}
			return true;
		}
	}

	private boolean cut(String local, String remote) {
		return !this.closed && (this.isolated.contains(local) != this.isolated.contains(remote));
	}

}
