package dev.tandem.coordinator.client;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.ServerNotReadyException;
import org.jspecify.annotations.Nullable;

/**
 * A peer of the coordinator running in this JVM, to which a {@link RatisDecisionLog} hands its
 * commands directly ({@link RaftClientAsynchronousProtocol#submitClientRequestAsync}), as the
 * peer's own gRPC service does with the requests it receives: no serialisation to a socket, no
 * gRPC and Netty threads on either side, the reply completed by the peer once the command is
 * committed and applied, exactly as a gRPC client's would be. Used by the embedded coordinator,
 * whose one peer is always in the process.
 * <p>
 * A request the peer did not take (it is not the leader, or not ready yet: nothing was appended)
 * answers {@code null}, and the caller sends it through its gRPC client instead, which finds the
 * leader and retries. Any other failure is the caller's, as a gRPC client's failure after its
 * retries would be (the outcome is unknown). A request the peer has not answered within the
 * bound given to the constructor fails, so that a caller waiting for its reply never waits forever.
 * <p>
 * Thread-safe.
 */
final class InProcessPeer {

	private final RaftClientAsynchronousProtocol peer;

	private final RaftPeerId peerId;

	private final RaftGroupId groupId;

	private final ClientId clientId = ClientId.randomId();

	private final AtomicLong callIds = new AtomicLong();

	private final long timeoutNanos;

	private final AtomicLong taken = new AtomicLong();

	/**
	 * @param peer the peer (a {@code RaftServer} of this JVM)
	 * @param peerId its id in the group
	 * @param groupId the group's id
	 * @param timeout how long a request may wait for the peer's reply before it fails
	 */
	InProcessPeer(RaftClientAsynchronousProtocol peer, RaftPeerId peerId, RaftGroupId groupId, Duration timeout) {
		this.peer = peer;
		this.peerId = peerId;
		this.groupId = groupId;
		this.timeoutNanos = timeout.toNanos();
	}

	/**
	 * Submits a write request.
	 * @param message the request's content, as a gRPC client would send it
	 * @return the peer's reply once the command is applied (or refused), or {@code null} if the
	 *     peer did not take it; completed exceptionally if the peer failed it or did not answer in time
	 */
	CompletableFuture<@Nullable RaftClientReply> write(Message message) {
		RaftClientRequest request = RaftClientRequest.newBuilder()
			.setClientId(this.clientId)
			.setServerId(this.peerId)
			.setGroupId(this.groupId)
			.setCallId(this.callIds.incrementAndGet())
			.setMessage(message)
			.setType(RaftClientRequest.writeRequestType())
			.build();
		CompletableFuture<RaftClientReply> reply;
		try {
			reply = this.peer.submitClientRequestAsync(request);
		}
		catch (IOException ex) {
			// refused before it was queued (the peer is closing or not serving this group): nothing appended
			return CompletableFuture.completedFuture(null);
		}
		return reply.orTimeout(this.timeoutNanos, TimeUnit.NANOSECONDS).thenApply((answer) -> {
			if (notTaken(answer)) {
				return null;
			}
			this.taken.incrementAndGet();
			return answer;
		});
	}

	/** Returns the number of requests the peer took and answered. */
	long taken() {
		return this.taken.get();
	}

	/** Whether the peer answered without appending the request: another peer, or later, may take it. */
	private static boolean notTaken(RaftClientReply reply) {
		return reply.getNotLeaderException() != null || reply.getException() instanceof NotLeaderException
				|| reply.getException() instanceof LeaderNotReadyException
				|| reply.getException() instanceof ServerNotReadyException;
	}

}
