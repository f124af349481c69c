package dev.tandem.coordinator.service;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import dev.tandem.coordinator.server.CoordinatorServer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the hosted coordinator peer with the application context and stops it gracefully:
 * a leading peer first hands leadership to the most up-to-date follower
 * ({@link CoordinatorServer#transferLeadership(Duration)}), so a rolling restart costs the
 * group about a round trip per leader instead of an election timeout, then the peer closes
 * (which takes about a second in Ratis).
 * <p>
 * Runs in the last phase: started after, and stopped before, the web server.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class CoordinatorPeerLifecycle implements SmartLifecycle {

	private static final Logger logger = LoggerFactory.getLogger(CoordinatorPeerLifecycle.class);

	private final CoordinatorServer server;

	private final boolean transferLeadership;

	private final Duration transferTimeout;

	private volatile boolean running;

	private volatile @Nullable String transferredTo;

	/**
	 * Creates the lifecycle of a peer.
	 * @param server the peer, not started
	 * @param transferLeadership whether a leading peer hands over leadership before it stops
	 * @param transferTimeout how long to wait for the new leader, positive
	 */
	public CoordinatorPeerLifecycle(CoordinatorServer server, boolean transferLeadership, Duration transferTimeout) {
		this.server = Objects.requireNonNull(server, "server");
		this.transferLeadership = transferLeadership;
		this.transferTimeout = Objects.requireNonNull(transferTimeout, "transferTimeout");
	}

	@Override
	public void start() {
		try {
			this.server.start();
			this.running = true;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Coordinator peer '" + this.server.peerId() + "' could not start", ex);
		}
	}

	@Override
	public void stop() {
		if (!this.running) {
			return;
		}
		this.running = false;
		if (this.transferLeadership) {
			try {
				Optional<String> newLeader = this.server.transferLeadership(this.transferTimeout);
				newLeader.ifPresent((leader) -> {
					this.transferredTo = leader;
					logger.info("Coordinator peer '{}' stopping: leadership moved to '{}'", this.server.peerId(), leader);
				});
			}
			catch (IOException | RuntimeException ex) {
				logger.warn("Coordinator peer '{}' stopping without a leadership transfer: {}", this.server.peerId(),
						ex.toString());
			}
		}
		this.server.close();
	}

	/**
	 * Returns the peer this one handed leadership to when it last stopped, if it led then.
	 * @return the new leader's id
	 */
	public Optional<String> transferredTo() {
		return Optional.ofNullable(this.transferredTo);
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

}
