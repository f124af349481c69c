package dev.tandem.coordinator.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import dev.tandem.coordinator.security.CoordinatorAccessDeniedException;
import dev.tandem.coordinator.state.MessageCodec;
import dev.tandem.coordinator.state.Query;
import dev.tandem.coordinator.state.QueryReply;
import dev.tandem.transaction.DecisionLogException;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.ReadException;
import org.apache.ratis.protocol.exceptions.ReadIndexException;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The read path of a {@link RatisDecisionLog}: linearizable queries (ReadIndex, Raft thesis
 * §6.4) sent to the leader, to one chosen peer, or round-robin over the peers other than the
 * leader with a fall-back to the leader when a follower fails; a read that meets an election in
 * progress is retried with exponential back-off and jitter until its timeout.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
final class LinearizableReads {

	private static final Logger logger = LoggerFactory.getLogger(LinearizableReads.class);

	private final CoordinatorGroup group;

	private final RaftClient client;

	private final @Nullable RaftClient followerReadClient;

	private final @Nullable RaftPeerId readFrom;

	private final List<RaftPeerId> peerIds;

	private final Duration retryBaseSleep;

	private final Duration retryMaxSleep;

	private final AtomicInteger nextReader = new AtomicInteger();

	private final LongAdder followerReads = new LongAdder();

	private final LongAdder followerReadFallbacks = new LongAdder();

	/**
	 * Creates the read path of a decision log client.
	 * @param group the coordinator's group
	 * @param client the client that reads from the leader (and from {@code readFrom})
	 * @param followerReadClient a client without retries that reads from followers, or
	 *     {@code null} to read from the leader only
	 * @param readFrom the one peer to read from, or {@code null}
	 * @param retryBaseSleep the first back-off of a retried read
	 * @param retryMaxSleep the longest back-off of a retried read
	 */
	LinearizableReads(CoordinatorGroup group, RaftClient client, @Nullable RaftClient followerReadClient,
			@Nullable RaftPeerId readFrom, Duration retryBaseSleep, Duration retryMaxSleep) {
		this.group = group;
		this.client = client;
		this.followerReadClient = followerReadClient;
		this.readFrom = readFrom;
		this.peerIds = group.peers().keySet().stream().map(RaftPeerId::valueOf).toList();
		this.retryBaseSleep = retryBaseSleep;
		this.retryMaxSleep = retryMaxSleep;
	}

	/**
	 * Sends a query and waits for its reply, retrying with back-off while the answer is that no
	 * leader is known or leadership is not confirmed yet (both pass once an election is over).
	 * @param query the query
	 * @param timeout how long to wait in all, retries included
	 * @param what the read, for messages
	 * @return the reply
	 * @throws DecisionLogException if the read failed, or timed out
	 * @throws CoordinatorAccessDeniedException if the caller may not read what the query touches
	 */
	QueryReply query(Query query, Duration timeout, String what) {
		Message message = Message.valueOf(UnsafeByteOperations.unsafeWrap(MessageCodec.encodeQuery(query)));
		long deadline = System.nanoTime() + timeout.toNanos();
		for (int attempt = 0;; attempt++) {
			Duration remaining = Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
			try {
				return CoordinatorReplies.await(read(message).thenApply((reply) -> {
					CoordinatorReplies.checkSuccess(reply);
					return MessageCodec.decodeReply(reply.getMessage().getContent().newInput());
				}), remaining, what, this.group);
			}
			catch (DecisionLogException ex) {
				// Ratis answers these in a reply instead of retrying: no leader known, or
				// leadership not confirmed; both pass once an election is over
				long sleepNanos = backoffNanos(attempt);
				if (!isTransientReadFailure(ex) || System.nanoTime() + sleepNanos >= deadline) {
					throw ex;
				}
				logger.debug("Retrying {} in {} ms: {}", what, TimeUnit.NANOSECONDS.toMillis(sleepNanos), ex.getMessage());
				try {
					TimeUnit.NANOSECONDS.sleep(sleepNanos);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					throw new DecisionLogException("Interrupted while waiting to retry " + what, interrupted);
				}
			}
		}
	}

	private long backoffNanos(int attempt) {
		long base = this.retryBaseSleep.toNanos() << Math.min(attempt, 16);
		long capped = Math.min(base, this.retryMaxSleep.toNanos());
		return capped / 2 + ThreadLocalRandom.current().nextLong(capped / 2 + 1);
	}

	private static boolean isTransientReadFailure(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof ReadException || cause instanceof ReadIndexException) {
				return true;
			}
		}
		return false;
	}

	private CompletableFuture<RaftClientReply> read(Message message) {
		if (this.readFrom != null) {
			return this.client.async().sendReadOnly(message, this.readFrom);
		}
		RaftPeerId follower = (this.followerReadClient != null) ? nextFollower() : null;
		if (follower == null || this.followerReadClient == null) {
			return this.client.async().sendReadOnly(message);
		}
		return this.followerReadClient.async().sendReadOnly(message, follower).thenApply((reply) -> {
			CoordinatorReplies.checkSuccess(reply);
			this.followerReads.increment();
			return reply;
		}).exceptionallyCompose((failure) -> {
			this.followerReadFallbacks.increment();
			logger.debug("Linearizable read on follower '{}' failed, asking the leader: {}", follower, failure.toString());
			return this.client.async().sendReadOnly(message);
		});
	}

	/**
	 * Round-robin over the peers other than the one this client takes for the leader.
	 */
	private @Nullable RaftPeerId nextFollower() {
		RaftPeerId leader = this.client.getLeaderId();
		List<RaftPeerId> followers = new ArrayList<>(this.peerIds.size());
		for (RaftPeerId peer : this.peerIds) {
			if (!peer.equals(leader)) {
				followers.add(peer);
			}
		}
		if (followers.isEmpty()) {
			return null;
		}
		return followers.get(Math.floorMod(this.nextReader.getAndIncrement(), followers.size()));
	}

	/**
	 * Returns how many reads a follower answered.
	 * @return the count, zero or more
	 */
	long followerReads() {
		return this.followerReads.sum();
	}

	/**
	 * Returns how many reads failed on a follower and were sent to the leader instead.
	 * @return the count, zero or more
	 */
	long followerReadFallbacks() {
		return this.followerReadFallbacks.sum();
	}

}
