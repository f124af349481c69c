package dev.tandem.coordinator.service;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.server.PeerRole;
import dev.tandem.coordinator.state.CoordinatorQuotas;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.security.CoordinatorAccessDeniedException;
import dev.tandem.coordinator.security.CoordinatorTls;
import dev.tandem.test.TestCertificates;
import dev.tandem.transaction.Decision;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Tests of the coordinator service's configuration: property binding, start-up mistakes and a
 * single-peer group reporting health.
 */
class CoordinatorServerPropertiesTests {

	private static final String T1 = "orders.router-0-" + new UUID(0, 1);

	private static final String T2 = "orders.router-1-" + new UUID(0, 2);

	private static final String T3 = "orders.router-1-" + new UUID(0, 3);

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
		assertThat(properties.getQuotas().toQuotas()).isEqualTo(CoordinatorQuotas.DEFAULTS);
		assertThat(properties.getHealth().getCatchUpThreshold()).isEqualTo(Duration.ofSeconds(10));
	}

	@Test
	void aQuotaThatIsNotPositiveFailsStartUpNamingTheProperty() {
		this.contextRunner
			.withPropertyValues("tandem.coordinator.server.peer-id=solo", "tandem.coordinator.server.peers=solo=127.0.0.1:1",
					"tandem.coordinator.server.plaintext-allowed=true", "tandem.coordinator.server.quotas.max-leases=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("tandem.coordinator.server.quotas.max-leases must be positive, not 0"));
	}

	@Test
	void kafkaClustersAreOptionalAndTheHangingCheckHasTheDocumentedDefaults() {
		CoordinatorServerKafkaProperties properties = new CoordinatorServerKafkaProperties();
		assertThat(properties.getClusters()).isEmpty();
		assertThat(properties.getHanging().getTransactionTimeout()).isEqualTo(Duration.ofMinutes(15));
		assertThat(properties.getHanging().getCheckInterval()).isEqualTo(Duration.ofMinutes(1));
		assertThat(properties.getHanging().getTimeout()).isEqualTo(Duration.ofSeconds(10));
	}

	@Test
	void aKafkaClusterWithoutBootstrapServersFailsStartUpNamingTheProperty() {
		this.contextRunner
			.withPropertyValues("tandem.coordinator.server.peer-id=solo", "tandem.coordinator.server.peers=solo=127.0.0.1:1",
					"tandem.coordinator.server.plaintext-allowed=true",
					"tandem.coordinator.server.data-dir=" + this.dataDir.resolve("solo"),
					"tandem.coordinator.server.clusters.east.properties.security.protocol=PLAINTEXT")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("tandem.coordinator.server.clusters.east.bootstrap-servers is not set"));
	}

	@Test
	void aKafkaClusterNamingAnUnknownSslBundleFailsStartUpNamingTheProperty() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
			.withPropertyValues("tandem.coordinator.server.peer-id=solo", "tandem.coordinator.server.peers=solo=127.0.0.1:1",
					"tandem.coordinator.server.plaintext-allowed=true",
					"tandem.coordinator.server.data-dir=" + this.dataDir.resolve("solo"),
					"tandem.coordinator.server.clusters.east.bootstrap-servers=localhost:9092",
					"tandem.coordinator.server.clusters.east.ssl.bundle=kafka-admin")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("tandem.coordinator.server.clusters.east.ssl.bundle names SSL bundle 'kafka-admin'"));
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
					"tandem.coordinator.server.plaintext-allowed=true",
					"tandem.coordinator.server.election-timeout.min=100ms",
					"tandem.coordinator.server.election-timeout.max=200ms",
					"tandem.coordinator.server.snapshot.threshold=50",
					"tandem.coordinator.server.health.catch-up-threshold=3s")
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
					.containsEntry("catchUpThresholdMs", 3_000L)
					.containsEntry("followers", List.of())
					.containsEntry("laggingFollowers", List.of())
					.containsKeys("term", "commitIndex", "appliedIndex", "lastLogIndex", "applyLag", "leaderCommitIndex",
							"peers");
				assertThat(server.dataDir()).isEqualTo(this.dataDir);
			});
	}

	@Test
	void withoutAnSslBundleStartUpFailsNamingTheBundleAndThePlaintextProperty() {
		this.contextRunner
			.withPropertyValues("tandem.coordinator.server.peer-id=n1", "tandem.coordinator.server.peers=n1=127.0.0.1:1")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("tandem.coordinator.server.ssl.bundle is not set")
				.hasMessageContaining("tandem.coordinator.server.plaintext-allowed=true"));
	}

	@Test
	void anUnknownSslBundleFailsStartUpNamingIt() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
			.withPropertyValues("tandem.coordinator.server.peer-id=n1", "tandem.coordinator.server.peers=n1=127.0.0.1:1",
					"tandem.coordinator.server.ssl.bundle=coordinator")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("tandem.coordinator.server.ssl.bundle names SSL bundle 'coordinator' but there is none"));
	}

	@Test
	void aTlsPeerServesItsAppAndTheAdminEndpointsListOwnersAndTransactions() throws Exception {
		TestCertificates authority = TestCertificates.create(this.dataDir.resolve("certs"), "ca");
		TestCertificates.Identity peer = authority.issue("coordinator");
		TestCertificates.Identity app = authority.issue("orders-app");
		int port = freePort();
		this.contextRunner.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class))
			.withPropertyValues("tandem.coordinator.server.peer-id=solo",
					"tandem.coordinator.server.peers=solo=127.0.0.1:" + port,
					"tandem.coordinator.server.data-dir=" + this.dataDir.resolve("peer"),
					"tandem.coordinator.server.bind-host=127.0.0.1",
					"tandem.coordinator.server.ssl.bundle=coordinator",
					"tandem.coordinator.server.authorization.apps.orders-app=orders",
					"tandem.coordinator.server.quotas.max-leases=1",
					"spring.ssl.bundle.jks.coordinator.keystore.location=" + peer.keyStore().toUri(),
					"spring.ssl.bundle.jks.coordinator.keystore.password=" + TestCertificates.PASSWORD,
					"spring.ssl.bundle.jks.coordinator.keystore.type=PKCS12",
					"spring.ssl.bundle.jks.coordinator.truststore.location=" + peer.trustStore().toUri(),
					"spring.ssl.bundle.jks.coordinator.truststore.password=" + TestCertificates.PASSWORD,
					"spring.ssl.bundle.jks.coordinator.truststore.type=PKCS12")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CoordinatorServer server = context.getBean(CoordinatorServer.class);
				assertThat(server.tls()).isTrue();
				server.awaitLeader(Duration.ofSeconds(20));
				try (RatisDecisionLog client = RatisDecisionLog.builder(server.group())
					.purgeInterval(Duration.ZERO)
					.tls(CoordinatorTls.of(app.keyManager(), app.trustManager()))
					.build()) {
					client.decide(decision(T1, "orders.router-0", 1_000), Duration.ofSeconds(10));
					client.decide(decision(T2, "orders.router-1", System.currentTimeMillis()),
							Duration.ofSeconds(10));
					client.abort(T3, "orders.router-1", Duration.ofSeconds(10));
					assertThatThrownBy(() -> client.decide(decision("billing.i0-" + new UUID(0, 4), "billing.i0", 1),
							Duration.ofSeconds(10)))
						.isInstanceOf(CoordinatorAccessDeniedException.class);
					client.renewLease("orders", "router-0", "run-1", Duration.ofMinutes(1), Duration.ofSeconds(10));
					// a clean close, then the next run: run-1 joins the lease's run history
					client.releaseLease("orders.router-0", "run-1", Duration.ofSeconds(10));
					client.renewLease("orders", "router-0", "run-2", Duration.ofMinutes(1), Duration.ofSeconds(10));
					assertThatThrownBy(() -> client.renewLease("orders", "router-1", "run-1", Duration.ofMinutes(1),
							Duration.ofSeconds(10)))
						.hasMessageContaining("tandem.coordinator.server.quotas.max-leases");
				}
				// the peer's own client (its certificate is a peer's, so an admin's) may purge
				assertThat(context.getBean(RatisDecisionLog.class).purge(Duration.ofDays(1), Duration.ofSeconds(10)))
					.isZero();
				CoordinatorOwnersEndpoint.OwnersDescriptor owners = context.getBean(CoordinatorOwnersEndpoint.class)
					.owners();
				assertThat(owners.owners()).extracting(CoordinatorOwnersEndpoint.OwnerDescriptor::owner)
					.containsExactly("orders.router-0", "orders.router-1");
				assertThat(owners.owners().get(0).inDoubt()).isEqualTo(1);
				assertThat(owners.owners().get(0).oldestInDoubtDecidedAt()).isEqualTo(Instant.ofEpochMilli(1_000));
				assertThat(owners.owners().get(1).aborted()).isEqualTo(1);
				assertThat(owners.leases()).singleElement()
					.satisfies((lease) -> assertThat(lease.owner()).isEqualTo("orders.router-0"))
					.satisfies((lease) -> assertThat(lease.incarnation()).isEqualTo("run-2"))
					.satisfies((lease) -> assertThat(lease.claimedBy()).isNull())
					.satisfies((lease) -> assertThat(lease.released()).isFalse())
					.satisfies((lease) -> assertThat(lease.pastRuns())
						.extracting(CoordinatorOwnersEndpoint.PastRunDescriptor::incarnation)
						.containsExactly("run-1"));
				CoordinatorTransactionsEndpoint transactions = context.getBean(CoordinatorTransactionsEndpoint.class);
				assertThat(transactions.transactions(null, "decided", "1h", null).transactions())
					.extracting(CoordinatorTransactionsEndpoint.TransactionDescriptor::transactionId)
					.containsExactly(T1);
				assertThat(transactions.transactions("orders.router-1", null, null, 10).matched()).isEqualTo(2);
				// malformed parameters are the caller's error (400), naming the parameter, never a 500
				assertThatThrownBy(() -> transactions.transactions(null, "FOO", null, null))
					.isInstanceOf(InvalidEndpointRequestException.class)
					.hasMessageContaining("state must be DECIDED, COMPLETED or ABORTED, not 'FOO'");
				assertThatThrownBy(() -> transactions.transactions(null, null, "xyz", null))
					.isInstanceOf(InvalidEndpointRequestException.class)
					.hasMessageContaining("olderThan must be a duration");
				assertThatThrownBy(() -> transactions.transactions(null, null, null, -1))
					.isInstanceOf(InvalidEndpointRequestException.class)
					.hasMessageContaining("limit must be between 1 and");
				assertThat(transactions.transaction(T1).participants()).hasSize(2);
				assertThat(transactions.transaction("nope")).isNull();
			});
	}

	private static Decision decision(String transactionId, String owner, long decidedAtMs) {
		return new Decision(transactionId, owner, decidedAtMs,
				List.of(new Decision.ParticipantRecord("east", owner + ".east.0", 4000L, (short) 3, "tandem-markers", 2, 10L),
						new Decision.ParticipantRecord("west", owner + ".west.0", 9000L, (short) 1, "tandem-markers", 0, 7L)));
	}

	private static int freePort() throws Exception {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

}
