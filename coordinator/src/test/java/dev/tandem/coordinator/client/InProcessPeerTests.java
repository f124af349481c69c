package dev.tandem.coordinator.client;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Unit tests of {@link InProcessPeer} against a stub peer (the real peer is exercised by
 * {@code EmbeddedCoordinatorTests}): which answers mean "not taken, send it through gRPC".
 */
class InProcessPeerTests {

	private static final RaftPeerId PEER = RaftPeerId.valueOf("embedded");

	private static final RaftGroupId GROUP = RaftGroupId.randomId();

	private static final Message MESSAGE = Message.valueOf("command");

	private final AtomicReference<RaftClientRequest> submitted = new AtomicReference<>();

	@Test
	void aWriteReachesThePeerAsAWriteRequestOfItsGroupAndReturnsItsReply() throws Exception {
		InProcessPeer peer = new InProcessPeer((request) -> {
			this.submitted.set(request);
			return CompletableFuture.completedFuture(reply(request).setSuccess().setMessage(Message.valueOf("ok")).build());
		}, PEER, GROUP, Duration.ofSeconds(5));
		RaftClientReply reply = peer.write(MESSAGE).get();
		assertThat(reply).isNotNull();
		assertThat(reply.getMessage().getContent().toStringUtf8()).isEqualTo("ok");
		assertThat(this.submitted.get().getRaftGroupId()).isEqualTo(GROUP);
		assertThat(this.submitted.get().getServerId()).isEqualTo(PEER);
		assertThat(this.submitted.get().is(RaftClientRequest.writeRequestType().getTypeCase())).isTrue();
		assertThat(this.submitted.get().getMessage().getContent().toStringUtf8()).isEqualTo("command");
		assertThat(peer.taken()).isOne();
	}

	@Test
	void aPeerThatIsNotTheLeaderOrNotReadyDoesNotTakeTheWrite() throws Exception {
		RaftGroupMemberId member = RaftGroupMemberId.valueOf(PEER, GROUP);
		InProcessPeer notLeader = new InProcessPeer((request) -> CompletableFuture.completedFuture(
				reply(request).setException(new NotLeaderException(member, null, java.util.List.of())).build()), PEER,
				GROUP, Duration.ofSeconds(5));
		InProcessPeer notReady = new InProcessPeer((request) -> CompletableFuture.completedFuture(
				reply(request).setException(new LeaderNotReadyException(member)).build()), PEER, GROUP,
				Duration.ofSeconds(5));
		InProcessPeer closed = new InProcessPeer((request) -> {
			throw new IOException("closed");
		}, PEER, GROUP, Duration.ofSeconds(5));
		assertThat(notLeader.write(MESSAGE).get()).isNull();
		assertThat(notReady.write(MESSAGE).get()).isNull();
		assertThat(closed.write(MESSAGE).get()).isNull();
		assertThat(notLeader.taken() + notReady.taken() + closed.taken()).isZero();
	}

	@Test
	void aRefusalOfTheStateMachineIsTheCallersAnswerNotARetry() throws Exception {
		InProcessPeer peer = new InProcessPeer((request) -> CompletableFuture.completedFuture(
				reply(request).setException(new StateMachineException("refused")).build()), PEER, GROUP,
				Duration.ofSeconds(5));
		RaftClientReply reply = peer.write(MESSAGE).get();
		assertThat(reply).isNotNull();
		assertThat(reply.isSuccess()).isFalse();
		assertThat(reply.getException()).isInstanceOf(StateMachineException.class);
	}

	@Test
	void aWriteThePeerNeverAnswersFailsAfterTheBound() {
		InProcessPeer peer = new InProcessPeer((request) -> new CompletableFuture<>(), PEER, GROUP,
				Duration.ofMillis(50));
		assertThatThrownBy(() -> peer.write(MESSAGE).get()).isInstanceOf(ExecutionException.class)
			.hasCauseInstanceOf(TimeoutException.class);
	}

	private static RaftClientReply.Builder reply(RaftClientRequest request) {
		return RaftClientReply.newBuilder()
			.setClientId(request.getClientId())
			.setServerId(request.getServerId())
			.setGroupId(request.getRaftGroupId())
			.setCallId(request.getCallId());
	}

}
