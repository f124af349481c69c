package dev.tandem.coordinator;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.client.RatisDecisionLogBuilder;
import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.CoordinatorServerBuilder;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinator embedded in the app (the default mode; {@code docs/architecture.md}, "The coordinator"): one Ratis peer on the
 * loopback interface with its log and snapshots in a data directory, and a
 * {@link RatisDecisionLog} connected to it.
 * <p>
 * Its decision log answers {@link RatisDecisionLog#sharedByInstances()} false (each instance has
 * its own coordinator), so the transaction manager checks for a second running instance with the
 * same instance id through Kafka; a {@link Builder#client client customizer} may set it back to
 * true when every manager of the app uses this one coordinator (several managers in one JVM).
 * <p>
 * Decisions survive restarts: starting again on the same data directory loads the latest
 * snapshot and replays the log after it. The peer reuses the port it had before when that
 * port is free (it is kept in {@value #PORT_FILE} in the data directory), else it takes a free
 * one. Only one coordinator may use a data directory at a time: {@link Builder#start()} takes an
 * exclusive lock on {@value #LOCK_FILE} in it first (an operating-system file lock, released when
 * the coordinator closes or its process dies, {@code kill -9} included) and fails at once with an
 * {@link IOException} naming the directory when another process, or another coordinator of this
 * JVM, holds it; before the lock, a second app instance on the same directory reached Ratis,
 * which retried its own storage lock for seconds, failed the start-up and left a non-daemon
 * thread behind that kept the failed app's JVM running.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class EmbeddedCoordinator implements AutoCloseable {

	/**
	 * Name of the file in the data directory that remembers the peer's port.
	 */
	public static final String PORT_FILE = "embedded-peer.port";

	/**
	 * Name of the file in the data directory that a running coordinator holds locked.
	 */
	public static final String LOCK_FILE = "embedded-coordinator.lock";

	/**
	 * Peer id of the embedded peer.
	 */
	public static final String PEER_ID = "embedded";

	private static final Logger logger = LoggerFactory.getLogger(EmbeddedCoordinator.class);

	private final CoordinatorServer server;

	private final RatisDecisionLog decisionLog;

	private final DirectoryLock lock;

	private EmbeddedCoordinator(CoordinatorServer server, RatisDecisionLog decisionLog, DirectoryLock lock) {
		this.server = server;
		this.decisionLog = decisionLog;
		this.lock = lock;
	}

	/**
	 * Starts an embedded coordinator with default settings and waits until it serves.
	 * @param dataDir the directory of the log and snapshots (created if missing)
	 * @return the running coordinator
	 * @throws IOException if the data directory cannot be used or no port can be bound
	 * @throws TimeoutException if the peer does not become leader within 30 s
	 * @throws InterruptedException if interrupted while waiting
	 */
	public static EmbeddedCoordinator start(Path dataDir) throws IOException, TimeoutException, InterruptedException {
		return builder(dataDir).start();
	}

	/**
	 * Starts configuring an embedded coordinator.
	 * @param dataDir the directory of the log and snapshots (created if missing)
	 * @return a builder
	 */
	public static Builder builder(Path dataDir) {
		return new Builder(dataDir);
	}

	/**
	 * Returns the decision log connected to this coordinator; closing it does not stop the
	 * peer, {@link #close()} closes both.
	 * @return the decision log
	 */
	public RatisDecisionLog decisionLog() {
		return this.decisionLog;
	}

	/**
	 * Returns the embedded peer.
	 * @return the peer
	 */
	public CoordinatorServer server() {
		return this.server;
	}

	/**
	 * Closes the decision log (flushing queued completions), then the peer, then releases the
	 * data directory's lock. Idempotent.
	 */
	@Override
	public void close() {
		try {
			this.decisionLog.close();
		}
		finally {
			try {
				this.server.close();
			}
			finally {
				this.lock.close();
			}
		}
	}

	/** The exclusive lock on a data directory's {@value #LOCK_FILE}, held while a coordinator runs. */
	private static final class DirectoryLock implements AutoCloseable {

		private final FileChannel channel;

		private final FileLock lock;

		private DirectoryLock(FileChannel channel, FileLock lock) {
			this.channel = channel;
			this.lock = lock;
		}

		/**
		 * Locks a data directory.
		 * @throws IOException if another process or another coordinator of this JVM holds it, or
		 *     the lock file cannot be written
		 */
		static DirectoryLock of(Path dataDir) throws IOException {
			Path file = dataDir.resolve(LOCK_FILE);
			FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
			FileLock lock;
			try {
				lock = channel.tryLock();
			}
			catch (OverlappingFileLockException ex) {
				lock = null; // another coordinator of this JVM
			}
			catch (IOException | RuntimeException ex) {
				channel.close();
				throw ex;
			}
			if (lock == null) {
				channel.close();
				throw new IOException("the data directory " + dataDir + " is in use by another embedded coordinator (another "
						+ "process, or another coordinator of this JVM, holds " + file + ")");
			}
			return new DirectoryLock(channel, lock);
		}

		@Override
		public void close() {
			try {
				this.lock.release();
			}
			catch (IOException ex) {
				logger.debug("Could not release {}: {}", LOCK_FILE, ex.toString());
			}
			try {
				this.channel.close();
			}
			catch (IOException ex) {
				logger.debug("Could not close {}: {}", LOCK_FILE, ex.toString());
			}
		}

	}

	/**
	 * Settings of an {@link EmbeddedCoordinator}.
	 *
	 * @since 0.1.0
	 */
	public static final class Builder {

		private static final int PORT_ATTEMPTS = 3;

		private static final Duration FIRST_ELECTION_TIMEOUT_MIN = Duration.ofMillis(10);

		private static final Duration FIRST_ELECTION_TIMEOUT_MAX = Duration.ofMillis(20);

		private final Path dataDir;

		private Duration startTimeout = Duration.ofSeconds(30);

		private @Nullable Consumer<CoordinatorServerBuilder> serverCustomizer;

		private @Nullable Consumer<RatisDecisionLogBuilder> clientCustomizer;

		private Builder(Path dataDir) {
			this.dataDir = Objects.requireNonNull(dataDir, "dataDir");
		}

		/**
		 * Sets how long {@link #start()} waits for the peer to become a ready leader.
		 * @param timeout the timeout, positive (default 30 s)
		 * @return this builder
		 */
		public Builder startTimeout(Duration timeout) {
			this.startTimeout = Objects.requireNonNull(timeout, "timeout");
			return this;
		}

		/**
		 * Sets a callback that adjusts the peer's settings (election timeouts, snapshot
		 * threshold).
		 * @param customizer the callback, or {@code null}
		 * @return this builder
		 */
		public Builder server(@Nullable Consumer<CoordinatorServerBuilder> customizer) {
			this.serverCustomizer = customizer;
			return this;
		}

		/**
		 * Sets a callback that adjusts the decision log's settings (batching, retries,
		 * retention).
		 * @param customizer the callback, or {@code null}
		 * @return this builder
		 */
		public Builder client(@Nullable Consumer<RatisDecisionLogBuilder> customizer) {
			this.clientCustomizer = customizer;
			return this;
		}

		/**
		 * Starts the peer, waits until it is a ready leader, and connects a decision log.
		 * @return the running coordinator
		 * @throws IOException if the data directory cannot be used (another coordinator holds it:
		 *     see the class javadoc) or no port can be bound
		 * @throws TimeoutException if the peer does not lead within the start timeout
		 * @throws InterruptedException if interrupted while waiting
		 */
		public EmbeddedCoordinator start() throws IOException, TimeoutException, InterruptedException {
			Files.createDirectories(this.dataDir);
			DirectoryLock lock = DirectoryLock.of(this.dataDir);
			long startNanos = System.nanoTime();
			CoordinatorServer server;
			try {
				server = startServer();
			}
			catch (IOException | RuntimeException ex) {
				lock.close();
				throw ex;
			}
			try {
				server.awaitLeader(this.startTimeout);
				RatisDecisionLogBuilder client = RatisDecisionLog.builder(server.group());
				// each instance has its own embedded coordinator: its leases cannot see another instance
				client.sharedByInstances(false);
				if (!server.tls()) {
					// commands go straight to the peer of this JVM, not through a loopback gRPC connection (an
					// open access policy: the peer takes requests without its interceptor's identity envelope)
					client.inProcessPeer(PEER_ID, server.clientRequests());
				}
				if (this.clientCustomizer != null) {
					this.clientCustomizer.accept(client);
				}
				RatisDecisionLog decisionLog = client.build();
				logger.info("Embedded coordinator serving on {} from {} after {} ms (snapshot index {}, {} records)",
						server.group().peers().get(PEER_ID), this.dataDir, (System.nanoTime() - startNanos) / 1_000_000,
						server.stateMachine().loadedSnapshotIndex(), server.stateMachine().counts().total());
				return new EmbeddedCoordinator(server, decisionLog, lock);
			}
			catch (TimeoutException | InterruptedException | RuntimeException ex) {
				try {
					server.close();
				}
				finally {
					lock.close();
				}
				throw ex;
			}
		}

		private CoordinatorServer startServer() throws IOException {
			Integer previous = readPort();
			IOException failure = null;
			for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
				int port = (attempt == 0 && previous != null && isFree(previous)) ? previous : freePort();
				CoordinatorGroup group = CoordinatorGroup.of(Map.of(PEER_ID, "127.0.0.1:" + port));
				CoordinatorServerBuilder builder = CoordinatorServer.builder(PEER_ID, group, this.dataDir)
					.bindHost("127.0.0.1")
					.firstElectionTimeout(FIRST_ELECTION_TIMEOUT_MIN, FIRST_ELECTION_TIMEOUT_MAX);
				if (this.serverCustomizer != null) {
					this.serverCustomizer.accept(builder);
				}
				CoordinatorServer server = builder.build();
				try {
					server.start();
					Files.writeString(this.dataDir.resolve(PORT_FILE), Integer.toString(port), StandardCharsets.UTF_8);
					return server;
				}
				catch (IOException ex) {
					server.close();
					logger.debug("Embedded coordinator could not start on port {}: {}", port, ex.toString());
					failure = ex;
				}
			}
			throw Objects.requireNonNull(failure);
		}

		private @Nullable Integer readPort() {
			Path file = this.dataDir.resolve(PORT_FILE);
			try {
				return Files.exists(file) ? Integer.valueOf(Files.readString(file, StandardCharsets.UTF_8).trim()) : null;
			}
			catch (IOException | NumberFormatException ex) {
				logger.debug("Ignoring unreadable {}: {}", file, ex.toString());
				return null;
			}
		}

		private static boolean isFree(int port) {
			try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
				return true;
			}
			catch (IOException ex) {
				return false;
			}
		}

		private static int freePort() throws IOException {
			try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
				return socket.getLocalPort();
			}
		}

	}

}
