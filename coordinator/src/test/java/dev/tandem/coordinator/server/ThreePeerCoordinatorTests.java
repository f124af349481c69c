package dev.tandem.coordinator.server;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.client.RatisDecisionLogBuilder;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests of a 3-peer coordinator in one JVM: follower linearizable reads and leader failover.
 */
class ThreePeerCoordinatorTests {

	private static final Logger logger = LoggerFactory.getLogger(ThreePeerCoordinatorTests.class);

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	@TempDir
	Path dataDir;

	private final Map<String, CoordinatorServer> servers = new LinkedHashMap<>();

	private final List<RatisDecisionLog> clients = new ArrayList<>();

	@AfterEach
	void close() {
		this.clients.forEach(RatisDecisionLog::close);
		this.servers.values().forEach(CoordinatorServer::close);
	}

	@Test
	void followerReadsSeeAcknowledgedDecisionsAndDecisionsSurviveALeaderLoss() throws Exception {
		CoordinatorGroup group = startGroup();
		String leader = this.servers.values().iterator().next().awaitLeader(TIMEOUT);
		String follower = group.peers().keySet().stream().filter((id) -> !id.equals(leader)).findFirst().orElseThrow();
		RatisDecisionLog writer = client(RatisDecisionLog.builder(group));
		RatisDecisionLog followerReader = client(RatisDecisionLog.builder(group).readFrom(follower));

		List<Decision> decisions = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			Decision decision = decision("t-" + i, "app.i1", i);
			writer.decide(decision, TIMEOUT);
			assertThat(followerReader.state(decision.transactionId(), TIMEOUT)).isEqualTo(DecisionState.DECIDED);
			decisions.add(decision);
		}
		assertThat(followerReader.inDoubt("app.i1", TIMEOUT)).isEqualTo(decisions);

		this.servers.remove(leader).close();
		long failoverStart = System.nanoTime();
		Decision afterFailover = decision("t-after", "app.i1", 1_000);
		writer.decide(afterFailover, TIMEOUT);
		logger.info("Leader '{}' closed: next decide acknowledged after {} ms", leader,
				(System.nanoTime() - failoverStart) / 1_000_000);
		decisions.add(afterFailover);
		assertThat(followerReader.inDoubt("app.i1", TIMEOUT)).isEqualTo(decisions);
		String newLeader = this.servers.get(follower).awaitLeader(TIMEOUT);
		assertThat(newLeader).isNotEqualTo(leader);
		await().atMost(TIMEOUT)
			.untilAsserted(() -> assertThat(this.servers.values())
				.allSatisfy((server) -> assertThat(server.stateMachine().counts().decided()).isEqualTo(51)));
	}

	private CoordinatorGroup startGroup() throws IOException {
		Map<String, String> peers = new LinkedHashMap<>();
		IntStream.rangeClosed(1, 3).forEach((i) -> peers.put("n" + i, "127.0.0.1:" + freePort()));
		CoordinatorGroup group = CoordinatorGroup.of(peers);
		for (String id : peers.keySet()) {
			CoordinatorServer server = CoordinatorServer.builder(id, group, this.dataDir.resolve(id))
				.bindHost("127.0.0.1")
				.build();
			this.servers.put(id, server);
			server.start();
		}
		return group;
	}

	private RatisDecisionLog client(RatisDecisionLogBuilder builder) {
		RatisDecisionLog client = builder.build();
		this.clients.add(client);
		return client;
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}


}
