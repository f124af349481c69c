package dev.tandem.coordinator.service;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.transaction.Decision;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.util.CodeInjectionForTesting;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Three coordinator servers (three Spring Boot applications, each hosting one peer) in one JVM,
 * checked through their HTTP endpoints: readiness, health details, Prometheus metrics, a follower
 * that falls behind (DEGRADED, not ready, listed by the leader) and catches up again, and the
 * leadership hand-over when the leader's application shuts down.
 */
class CoordinatorServerApplicationTests {

	private static final Logger logger = LoggerFactory.getLogger(CoordinatorServerApplicationTests.class);

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final JsonMapper json = JsonMapper.builder().build();

	@TempDir
	Path dataDir;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private final Map<String, ConfigurableApplicationContext> servers = new LinkedHashMap<>();

	private RatisDecisionLog client;

	@AfterEach
	void close() {
		if (this.client != null) {
			this.client.close();
		}
		// One after the other: a closing leader hands over to a peer that is still running
		this.servers.values().forEach(ConfigurableApplicationContext::close);
	}

	@Test
	void threeServersJoinOneGroupShowTheirIndexesReportALaggingFollowerAndHandOverLeadershipOnShutdown() throws Exception {
		Map<String, String> peers = new LinkedHashMap<>();
		for (String id : List.of("n1", "n2", "n3")) {
			peers.put(id, "127.0.0.1:" + freePort());
		}
		String peerList = peers.entrySet()
			.stream()
			.map((peer) -> peer.getKey() + "=" + peer.getValue())
			.collect(Collectors.joining(","));
		List<CompletableFuture<Void>> starts = new ArrayList<>();
		for (String id : peers.keySet()) {
			starts.add(CompletableFuture.runAsync(() -> start(id, peerList)));
		}
		CompletableFuture.allOf(starts.toArray(CompletableFuture[]::new)).join();

		// Ready only once joined; then every server agrees on leader and term
		await().atMost(TIMEOUT)
			.untilAsserted(() -> assertThat(peers.keySet()).allSatisfy(
					(id) -> assertThat(get(id, "/actuator/health/readiness").statusCode()).isEqualTo(200)));
		Map<String, JsonNode> details = peerDetails();
		String leader = details.get("n1").get("leader").asString();
		long term = details.get("n1").get("term").asLong();
		assertThat(details.values()).allSatisfy((peer) -> {
			assertThat(peer.get("leader").asString()).isEqualTo(leader);
			assertThat(peer.get("term").asLong()).isEqualTo(term);
			assertThat(peer.get("peers").size()).isEqualTo(3);
		});
		assertThat(details.values().stream().filter((peer) -> peer.get("role").asString().equals("LEADER")))
			.hasSize(1);
		assertThat(details.get(leader).get("role").asString()).isEqualTo("LEADER");

		// Decisions show in the indexes and in the metrics of every peer
		this.client = RatisDecisionLog.builder(CoordinatorGroup.parse(peerList)).purgeInterval(Duration.ZERO).build();
		for (int i = 0; i < 50; i++) {
			this.client.decide(new Decision("t-" + i, "app.i1", i,
					List.of(new Decision.ParticipantRecord("east", "app.east.i1.0", 7, (short) 0, "markers", 0, i))),
					TIMEOUT);
		}
		await().atMost(TIMEOUT).untilAsserted(() -> assertThat(peers.keySet()).allSatisfy((id) -> {
			JsonNode peer = peerDetails().get(id);
			assertThat(peer.get("appliedIndex").asLong()).isEqualTo(peer.get("commitIndex").asLong());
			assertThat(peer.get("applyLag").asLong()).isZero();
			assertThat(get(id, "/actuator/prometheus").body())
				.contains("tandem_coordinator_applied_decisions_total{peer=\"" + id + "\"} 50.0")
				.contains("tandem_coordinator_records{peer=\"" + id + "\",state=\"decided\"} 50.0")
				.contains("tandem_coordinator_peer_term{peer=\"" + id + "\"} " + term + ".0");
		}));
		assertThat(get(leader, "/actuator/prometheus").body())
			.contains("tandem_coordinator_peer_leader{peer=\"" + leader + "\"} 1.0");

		// A follower that hears the leader but receives no entries is DEGRADED (not ready) once it
		// trailed for longer than the threshold, and the leader lists it; it recovers when entries flow
		String lagging = peers.keySet().stream().filter((id) -> !id.equals(leader)).findFirst().orElseThrow();
		try (HeldEntries held = HeldEntries.to(lagging)) {
			for (int i = 0; i < 5; i++) {
				this.client.decide(new Decision("t-lag-" + i, "app.i1", i,
						List.of(new Decision.ParticipantRecord("east", "app.east.i1.0", 7, (short) 0, "markers", 0, i))),
						TIMEOUT);
			}
			await().atMost(TIMEOUT).untilAsserted(() -> {
				HttpResponse<String> readiness = get(lagging, "/actuator/health/readiness");
				assertThat(readiness.statusCode()).isEqualTo(503);
				assertThat(json.readTree(readiness.body()).get("status").asString()).isEqualTo("DEGRADED");
				JsonNode follower = peerDetails().get(lagging);
				assertThat(follower.get("followerLag").asLong()).isGreaterThanOrEqualTo(5);
				assertThat(follower.get("behindLeaderMs").asLong()).isGreaterThan(1_000);
				JsonNode leading = peerDetails().get(leader);
				assertThat(leading.get("laggingFollowers").toString()).isEqualTo("[\"" + lagging + "\"]");
				assertThat(get(leader, "/actuator/health/readiness").statusCode()).isEqualTo(200);
				assertThat(gauge(lagging, "tandem_coordinator_peer_follower_lag{peer=\"" + lagging + "\"}"))
					.isGreaterThanOrEqualTo(5);
				assertThat(gauge(lagging, "tandem_coordinator_peer_behind_leader_seconds{peer=\"" + lagging + "\"}"))
					.isGreaterThan(1);
				assertThat(gauge(leader,
						"tandem_coordinator_follower_lag{follower=\"" + lagging + "\",peer=\"" + leader + "\"}"))
					.isGreaterThanOrEqualTo(5);
			});
		}
		await().atMost(TIMEOUT).untilAsserted(() -> {
			assertThat(get(lagging, "/actuator/health/readiness").statusCode()).isEqualTo(200);
			assertThat(peerDetails().get(lagging).get("followerLag").asLong()).isZero();
			assertThat(peerDetails().get(leader).get("laggingFollowers").size()).isZero();
			assertThat(gauge(lagging, "tandem_coordinator_peer_follower_lag{peer=\"" + lagging + "\"}")).isZero();
			assertThat(gauge(leader,
					"tandem_coordinator_follower_lag{follower=\"" + lagging + "\",peer=\"" + leader + "\"}"))
				.isZero();
		});

		// Shutting the leader's application down hands leadership over before its peer stops
		CoordinatorPeerLifecycle oldLeader = this.servers.get(leader).getBean(CoordinatorPeerLifecycle.class);
		List<String> others = peers.keySet().stream().filter((id) -> !id.equals(leader)).toList();
		long closeStart = System.nanoTime();
		CompletableFuture<Void> closing = CompletableFuture.runAsync(() -> this.servers.remove(leader).close());
		String newLeader = await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(5)).until(() -> others.stream()
			.filter((id) -> this.servers.get(id).getBean(CoordinatorServer.class).status().leaderReady())
			.findFirst(), Optional::isPresent).orElseThrow();
		long electedAfter = System.nanoTime() - closeStart;
		closing.join();
		logger.info("Leader '{}' shut down: '{}' led {} ms after the close began ({} ms until closed)", leader,
				newLeader, TimeUnit.NANOSECONDS.toMillis(electedAfter),
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closeStart));
		assertThat(oldLeader.transferredTo()).contains(newLeader);
		await().atMost(TIMEOUT).untilAsserted(() -> {
			Map<String, JsonNode> remaining = peerDetails();
			assertThat(remaining.values()).allSatisfy((peer) -> {
				assertThat(peer.get("leader").asString()).isEqualTo(newLeader);
				assertThat(peer.get("term").asLong()).isEqualTo(term + 1);
			});
			assertThat(others).allSatisfy(
					(id) -> assertThat(get(id, "/actuator/health/readiness").statusCode()).isEqualTo(200));
		});
		assertThat(this.client.inDoubt("app.i1", TIMEOUT)).hasSize(55);
	}

	private void start(String peerId, String peerList) {
		// Command-line arguments, as a container would pass them, win over application.yml
		ConfigurableApplicationContext context = new SpringApplicationBuilder(CoordinatorServerApplication.class)
			.run("--server.port=0", "--spring.jmx.enabled=false", "--tandem.coordinator.server.peer-id=" + peerId,
					"--tandem.coordinator.server.peers=" + peerList,
					"--tandem.coordinator.server.data-dir=" + this.dataDir.resolve(peerId),
					"--tandem.coordinator.server.bind-host=127.0.0.1",
					"--tandem.coordinator.server.plaintext-allowed=true",
					"--tandem.coordinator.server.health.catch-up-threshold=1s");
		synchronized (this.servers) {
			this.servers.put(peerId, context);
		}
	}

	private Map<String, JsonNode> peerDetails() throws IOException, InterruptedException {
		Map<String, JsonNode> details = new LinkedHashMap<>();
		for (String id : this.servers.keySet()) {
			JsonNode health = json.readTree(get(id, "/actuator/health").body());
			details.put(id, health.get("components").get("coordinatorPeer").get("details"));
		}
		return details;
	}

	private HttpResponse<String> get(String peerId, String path) throws IOException, InterruptedException {
		String port = this.servers.get(peerId).getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(5))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private double gauge(String peerId, String series) throws IOException, InterruptedException {
		String body = get(peerId, "/actuator/prometheus").body();
		return body.lines()
			.filter((line) -> line.startsWith(series + " "))
			.mapToDouble((line) -> Double.parseDouble(line.substring(series.length() + 1).trim()))
			.findFirst()
			.orElseThrow(() -> new AssertionError(series + " not in the metrics of " + peerId));
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

	/**
	 * Holds every append entries request that carries log entries on its way to one peer, while
	 * heartbeats still reach it (Ratis' test hook in its main jar, as the coordinator module's
	 * {@code NetworkPartition} does): the peer keeps following the leader but falls behind.
	 */
	private static final class HeldEntries implements AutoCloseable {

		private static final String APPEND_ENTRIES = "RaftServerImpl.appendEntries";

		private final String peerId;

		private boolean released;

		private HeldEntries(String peerId) {
			this.peerId = peerId;
		}

		static HeldEntries to(String peerId) {
			HeldEntries held = new HeldEntries(peerId);
			CodeInjectionForTesting.put(APPEND_ENTRIES, held::hold);
			return held;
		}

		private boolean hold(Object localId, Object remoteId, Object... args) {
			if (!localId.toString().equals(this.peerId) || args.length < 2
					|| !(args[1] instanceof AppendEntriesRequestProto request) || request.getEntriesCount() == 0) {
				return false;
			}
			synchronized (this) {
				while (!this.released) {
					try {
						wait();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						return true;
					}
				}
			}
			return true;
		}

		@Override
		public void close() {
			synchronized (this) {
				this.released = true;
				notifyAll();
			}
			CodeInjectionForTesting.remove(APPEND_ENTRIES);
		}

	}

}
