package dev.tandem.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.coordinator.security.AccessPolicy;
import dev.tandem.coordinator.security.CoordinatorTls;
import dev.tandem.test.TestCertificates;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.core.NestedExceptionUtils;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.tandem.actuate.CoordinatorHealthIndicator;
import dev.tandem.autoconfigure.actuate.TandemActuatorAutoConfiguration;
import dev.tandem.autoconfigure.coordinator.TandemCoordinatorAutoConfiguration;
import dev.tandem.autoconfigure.failover.TandemFailoverAutoConfiguration;
import dev.tandem.autoconfigure.kafka.TandemKafkaAutoConfiguration;
import dev.tandem.autoconfigure.transaction.TandemTransactionAutoConfiguration;
import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.CoordinatorServerBuilder;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactionTemplate;
import dev.tandem.transaction.DecisionLog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An app in {@code tandem.coordinator.mode=remote} against a 3-peer coordinator group (three
 * {@link CoordinatorServer}s in this JVM on loopback gRPC, as the {@code coordinator-server}
 * app hosts them): cross-cluster transactions commit with their decisions replicated to every
 * peer, and keep committing after the coordinator's leader stops.
 */
class RemoteCoordinatorTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@TempDir
	Path dataDir;

	private final List<CoordinatorServer> peers = new ArrayList<>();

	@BeforeAll
	static void createTopics() {
		kafka.cluster("east").createTopic("remote-east", 1, (short) 1);
		kafka.cluster("west").createTopic("remote-west", 1, (short) 1);
		kafka.cluster("east").createTopic("tls-east", 1, (short) 1);
		kafka.cluster("west").createTopic("tls-west", 1, (short) 1);
	}

	@AfterEach
	void stopPeers() {
		this.peers.forEach(CoordinatorServer::close);
	}

	@Test
	void transactionsCommitThroughARemoteGroupAndSurviveTheLossOfItsLeader() throws Exception {
		commitThroughARemoteGroupAndLoseItsLeader("remote", (peer) -> peer, "tandem.coordinator.plaintext-allowed=true");
	}

	@Test
	void overMutualTlsTheAppsIdentityCommitsAndSurvivesTheLossOfTheLeader() throws Exception {
		TestCertificates authority = TestCertificates.create(this.dataDir.resolve("certs"), "ca");
		TestCertificates.Identity peerIdentity = authority.issue("coordinator");
		TestCertificates.Identity app = authority.issue("remote-app");
		CoordinatorTls peerTls = CoordinatorTls.of(peerIdentity.keyManager(), peerIdentity.trustManager());
		AccessPolicy policy = AccessPolicy.builder()
			.peers(List.of("coordinator"))
			.app("remote-app", List.of("remote"))
			.build();
		String bundle = "spring.ssl.bundle.jks.coordinator.";
		commitThroughARemoteGroupAndLoseItsLeader("tls", (peer) -> peer.tls(peerTls).accessPolicy(policy),
				"tandem.coordinator.ssl.bundle=coordinator",
				bundle + "keystore.location=" + app.keyStore().toUri(),
				bundle + "keystore.password=" + TestCertificates.PASSWORD, bundle + "keystore.type=PKCS12",
				bundle + "truststore.location=" + app.trustStore().toUri(),
				bundle + "truststore.password=" + TestCertificates.PASSWORD, bundle + "truststore.type=PKCS12");
		assertThat(this.peers).allSatisfy((peer) -> assertThat(peer.tls()).isTrue());
	}

	@Test
	void aRemoteCoordinatorWithoutAnSslBundleFailsStartUpNamingTheProperties() {
		app(Map.of("n1", "127.0.0.1:1")).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(TandemConfigurationException.class)
				.hasMessageContaining("no SSL bundle is set");
			TandemConfigurationException failure = (TandemConfigurationException) NestedExceptionUtils
				.getRootCause(context.getStartupFailure());
			assertThat(failure.getProperty()).isEqualTo("tandem.coordinator.ssl.bundle");
			assertThat(failure.getAction()).contains("tandem.coordinator.plaintext-allowed=true");
		});
	}

	private void commitThroughARemoteGroupAndLoseItsLeader(String topic, UnaryOperator<CoordinatorServerBuilder> security,
			String... appProperties) throws Exception {
		Map<String, String> addresses = new LinkedHashMap<>();
		for (String id : List.of("n1", "n2", "n3")) {
			addresses.put(id, "127.0.0.1:" + freePort());
		}
		CoordinatorGroup group = CoordinatorGroup.of(addresses);
		for (String id : addresses.keySet()) {
			CoordinatorServer peer = security.apply(CoordinatorServer.builder(id, group, this.dataDir.resolve(id))
				.bindHost("127.0.0.1"))
				.build();
			this.peers.add(peer);
			peer.start();
		}
		String leader = this.peers.get(0).awaitLeader(TIMEOUT);

		app(addresses).withPropertyValues(appProperties).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(DecisionLog.class)).isInstanceOf(RatisDecisionLog.class);
			CrossClusterTransactionTemplate template = context.getBean(CrossClusterTransactionTemplate.class);
			Health health = context.getBean(CoordinatorHealthIndicator.class).health(true);
			assertThat(health.getStatus()).isEqualTo(Status.UP);

			writeBoth(template, topic, "before");
			// Every peer applies the decision (and its completion), not only the leader.
			await().atMost(TIMEOUT).untilAsserted(() -> this.peers
				.forEach((peer) -> assertThat(peer.stateMachine().counts().total()).isEqualTo(1)));

			peer(leader).close();
			writeBoth(template, topic, "after");
			List<CoordinatorServer> survivors = this.peers.stream().filter((peer) -> !peer.peerId().equals(leader))
				.toList();
			await().atMost(TIMEOUT).untilAsserted(() -> survivors
				.forEach((peer) -> assertThat(peer.stateMachine().counts().total()).isEqualTo(2)));
			assertThat(survivors.stream().filter(CoordinatorServer::isLeader)).hasSize(1);
		});

		assertThat(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), topic + "-east"))
			.containsExactly("before", "after");
		assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), topic + "-west"))
			.containsExactly("before", "after");
	}

	private static void writeBoth(CrossClusterTransactionTemplate template, String topic, String value) {
		byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
		template.execute((transaction) -> {
			transaction.send("east", new ProducerRecord<>(topic + "-east", bytes));
			transaction.send("west", new ProducerRecord<>(topic + "-west", bytes));
			return null;
		});
	}

	private ApplicationContextRunner app(Map<String, String> addresses) {
		List<String> peerList = addresses.entrySet().stream().map((e) -> e.getKey() + "=" + e.getValue()).toList();
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, TandemFailoverAutoConfiguration.class,
					TandemAutoConfiguration.class, TandemCoordinatorAutoConfiguration.class,
					TandemTransactionAutoConfiguration.class, TandemKafkaAutoConfiguration.class,
					TandemActuatorAutoConfiguration.class))
			.withPropertyValues("tandem.coordinator.mode=remote",
					"tandem.coordinator.peers=" + String.join(",", peerList),
					"tandem.clusters.east.bootstrap-servers=" + kafka.cluster("east").bootstrapServers(),
					"tandem.clusters.west.bootstrap-servers=" + kafka.cluster("west").bootstrapServers(),
					"tandem.transaction.id-prefix=remote", "tandem.transaction.instance-id=remote-tests");
	}

	private CoordinatorServer peer(String id) {
		return this.peers.stream().filter((peer) -> peer.peerId().equals(id)).findFirst().orElseThrow();
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
