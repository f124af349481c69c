package dev.tandem.coordinator.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.client.RatisDecisionLogBuilder;
import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.CoordinatorServerBuilder;
import dev.tandem.coordinator.server.PeerRole;
import dev.tandem.coordinator.server.PeerStatus;

import static org.awaitility.Awaitility.await;

/**
 * A coordinator group of several peers in this JVM (loopback gRPC, one data directory per
 * peer), with peers that can be stopped and restarted on the same port and directory, and
 * clients that are closed with the group. Not thread-safe: drive it from the test thread.
 */
public final class CoordinatorCluster implements AutoCloseable {

	/** Lower bound of the election timeout the peers use (the server default). */
	public static final Duration ELECTION_TIMEOUT_MIN = Duration.ofMillis(150);

	/** Upper bound of the election timeout the peers use (the server default). */
	public static final Duration ELECTION_TIMEOUT_MAX = Duration.ofMillis(300);

	private final Path dataDir;

	private final CoordinatorGroup group;

	private final Consumer<CoordinatorServerBuilder> customizer;

	private final Map<String, CoordinatorServer> running = new LinkedHashMap<>();

	private final List<RatisDecisionLog> clients = new ArrayList<>();

	private CoordinatorCluster(Path dataDir, CoordinatorGroup group, Consumer<CoordinatorServerBuilder> customizer) {
		this.dataDir = dataDir;
		this.group = group;
		this.customizer = customizer;
	}

	/**
	 * Starts a group of {@code size} peers named {@code n1..nN} on free loopback ports.
	 * @param dataDir parent of the peers' data directories
	 * @param size number of peers
	 * @return the running group (no leader awaited)
	 */
	public static CoordinatorCluster start(Path dataDir, int size) {
		return start(dataDir, size, (server) -> {
		});
	}

	/**
	 * Starts a group of {@code size} peers with customised settings.
	 * @param dataDir parent of the peers' data directories
	 * @param size number of peers
	 * @param customizer adjusts every peer's settings (also on restart)
	 * @return the running group (no leader awaited)
	 */
	public static CoordinatorCluster start(Path dataDir, int size, Consumer<CoordinatorServerBuilder> customizer) {
		Map<String, String> peers = new LinkedHashMap<>();
		for (int i = 1; i <= size; i++) {
			peers.put("n" + i, "127.0.0.1:" + freePort());
		}
		CoordinatorCluster cluster = new CoordinatorCluster(dataDir, CoordinatorGroup.of(peers), customizer);
		try {
			peers.keySet().forEach(cluster::startPeer);
		}
		catch (RuntimeException ex) {
			cluster.close();
			throw ex;
		}
		return cluster;
	}

	/**
	 * Returns the group.
	 * @return the group
	 */
	public CoordinatorGroup group() {
		return this.group;
	}

	/**
	 * Returns a running peer.
	 * @param peerId the peer id
	 * @return the peer
	 * @throws IllegalStateException if it is stopped
	 */
	public CoordinatorServer server(String peerId) {
		CoordinatorServer server = this.running.get(peerId);
		if (server == null) {
			throw new IllegalStateException("Peer " + peerId + " is not running");
		}
		return server;
	}

	/**
	 * Returns the status of every running peer.
	 * @return the statuses in peer order
	 */
	public List<PeerStatus> statuses() {
		return this.running.values().stream().map(CoordinatorServer::status).toList();
	}

	/**
	 * Returns the ready leader with the highest term among the running peers, if any (a
	 * deposed leader cut off from the others may still think it leads, in an older term).
	 * @return the leader's id
	 */
	public Optional<String> readyLeader() {
		return statuses().stream()
			.filter((status) -> status.role() == PeerRole.LEADER && status.leaderReady())
			.max(Comparator.comparingLong(PeerStatus::term))
			.map(PeerStatus::peerId);
	}

	/**
	 * Waits for a ready leader.
	 * @param timeout how long to wait
	 * @return the leader's id
	 */
	public String awaitLeader(Duration timeout) {
		return await().atMost(timeout).pollInterval(Duration.ofMillis(10)).until(this::readyLeader, Optional::isPresent)
			.orElseThrow();
	}

	/**
	 * Returns the running peers other than the given one.
	 * @param peerId a peer id
	 * @return the other running peers' ids, in peer order
	 */
	public List<String> othersThan(String peerId) {
		return this.running.keySet().stream().filter((id) -> !id.equals(peerId)).toList();
	}

	/**
	 * Stops a peer (Ratis close: about a second).
	 * @param peerId the peer id
	 */
	public void stop(String peerId) {
		server(peerId);
		this.running.remove(peerId).close();
	}

	/**
	 * Starts a stopped peer again on its port and data directory (it recovers its log).
	 * @param peerId the peer id
	 * @return the started peer
	 */
	public CoordinatorServer restart(String peerId) {
		if (this.running.containsKey(peerId)) {
			throw new IllegalStateException("Peer " + peerId + " is running");
		}
		return startPeer(peerId);
	}

	/**
	 * Stops every running peer at once (in parallel, as a whole group going down), keeping
	 * the clients: they reconnect when the peers are back.
	 * @return the stopped peers' ids, in peer order
	 */
	public List<String> stopAll() {
		List<String> stopped = List.copyOf(this.running.keySet());
		closeRunning();
		return stopped;
	}

	/**
	 * Starts the given stopped peers again, one after the other, on their ports and data
	 * directories (each recovers its snapshot and log).
	 * @param peerIds the peers to start
	 */
	public void restartAll(List<String> peerIds) {
		peerIds.forEach(this::restart);
	}

	/**
	 * Creates a decision log client of this group, closed with the group.
	 * @param settings adjusts the client's settings
	 * @return the client
	 */
	public RatisDecisionLog client(UnaryOperator<RatisDecisionLogBuilder> settings) {
		RatisDecisionLog client = settings.apply(RatisDecisionLog.builder(this.group).purgeInterval(Duration.ZERO))
			.build();
		this.clients.add(client);
		return client;
	}

	/**
	 * Closes the clients, then every running peer (in parallel).
	 */
	@Override
	public void close() {
		this.clients.forEach(RatisDecisionLog::close);
		this.clients.clear();
		closeRunning();
	}

	private void closeRunning() {
		CompletableFuture
			.allOf(this.running.values()
				.stream()
				.map((server) -> CompletableFuture.runAsync(server::close))
				.toArray(CompletableFuture[]::new))
			.join();
		this.running.clear();
	}

	private CoordinatorServer startPeer(String peerId) {
		try {
			CoordinatorServerBuilder builder = CoordinatorServer.builder(peerId, this.group, this.dataDir.resolve(peerId))
				.bindHost("127.0.0.1")
				.electionTimeout(ELECTION_TIMEOUT_MIN, ELECTION_TIMEOUT_MAX);
			this.customizer.accept(builder);
			CoordinatorServer server = builder.build();
			this.running.put(peerId, server);
			server.start();
			return server;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Peer " + peerId + " did not start", ex);
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
