package dev.tandem.coordinator.service;

import java.util.Objects;

import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.PeerRole;
import dev.tandem.coordinator.server.PeerStatus;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of the hosted coordinator peer, as the peer sees its group: {@code UP} once it has
 * joined a working group (it leads and is ready, or it follows a known leader),
 * {@code OUT_OF_SERVICE} while it knows no leader (start-up, election, cut off from the
 * majority), {@code DOWN} when the peer is not running. Part of the readiness group, so a pod
 * receives traffic, and counts as available for its disruption budget, only once it joined.
 * <p>
 * Details: {@code peerId}, {@code role}, {@code term}, {@code leader} (absent when unknown),
 * {@code commitIndex}, {@code appliedIndex}, {@code lastLogIndex}, {@code applyLag} (entries
 * committed but not yet applied) and {@code peers}. Reading them is cheap: no I/O, no remote
 * call.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class CoordinatorPeerHealthIndicator extends AbstractHealthIndicator {

	private final CoordinatorServer server;

	/**
	 * Creates an indicator of a peer.
	 * @param server the hosted peer
	 */
	public CoordinatorPeerHealthIndicator(CoordinatorServer server) {
		super("Coordinator peer health check failed");
		this.server = Objects.requireNonNull(server, "server");
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		PeerStatus status = this.server.status();
		if (status.hasLeader()) {
			builder.up();
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
			.withDetail("applyLag", status.applyLag())
			.withDetail("peers", this.server.group().peers());
	}

}
