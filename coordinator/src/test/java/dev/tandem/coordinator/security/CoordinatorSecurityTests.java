package dev.tandem.coordinator.security;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import javax.net.ssl.X509KeyManager;

import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.state.Operation;
import dev.tandem.coordinator.state.TransactionRecord;
import dev.tandem.coordinator.testing.CoordinatorCluster;
import dev.tandem.coordinator.testing.RawCoordinatorClient;
import dev.tandem.coordinator.testing.TlsCoordinatorCluster;
import dev.tandem.test.TestCertificates;
import dev.tandem.transaction.DecisionState;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeerId;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Mutual TLS and authorization on three real peers: callers without a certificate, with an
 * untrusted one, or with another app's identity try DECIDE, COMPLETE and PURGE; nothing is
 * applied on any peer and each attempt fails with a named reason.
 */
class CoordinatorSecurityTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(15);

	private static final String ORDERS_OWNER = "orders.router-0";

	private static final String T0 = id(ORDERS_OWNER, 0);

	private static final String T1 = id(ORDERS_OWNER, 1);

	private static final String T2 = id(ORDERS_OWNER, 2);

	private static final String ABORTED = id(ORDERS_OWNER, 99);

	@TempDir
	static Path directory;

	private static TlsCoordinatorCluster coordinators;

	private static CoordinatorCluster cluster;

	private static RatisDecisionLog orders;

	private static final List<AutoCloseable> closeables = new ArrayList<>();

	@BeforeAll
	static void startPeersWithMutualTls() {
		AccessPolicy policy = AccessPolicy.builder()
			.peers(List.of(TlsCoordinatorCluster.PEER))
			.admins(List.of("ops"))
			.app("orders-app", List.of("orders"))
			.app("billing-app", List.of("billing"))
			.build();
		coordinators = TlsCoordinatorCluster.start(directory, policy, TIMEOUT);
		cluster = coordinators.cluster();
		orders = coordinators.client("orders-app");
		for (int i = 0; i < 3; i++) {
			orders.decide(decision(id(ORDERS_OWNER, i), ORDERS_OWNER, i), TIMEOUT);
		}
		orders.abort(ABORTED, ORDERS_OWNER, TIMEOUT);
	}

	@AfterAll
	static void close() throws Exception {
		for (AutoCloseable closeable : closeables) {
			closeable.close();
		}
		if (coordinators != null) {
			coordinators.close();
		}
	}

	@Test
	void theRightIdentityDecidesReadsAndCompletesItsOwnTransactionsOverTls() throws IOException {
		assertThat(orders.state(T0, TIMEOUT)).isEqualTo(DecisionState.DECIDED);
		assertThat(orders.inDoubt(ORDERS_OWNER, TIMEOUT)).extracting((decision) -> decision.transactionId())
			.contains(T0, T1, T2);
		RawCoordinatorClient raw = raw(coordinators.tls("orders-app"));
		RaftClientReply reply = raw.send(new Operation.Complete(T2));
		assertThat(reply.isSuccess()).as(String.valueOf(reply.getException())).isTrue();
		assertThat(orders.state(T2, TIMEOUT)).isEqualTo(DecisionState.COMPLETED);
	}

	@Test
	void anotherAppsIdentityIsRefusedDecideCompleteAndPurgeWithANamedReasonAndNothingIsApplied() throws IOException {
		Map<String, Map<String, TransactionRecord>> before = tablesOfEveryPeer();
		RawCoordinatorClient billing = raw(coordinators.tls("billing-app"));

		assertRefused(billing.refusal(new Operation.Decide(decision("forged", ORDERS_OWNER, 9))),
				"identity 'billing-app' may act for owners with id prefixes [billing] only, not for owner '"
						+ ORDERS_OWNER + "' (Decide refused)");
		assertRefused(billing.refusal(new Operation.Complete(T0)),
				"identity 'billing-app' may act for owners with id prefixes [billing] only, not for owner '"
						+ ORDERS_OWNER + "' (Complete refused)");
		assertRefused(billing.refusal(new Operation.Purge(0)),
				"Purge is an administrative operation and identity 'billing-app' is not an admin");
		// A batch that mixes an allowed operation with a forbidden one is refused whole
		assertRefused(billing.refusal(new Operation.Abort(id("billing.i0", 0), "billing.i0"), new Operation.Complete(T1)),
				"(Complete refused)");
		// Through the decision log API, the refusal is a named exception
		RatisDecisionLog billingLog = coordinators.client("billing-app");
		assertThatThrownBy(() -> billingLog.decide(decision("forged-2", ORDERS_OWNER, 9), TIMEOUT))
			.isInstanceOf(CoordinatorAccessDeniedException.class)
			.hasMessageContaining("not for owner '" + ORDERS_OWNER + "'");
		assertThatThrownBy(() -> billingLog.purge(Duration.ZERO, TIMEOUT))
			.isInstanceOf(CoordinatorAccessDeniedException.class)
			.hasMessageContaining("administrative");
		assertThatThrownBy(() -> billingLog.inDoubt(ORDERS_OWNER, TIMEOUT))
			.isInstanceOf(CoordinatorAccessDeniedException.class)
			.hasMessageContaining("InDoubtQuery refused");

		assertThat(tablesOfEveryPeer()).isEqualTo(before);
		assertThat(cluster.statuses().stream()
			.mapToLong((status) -> cluster.server(status.peerId()).stateMachine().refusedRequests())
			.sum()).isGreaterThanOrEqualTo(7);
	}

	@Test
	void anotherAppsTransactionIdIsRefusedEvenUnderTheCallersOwnOwnerAndNothingIsApplied() throws IOException {
		Map<String, Map<String, TransactionRecord>> before = tablesOfEveryPeer();
		RawCoordinatorClient billing = raw(coordinators.tls("billing-app"));
		String ordersNext = id(ORDERS_OWNER, 7);
		assertRefused(billing.refusal(new Operation.Decide(decision(ordersNext, "billing.i0", 9))),
				"transaction id '" + ordersNext + "' is not an id of owner 'billing.i0'");
		assertRefused(billing.refusal(new Operation.Abort(ordersNext, "billing.i0")), "(Abort refused)");
		// An id of the orders app that billing crafted to look like its own owner's cannot pre-abort it either
		assertRefused(billing.refusal(new Operation.Abort("billing.i0-" + ordersNext, "billing.i0")),
				"is not an id of owner 'billing.i0'");
		assertThat(tablesOfEveryPeer()).isEqualTo(before);
		orders.decide(decision(ordersNext, ORDERS_OWNER, 7), TIMEOUT);
		assertThat(orders.state(ordersNext, TIMEOUT)).isEqualTo(DecisionState.DECIDED);
	}

	@Test
	void anUnknownIdentityMayNotActForAnyOwner() throws IOException {
		Map<String, Map<String, TransactionRecord>> before = tablesOfEveryPeer();
		RawCoordinatorClient stranger = raw(coordinators.tls("stranger"));
		assertRefused(stranger.refusal(new Operation.Decide(decision("s-1", "stranger.i0", 1))),
				"identity 'stranger' may not act for any owner (Decide refused)");
		assertThat(tablesOfEveryPeer()).isEqualTo(before);
	}

	@Test
	void aClientWithoutACertificateFailsTheHandshakeAndNothingIsApplied() throws IOException {
		Map<String, Map<String, TransactionRecord>> before = tablesOfEveryPeer();
		TestCertificates.Identity trustOnly = coordinators.authority().issue("no-certificate");
		RawCoordinatorClient noCertificate = raw(new GrpcTlsConfig(new NoCertificate(), trustOnly.trustManager(), true));
		for (Operation operation : List.of(new Operation.Decide(decision("nc-1", ORDERS_OWNER, 1)),
				new Operation.Complete(T0), new Operation.Purge(0))) {
			assertThatThrownBy(() -> noCertificate.send(operation)).isInstanceOf(IOException.class)
				.satisfies((failure) -> assertThat(RawCoordinatorClient.causes(failure).toLowerCase(Locale.ROOT))
					.contains("certificate_required"));
		}
		RawCoordinatorClient plainText = raw((GrpcTlsConfig) null);
		assertThatThrownBy(() -> plainText.send(new Operation.Purge(0))).isInstanceOf(IOException.class);
		assertThat(tablesOfEveryPeer()).isEqualTo(before);
	}

	@Test
	void aClientWithAnUntrustedCertificateFailsTheHandshakeAndNothingIsApplied() throws IOException {
		Map<String, Map<String, TransactionRecord>> before = tablesOfEveryPeer();
		// Same common name as the real app, issued by another authority
		TestCertificates rogue = TestCertificates.create(directory.resolve("rogue"), "rogue-ca");
		TestCertificates.Identity forged = rogue.issue("orders-app");
		RawCoordinatorClient untrusted = raw(
				new GrpcTlsConfig(forged.keyManager(), coordinators.authority().issue("x").trustManager(), true));
		for (Operation operation : List.of(new Operation.Decide(decision("u-1", ORDERS_OWNER, 1)),
				new Operation.Complete(T0), new Operation.Purge(0))) {
			assertThatThrownBy(() -> untrusted.send(operation)).isInstanceOf(IOException.class)
				// the peer asks for a certificate of its own CA: the client has none to offer
				.satisfies((failure) -> assertThat(RawCoordinatorClient.causes(failure).toLowerCase(Locale.ROOT)).containsAnyOf(
						"certificate_required", "unknown_ca", "bad_certificate", "certificate_unknown"));
		}
		assertThat(tablesOfEveryPeer()).isEqualTo(before);
	}

	@Test
	void anAdminMayPurgeAndAnAppMayNotUseTheRatisAdminService() throws IOException {
		RatisDecisionLog admin = coordinators.client("ops");
		assertThat(admin.purge(Duration.ofDays(1), TIMEOUT)).isZero();
		RawCoordinatorClient app = raw(coordinators.tls("orders-app").grpcTlsConfig());
		String leader = cluster.awaitLeader(TIMEOUT);
		assertThatThrownBy(() -> app.client().admin()
			.transferLeadership(RaftPeerId.valueOf(cluster.othersThan(leader).get(0)), 2000))
			.satisfies((failure) -> assertThat(RawCoordinatorClient.causes(failure)).contains("PERMISSION_DENIED"));
		assertThat(cluster.awaitLeader(TIMEOUT)).isEqualTo(leader);
	}

	/** Returns a transaction id of an owner, as Tandem makes them ({@code <owner>-<uuid>}). */
	static String id(String owner, long n) {
		return owner + "-" + new UUID(0, n);
	}

	private static void assertRefused(String refusal, String reason) {
		assertThat(refusal).contains(CoordinatorAccessDeniedException.class.getName()).contains(reason);
	}

	/**
	 * Every peer's records, once every peer applied the whole log (so a command that was
	 * appended would show on each).
	 */
	private static Map<String, Map<String, TransactionRecord>> tablesOfEveryPeer() {
		cluster.awaitLeader(TIMEOUT);
		await().atMost(TIMEOUT)
			.until(() -> cluster.statuses().stream().map((status) -> status.appliedIndex()).distinct().count() == 1);
		Map<String, Map<String, TransactionRecord>> tables = new TreeMap<>();
		cluster.statuses()
			.forEach((status) -> tables.put(status.peerId(), cluster.server(status.peerId()).stateMachine().read((table) -> {
				Map<String, TransactionRecord> records = new TreeMap<>();
				table.records().forEach((record) -> records.put(record.transactionId(), record));
				return records;
			})));
		assertThat(tables.values().iterator().next()).containsKeys(T0, ABORTED);
		assertThat(tables.values()).allSatisfy((table) -> assertThat(table).isEqualTo(tables.values().iterator().next()));
		return tables;
	}

	private static RawCoordinatorClient raw(@Nullable CoordinatorTls tls) {
		return raw((tls != null) ? tls.grpcTlsConfig() : null);
	}

	private static RawCoordinatorClient raw(@Nullable GrpcTlsConfig tls) {
		RawCoordinatorClient raw = new RawCoordinatorClient(cluster.group(), tls);
		closeables.add(raw);
		return raw;
	}

	/** A key manager without any certificate: the client offers none in the handshake. */
	private static final class NoCertificate implements X509KeyManager {

		@Override
		public String @Nullable [] getClientAliases(String keyType, Principal @Nullable [] issuers) {
			return null;
		}

		@Override
		public @Nullable String chooseClientAlias(String[] keyType, Principal @Nullable [] issuers,
				@Nullable Socket socket) {
			return null;
		}

		@Override
		public String @Nullable [] getServerAliases(String keyType, Principal @Nullable [] issuers) {
			return null;
		}

		@Override
		public @Nullable String chooseServerAlias(String keyType, Principal @Nullable [] issuers,
				@Nullable Socket socket) {
			return null;
		}

		@Override
		public X509Certificate @Nullable [] getCertificateChain(String alias) {
			return null;
		}

		@Override
		public @Nullable PrivateKey getPrivateKey(String alias) {
			return null;
		}

	}

}
