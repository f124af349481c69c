package dev.tandem.coordinator.service;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;

import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.PeerRole;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests of the coordinator service's configuration: property binding, start-up mistakes and a
 * single-peer group reporting health.
 */
class CoordinatorServerPropertiesTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withUserConfiguration(CoordinatorServerConfiguration.class);

	@TempDir
	Path dataDir;

	@Test
	void defaultsMatchTheDocumentedValues() {
		CoordinatorServerProperties properties = new CoordinatorServerProperties();
		assertThat(properties.getElectionTimeout().getMin()).isEqualTo(Duration.ofMillis(150));
		assertThat(properties.getElectionTimeout().getMax()).isEqualTo(Duration.ofMillis(300));
		assertThat(properties.getSnapshot().getThreshold()).isEqualTo(10_000);
		assertThat(properties.getShutdown().isTransferLeadership()).isTrue();
		assertThat(properties.getDataDir()).isEqualTo(Path.of("data"));
	}

	@Test
	void missingPeerIdFailsStartUpNamingTheProperty() {
		this.contextRunner.withPropertyValues("tandem.coordinator.server.peers=n1=127.0.0.1:1")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("tandem.coordinator.server.peer-id is not set"));
	}

	@Test
	void peerIdOutsideThePeerListFailsStartUpNamingBothProperties() {
		this.contextRunner
			.withPropertyValues("tandem.coordinator.server.peer-id=n4",
					"tandem.coordinator.server.peers=n1=a:1,n2=b:1,n3=c:1")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("peer-id 'n4' is not in tandem.coordinator.server.peers [n1, n2, n3]"));
	}

	@Test
	void malformedPeerListFailsStartUp() {
		this.contextRunner
			.withPropertyValues("tandem.coordinator.server.peer-id=n1", "tandem.coordinator.server.peers=n1:9872")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("tandem.coordinator.server.peers is invalid")
				.rootCause()
				.hasMessageContaining("'n1:9872' is not id=host:port"));
	}

	@Test
	void singlePeerBindsItsSettingsStartsAndReportsUpOnceItLeads() throws Exception {
		int port = freePort();
		this.contextRunner
			.withPropertyValues("tandem.coordinator.server.peer-id=solo",
					"tandem.coordinator.server.peers=solo=127.0.0.1:" + port,
					"tandem.coordinator.server.data-dir=" + this.dataDir,
					"tandem.coordinator.server.bind-host=127.0.0.1",
					"tandem.coordinator.server.election-timeout.min=100ms",
					"tandem.coordinator.server.election-timeout.max=200ms",
					"tandem.coordinator.server.snapshot.threshold=50")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CoordinatorServerProperties properties = context.getBean(CoordinatorServerProperties.class);
				assertThat(properties.getElectionTimeout().getMax()).isEqualTo(Duration.ofMillis(200));
				assertThat(properties.getSnapshot().getThreshold()).isEqualTo(50);
				CoordinatorServer server = context.getBean(CoordinatorServer.class);
				CoordinatorPeerHealthIndicator indicator = context.getBean(CoordinatorPeerHealthIndicator.class);
				await().atMost(Duration.ofSeconds(20))
					.untilAsserted(() -> assertThat(indicator.health().getStatus()).isEqualTo(Status.UP));
				Health health = indicator.health();
				assertThat(health.getDetails()).containsEntry("peerId", "solo")
					.containsEntry("role", PeerRole.LEADER)
					.containsEntry("leader", "solo")
					.containsKeys("term", "commitIndex", "appliedIndex", "lastLogIndex", "applyLag", "peers");
				assertThat(server.dataDir()).isEqualTo(this.dataDir);
			});
	}

	private static int freePort() throws Exception {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

}
