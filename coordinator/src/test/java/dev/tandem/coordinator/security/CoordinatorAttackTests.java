package dev.tandem.coordinator.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.state.Command;
import dev.tandem.coordinator.state.CommandLimits;
import dev.tandem.coordinator.state.CoordinatorQuotas;
import dev.tandem.coordinator.state.DecisionCodec;
import dev.tandem.coordinator.state.Grant;
import dev.tandem.coordinator.state.MessageCodec;
import dev.tandem.coordinator.state.Operation;
import dev.tandem.coordinator.testing.CoordinatorCluster;
import dev.tandem.coordinator.testing.RawCoordinatorClient;
import dev.tandem.coordinator.testing.TlsCoordinatorCluster;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.DecisionLogException;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.TransactionIds;
import org.apache.ratis.protocol.RaftClientReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An authenticated app attacks three real peers under mutual TLS, as the attacks of issue 23 did:
 * oversized and malformed (invalid UTF-8) strings in every operation that takes strings, a skewed
 * clock, a flood past its quotas. Each is refused before the log or applied harmlessly; after each,
 * every peer runs, another app keeps deciding, every peer takes a snapshot, and a restart of every
 * peer replays the log.
 */
class CoordinatorAttackTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(15);

	private static final String ORDERS_OWNER = "orders.router-0";

	private static final CoordinatorQuotas QUOTAS = new CoordinatorQuotas(40, 10, 30);

	@TempDir
	static Path directory;

	private static TlsCoordinatorCluster coordinators;

	private static CoordinatorCluster cluster;

	private static RatisDecisionLog orders;

	private static RawCoordinatorClient mallory;

	private static final List<String> ordersDecided = new ArrayList<>();

	@BeforeAll
	static void startPeersWithMutualTls() {
		AccessPolicy policy = AccessPolicy.builder()
			.peers(List.of(TlsCoordinatorCluster.PEER))
			.app("orders-app", List.of("orders"))
			.app("mallory-app", List.of("mallory"))
			.app("skewed-app", List.of("skewed"))
			.build();
		coordinators = TlsCoordinatorCluster.start(directory, policy, (server) -> server.quotas(QUOTAS), TIMEOUT);
		cluster = coordinators.cluster();
		orders = coordinators.client("orders-app");
		mallory = new RawCoordinatorClient(cluster.group(), coordinators.tls("mallory-app").grpcTlsConfig());
	}

	@AfterAll
	static void close() throws IOException {
		if (mallory != null) {
			mallory.close();
		}
		if (coordinators != null) {
			coordinators.close();
		}
	}

	@Test
	void oversizedAndMalformedStringsInEveryOperationAreRefusedBeforeTheLog() throws IOException {
		String run = "r".repeat(DecisionCodec.MAX_STRING_BYTES);
		String id = TransactionIds.newId("mallory.i0");
		Map<String, byte[]> attacks = new LinkedHashMap<>();
		// The attack that stopped every peer: a run of 32 KiB, written back longer in the result
		attacks.put("32 KiB run", encode(new Operation.Decide(decision(id, "mallory.i0", 1), run)));
		attacks.put("owner over its limit", encode(new Operation.Abort(id, "mallory." + "o".repeat(600))));
		attacks.put("lease of a year", encode(new Operation.RenewLease("mallory", "i0", "run-1", 365L * 86_400_000)));
		attacks.put("too many participants", encode(new Operation.Decide(manyParticipants(id))));
		// ~11,000 bytes of invalid UTF-8 (each would decode to a 3-byte U+FFFD) in every string field
		attacks.put("decide id", malformed(new Operation.Decide(decision(marker(), "mallory.i0", 1))));
		attacks.put("decide owner", malformed(new Operation.Decide(decision(id, marker(), 1))));
		attacks.put("decide run", malformed(new Operation.Decide(decision(id, "mallory.i0", 1), marker())));
		attacks.put("complete id", malformed(new Operation.Complete(marker())));
		attacks.put("abort id", malformed(new Operation.Abort(marker(), "mallory.i0")));
		attacks.put("abort owner", malformed(new Operation.Abort(id, marker())));
		attacks.put("renew prefix", malformed(new Operation.RenewLease(marker(), "i0", "run-1", 5_000)));
		attacks.put("renew instance", malformed(new Operation.RenewLease("mallory", marker(), "run-1", 5_000)));
		attacks.put("renew run", malformed(new Operation.RenewLease("mallory", "i0", marker(), 5_000)));
		attacks.put("claim owner", malformed(new Operation.ClaimLease(marker(), "mallory.i1")));
		attacks.put("claim claimant", malformed(new Operation.ClaimLease("mallory.i0", marker())));
		attacks.put("release owner", malformed(new Operation.ReleaseLease(marker(), "run-1")));
		attacks.put("release by", malformed(new Operation.ReleaseLease("mallory.i0", marker())));
		long appliedBefore = leader().stateMachine().appliedEntries();
		long invalidBefore = invalidRequestsOfEveryPeer();
		attacks.forEach((what, bytes) -> assertThat(mallory.refusalOfBytes(bytes)).as(what)
			.contains(DecisionCodec.class.getPackageName())
			.containsAnyOf("not valid UTF-8", "exceeds the limit", "participants"));
		assertThat(invalidRequestsOfEveryPeer() - invalidBefore).isEqualTo(attacks.size());
		assertThat(leader().stateMachine().appliedEntries()).isEqualTo(appliedBefore);
		assertEveryPeerServesAndRecovers();
	}

	@Test
	void oneCommandOfRetriedDecidesOfALargeDecisionCannotGrowTheReply() throws IOException {
		// The amplifier a breaking trial found: one large decision, then thousands of decides of the same id
		// (before, each result echoed the stored decision: 1.6 GB of results for a 1.1 MB command)
		String owner = "mallory.amp";
		String id = TransactionIds.newId(owner);
		List<ParticipantRecord> participants = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			participants.add(new ParticipantRecord("c" + i, "t".repeat(200), 1, (short) 1, "m".repeat(100), 0, 0));
		}
		Decision large = new Decision(id, owner, System.currentTimeMillis(), participants);
		Operation[] retries = new Operation[CommandLimits.MAX_OPERATIONS];
		retries[0] = new Operation.Decide(large);
		for (int i = 1; i < retries.length; i++) {
			retries[i] = new Operation.Decide(new Decision(id, owner, 1, List.of(participants.get(0))));
		}
		long applied = leader().stateMachine().refusedOperations();
		RaftClientReply reply = mallory.send(retries);
		assertThat(reply.isSuccess()).isTrue();
		assertThat(reply.getMessage().getContent().size()).isLessThan(MessageCodec.encodeCommand(
				new Command(1, List.of(retries))).length);
		assertThat(leader().stateMachine().refusedOperations() - applied).isEqualTo(CommandLimits.MAX_OPERATIONS - 1);
		// and a decision past the byte limit never gets in
		participants.add(new ParticipantRecord("big", "t".repeat(1024), 1, (short) 1, "m".repeat(249), 0, 0));
		for (int i = 0; i < 10; i++) {
			participants.add(new ParticipantRecord("more" + i, "t".repeat(1024), 1, (short) 1, "m".repeat(249), 0, 0));
		}
		assertThat(mallory.refusal(new Operation.Decide(new Decision(TransactionIds.newId(owner), owner, 1, participants))))
			.contains("bytes exceeds the limit of " + CommandLimits.MAX_DECISION_BYTES);
		assertEveryPeerServesAndRecovers();
	}

	@Test
	void aBadOperationFailsOnlyItsCallerAndAnAppsPurgeNeverTakesItsDecidesWithIt() {
		// An app's client that purges every 50 ms (a purge is administrative: refused for an app)
		RatisDecisionLog app = cluster.client((client) -> client.tls(coordinators.tls("orders-app"))
			.purgeInterval(Duration.ofMillis(50)));
		Decision bad = new Decision(TransactionIds.newId(ORDERS_OWNER), ORDERS_OWNER, System.currentTimeMillis(),
				List.of(new ParticipantRecord("east", "t".repeat(CommandLimits.MAX_TRANSACTIONAL_ID_BYTES + 1), 1, (short) 1,
						"markers", 0, 0)));
		List<CompletableFuture<Decision>> good = new ArrayList<>();
		CompletableFuture<Decision> badCall = CompletableFuture.supplyAsync(() -> app.decide(bad, TIMEOUT));
		for (int i = 0; i < 10; i++) {
			String id = TransactionIds.newId(ORDERS_OWNER);
			good.add(CompletableFuture.supplyAsync(() -> app.decide(decision(id, ORDERS_OWNER, 1), TIMEOUT)));
		}
		assertThat(badCall).failsWithin(TIMEOUT)
			.withThrowableThat()
			.havingRootCause()
			.isInstanceOf(DecisionLogException.class)
			.withMessageContaining("Refused before it was sent (nothing was recorded)")
			.withMessageContaining("participant transactionalId of at least 1025 bytes exceeds the limit of 1024 bytes");
		for (CompletableFuture<Decision> call : good) {
			assertThat(call).succeedsWithin(TIMEOUT);
			app.complete(call.join().transactionId());
		}
		long start = System.nanoTime();
		List<String> decided = new ArrayList<>();
		while (System.nanoTime() - start < Duration.ofMillis(600).toNanos()) {
			String id = TransactionIds.newId(ORDERS_OWNER);
			assertThat(app.decide(decision(id, ORDERS_OWNER, 1), TIMEOUT).transactionId()).isEqualTo(id);
			app.complete(id); // within the app's quota of open decisions
			decided.add(id);
		}
		assertThat(decided).isNotEmpty();
		String last = decided.get(decided.size() - 1);
		await().atMost(TIMEOUT).until(() -> orders.state(last, TIMEOUT) == DecisionState.COMPLETED);
		app.close();
	}

	@Test
	void aSkewedClockNeitherExpiresAnotherLeaseNorKeepsItsOwnAlive() throws IOException {
		RawCoordinatorClient skewed = new RawCoordinatorClient(cluster.group(),
				coordinators.tls("skewed-app").grpcTlsConfig());
		long before = System.currentTimeMillis();
		// A run whose clock is a day late asks for 5 s: the lease ends 5 s after the leader's now
		assertThat(skewed.sendAt(before - 86_400_000L, new Operation.RenewLease("skewed", "late", "run-1", 5_000))
			.isSuccess()).isTrue();
		long after = System.currentTimeMillis();
		assertThat(lease("skewed.late").expiresAtMs()).isBetween(before + 5_000, after + 5_000);
		// A claimant whose clock is a day early sees every lease expired: the leader's clock says otherwise
		assertThat(skewed.sendAt(after + 86_400_000L, new Operation.RenewLease("skewed", "early", "run-2", 5_000))
			.isSuccess()).isTrue();
		assertThat(skewed.sendAt(after + 86_400_000L, new Operation.ClaimLease("skewed.late", "skewed.early"))
			.isSuccess()).isTrue();
		assertThat(lease("skewed.late").claimedBy()).isNull();
		assertThat(lease("skewed.early").expiresAtMs()).isLessThan(System.currentTimeMillis() + 5_001);
		skewed.close();
		assertEveryPeerServesAndRecovers();
	}

	@Test
	void aFloodPastTheQuotasIsRefusedWithThePropertyAndOtherAppsKeepCommitting() throws IOException {
		int held = malloryLeases();
		for (int i = 0; held + i < QUOTAS.maxLeases(); i++) {
			assertThat(mallory.send(new Operation.RenewLease("mallory", "flood-" + i, "run", 60_000)).isSuccess()).isTrue();
		}
		assertThat(mallory.refusal(new Operation.RenewLease("mallory", "flood-x", "run", 60_000)))
			.contains(QuotaExceededMessage.LEASES);
		assertThat(malloryLeases()).isEqualTo(QUOTAS.maxLeases());
		// Renewing a lease it holds adds none: still allowed at the quota
		assertThat(mallory.send(new Operation.RenewLease("mallory", "flood-0", "run", 60_000)).isSuccess()).isTrue();
		Operation[] decides = new Operation[QUOTAS.maxOpenDecisions() - malloryOpenDecisions()];
		for (int i = 0; i < decides.length; i++) {
			String owner = "mallory.d" + i;
			decides[i] = new Operation.Decide(decision(TransactionIds.newId(owner), owner, i));
		}
		assertThat(mallory.send(decides).isSuccess()).isTrue();
		String owner = "mallory.one-more";
		assertThat(mallory.refusal(new Operation.Decide(decision(TransactionIds.newId(owner), owner, 1))))
			.contains(QuotaExceededMessage.DECISIONS);
		Operation[] aborts = new Operation[QUOTAS.maxAborted()];
		for (int i = 0; i < aborts.length; i++) {
			aborts[i] = new Operation.Abort(TransactionIds.newId("mallory.a" + i), "mallory.a" + i);
		}
		assertThat(mallory.send(aborts).isSuccess()).isTrue();
		assertThat(mallory.refusal(new Operation.Abort(TransactionIds.newId("mallory.a"), "mallory.a")))
			.contains(QuotaExceededMessage.ABORTED);
		assertThat(cluster.statuses().stream()
			.mapToLong((status) -> cluster.server(status.peerId()).stateMachine().quotaRefusals())
			.sum()).isEqualTo(3);
		// The quota is mallory's, not the coordinator's: orders decides as before
		assertEveryPeerServesAndRecovers();
	}

	/** The property each quota refusal names. */
	private static final class QuotaExceededMessage {

		static final String LEASES = "tandem.coordinator.server.quotas.max-leases";

		static final String DECISIONS = "tandem.coordinator.server.quotas.max-open-decisions";

		static final String ABORTED = "tandem.coordinator.server.quotas.max-aborted";

	}

	/**
	 * Every peer runs and has applied the same log; orders decides and completes a transaction;
	 * every peer takes a snapshot; all peers stop and start again, replay, and orders decides again
	 * with every earlier decision of its own still there.
	 */
	private static void assertEveryPeerServesAndRecovers() {
		ordersDecidesAndCompletes();
		await().atMost(TIMEOUT).until(() -> cluster.statuses().size() == 3
				&& cluster.statuses().stream().map((status) -> status.appliedIndex()).distinct().count() == 1);
		for (String peer : List.of("n1", "n2", "n3")) {
			CoordinatorServer server = cluster.server(peer);
			try {
				assertThat(server.takeSnapshot(TIMEOUT)).as(peer).isPositive();
			}
			catch (IOException ex) {
				throw new AssertionError("Snapshot of " + peer + " failed", ex);
			}
			assertThat(server.stateMachine().failedSnapshots()).as(peer).isZero();
		}
		List.of("n1", "n2", "n3").forEach(cluster::stop);
		List.of("n1", "n2", "n3").forEach(cluster::restart);
		cluster.awaitLeader(TIMEOUT);
		for (String id : ordersDecided) {
			assertThat(orders.state(id, TIMEOUT)).as(id).isEqualTo(DecisionState.COMPLETED);
		}
		ordersDecidesAndCompletes();
	}

	private static void ordersDecidesAndCompletes() {
		String id = TransactionIds.newId(ORDERS_OWNER);
		orders.decide(decision(id, ORDERS_OWNER, System.currentTimeMillis()), TIMEOUT);
		orders.complete(id);
		await().atMost(TIMEOUT).until(() -> orders.state(id, TIMEOUT) == DecisionState.COMPLETED);
		ordersDecided.add(id);
	}

	private static InstanceLease lease(String owner) {
		return leader().stateMachine()
			.read((table) -> table.leases().stream().filter((lease) -> lease.owner().equals(owner)).findFirst())
			.orElseThrow(() -> new AssertionError("No lease of " + owner));
	}

	private static int malloryOpenDecisions() {
		return leader().stateMachine()
			.read((table) -> table.openDecisions(new Grant("mallory-app", false, List.of("mallory"))));
	}

	private static int malloryLeases() {
		return leader().stateMachine().read((table) -> table.leaseCount(new Grant("mallory-app", false, List.of("mallory"))));
	}

	private static CoordinatorServer leader() {
		return cluster.server(cluster.awaitLeader(TIMEOUT));
	}

	private static long invalidRequestsOfEveryPeer() {
		return cluster.statuses()
			.stream()
			.mapToLong((status) -> cluster.server(status.peerId()).stateMachine().invalidRequests())
			.sum();
	}

	private static byte[] encode(Operation operation) {
		return MessageCodec.encodeCommand(Command.of(System.currentTimeMillis(), operation));
	}

	/** A placeholder of 11,000 'Z's that {@link #malformed} turns into invalid UTF-8 bytes. */
	private static String marker() {
		return "Z".repeat(11_000);
	}

	private static byte[] malformed(Operation operation) {
		byte[] bytes = encode(operation);
		byte[] run = "Z".repeat(11_000).getBytes(StandardCharsets.UTF_8);
		int at = indexOf(bytes, run);
		assertThat(at).as("marker in " + operation.getClass().getSimpleName()).isNotNegative();
		Arrays.fill(bytes, at, at + run.length, (byte) 0xFF);
		return bytes;
	}

	private static int indexOf(byte[] bytes, byte[] run) {
		outer: for (int i = 0; i <= bytes.length - run.length; i++) {
			for (int j = 0; j < run.length; j++) {
				if (bytes[i + j] != run[j]) {
					continue outer;
				}
			}
			return i;
		}
		return -1;
	}

	private static Decision manyParticipants(String id) {
		Decision one = decision(id, "mallory.i0", 1);
		List<ParticipantRecord> participants = new ArrayList<>();
		for (int i = 0; i <= CommandLimits.MAX_PARTICIPANTS; i++) {
			participants.add(one.participants().get(0));
		}
		return new Decision(id, "mallory.i0", 1, participants);
	}

}
