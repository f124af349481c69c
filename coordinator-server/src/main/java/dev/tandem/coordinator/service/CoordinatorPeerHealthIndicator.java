package dev.tandem.coordinator.service;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.FollowerProgress;
import dev.tandem.coordinator.server.PeerRole;
import dev.tandem.coordinator.server.PeerStatus;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

/**
 * Health of the hosted coordinator peer, as the peer sees its group: {@code UP} once it has
 * joined a working group (it leads and is ready, or it follows a known leader) and keeps up
 * with the leader, {@link #DEGRADED} while it follows a leader but its applied index has
 * trailed the leader's commit index for longer than the catch-up threshold (it serves no
 * up-to-date reads and does not count toward the group's fault tolerance), {@code OUT_OF_SERVICE}
 * while it knows no leader (start-up, election, cut off from the majority), {@code DOWN} when
 * the peer is not running. Part of the readiness group, so a pod receives traffic, and counts
 * as available for its disruption budget, only once it joined and caught up (the service's
 * {@code application.yml} orders {@code DEGRADED} between {@code OUT_OF_SERVICE} and
 * {@code UP} and maps it to HTTP 503 in the readiness group).
 * <p>
 * Details: {@code peerId}, {@code role}, {@code term}, {@code leader} (absent when unknown),
 * {@code commitIndex}, {@code appliedIndex}, {@code lastLogIndex}, {@code applyLag} (entries
 * committed but not yet applied), {@code leaderCommitIndex} (the leader's commit index as this
 * peer knows it, when known), on a follower {@code followerLag} (entries to apply to reach it)
 * and {@code behindLeaderMs} (for how long it has trailed), on the leader {@code followers}
 * (each follower's {@code commitIndex}, {@code lag} and {@code behindMs}) and
 * {@code laggingFollowers} (the ids of those that trailed for longer than the threshold: a
 * leader stays {@code UP} for them, their own health reports them), {@code catchUpThresholdMs}
 * and {@code peers}. Reading them is cheap: no I/O, no remote call.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class CoordinatorPeerHealthIndicator extends AbstractHealthIndicator {

	/**
	 * Status of a peer that follows a leader but has not caught up with its commit index for
	 * longer than the catch-up threshold.
	 */
	public static final Status DEGRADED = new Status("DEGRADED",
			"Follows the leader but has not caught up with its commit index");

	/**
	 * How long a follower may trail the leader's commit index before it is reported, by
	 * default: long enough for a follower to install a large snapshot after a restart, far
	 * longer than the few heartbeats a follower that keeps up needs.
	 */
	public static final Duration DEFAULT_CATCH_UP_THRESHOLD = Duration.ofSeconds(10);

	private final Supplier<PeerStatus> status;

	private final Map<String, String> peers;

	private final Duration catchUpThreshold;

	/**
	 * Creates an indicator of a peer with the {@link #DEFAULT_CATCH_UP_THRESHOLD default
	 * catch-up threshold}.
	 * @param server the hosted peer
	 */
	public CoordinatorPeerHealthIndicator(CoordinatorServer server) {
		this(server, DEFAULT_CATCH_UP_THRESHOLD);
	}

	/**
	 * Creates an indicator of a peer.
	 * @param server the hosted peer
	 * @param catchUpThreshold how long a follower may trail the leader's commit index before
	 *     it is {@link #DEGRADED}, positive
	 * @throws IllegalArgumentException if the threshold is not positive
	 */
	public CoordinatorPeerHealthIndicator(CoordinatorServer server, Duration catchUpThreshold) {
		this(Objects.requireNonNull(server, "server")::status, server.group().peers(), catchUpThreshold);
	}

	CoordinatorPeerHealthIndicator(Supplier<PeerStatus> status, Map<String, String> peers, Duration catchUpThreshold) {
		super("Coordinator peer health check failed");
		this.status = status;
		this.peers = peers;
		Objects.requireNonNull(catchUpThreshold, "catchUpThreshold");
		if (catchUpThreshold.isNegative() || catchUpThreshold.isZero()) {
			throw new IllegalArgumentException("catchUpThreshold must be positive: " + catchUpThreshold);
		}
		this.catchUpThreshold = catchUpThreshold;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		PeerStatus status = this.status.get();
		if (status.hasLeader()) {
			builder.status(status.isBehindLeaderLongerThan(this.catchUpThreshold) ? DEGRADED : Status.UP);
		}
		else if (status.role() == PeerRole.STOPPED) {
			builder.down();
		}
		else {
			builder.outOfService();
		}
		builder.withDetail("peerId", status.peerId())
			.withDetail("role", status.role())
			.withDetail("term", status.term());
		if (status.leaderId() != null) {
			builder.withDetail("leader", status.leaderId());
		}
		builder.withDetail("commitIndex", status.commitIndex())
			.withDetail("appliedIndex", status.appliedIndex())
			.withDetail("lastLogIndex", status.lastLogIndex())
			.withDetail("applyLag", status.applyLag());
		if (status.leaderCommitIndex() >= 0) {
			builder.withDetail("leaderCommitIndex", status.leaderCommitIndex());
		}
		if (status.role() == PeerRole.LEADER) {
			builder.withDetail("followers", status.followers().stream().map(CoordinatorPeerHealthIndicator::progress).toList())
				.withDetail("laggingFollowers",
						status.followersBehindLongerThan(this.catchUpThreshold).stream().map(FollowerProgress::peerId).toList());
		}
		else if (status.leaderCommitIndex() >= 0) {
			builder.withDetail("followerLag", status.followerLag()).withDetail("behindLeaderMs", status.behindLeaderMs());
		}
		builder.withDetail("catchUpThresholdMs", this.catchUpThreshold.toMillis()).withDetail("peers", this.peers);
	}

	private static Map<String, Object> progress(FollowerProgress follower) {
		Map<String, Object> progress = new LinkedHashMap<>();
		progress.put("peerId", follower.peerId());
		progress.put("commitIndex", follower.commitIndex());
		progress.put("lag", follower.lag());
		progress.put("behindMs", follower.behindMs());
		return progress;
	}

}
