package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.clients.ClusterClients;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaCluster;
import dev.tandem.test.EmbeddedKafkaClustersExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@link HangingTransactions} on a real broker, with transactions opened by plain producers: a
 * dead Tandem instance's transaction (its lease expired unclaimed, or it holds no lease but has
 * decisions in the log) is listed and aborted by fencing; a producer that is not Tandem's but
 * uses a look-alike transactional id ({@code <id-prefix>.<cluster>.<x>.<n>}, found by a breaking
 * trial: it was fenced because "its instance holds no lease") is never listed and never aborted,
 * with or without leases in the log, however long it is open.
 */
class HangingTransactionsTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	private final List<KafkaProducer<String, String>> producers = new ArrayList<>();

	private final LeasingLog log = new LeasingLog();

	private String prefix = "";

	private String topic = "";

	@BeforeEach
	void names(TestInfo info) {
		// a prefix of each test's own: transactions another test left open are not its
		this.prefix = "h" + Math.abs(info.getTestMethod().orElseThrow().getName().hashCode());
		this.topic = this.prefix + "-orders";
		kafka.cluster("east").createTopic(this.topic, 1, (short) 1);
	}

	@AfterEach
	void closeProducers() {
		this.producers.forEach((producer) -> producer.close(Duration.ZERO));
	}

	@Test
	void aForeignProducerWithATandemLookingIdIsNeverListedNorFencedWhateverTheLogKeeps() throws Exception {
		String foreignId = this.prefix + ".east.billing.0";
		KafkaProducer<String, String> foreign = openTransaction(foreignId);
		// another instance of the app is known (expired), the foreign one's "instance" is not
		this.log.lease(this.prefix, "i1", System.currentTimeMillis() - 1_000);
		for (HangingTransactions finder : List.of(finder(this.log, Duration.ofMinutes(15)),
				finder(new InMemoryDecisionLog(), Duration.ofMinutes(15)),
				// open "longer than the transaction timeout" does not make it Tandem's either
				finder(this.log, Duration.ofMillis(1)), finder(new InMemoryDecisionLog(), Duration.ofMillis(1)))) {
			HangingTransactions.Report report = finder.find(TIMEOUT);
			assertThat(report.unavailable()).isEmpty();
			assertThat(report.transactions()).extracting(HangingTransactions.Hanging::transactionalId)
				.doesNotContain(foreignId);
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> finder.abort("east", foreignId, TIMEOUT))
				.withMessageContaining("not Tandem's")
				.withMessageContaining("left alone");
		}
		assertThat(openOnEast()).contains(foreignId);
		// never fenced: its transaction commits
		foreign.commitTransaction();
	}

	@Test
	void aDeadInstancesTransactionIsListedAndAbortedButALookAlikeSlotIsNot() throws Exception {
		String deadId = this.prefix + ".east.i1.0";
		String lookAlike = this.prefix + ".east.i1.07"; // Tandem never writes a slot so
		KafkaProducer<String, String> dead = openTransaction(deadId);
		KafkaProducer<String, String> other = openTransaction(lookAlike);
		this.log.lease(this.prefix, "i1", System.currentTimeMillis() - 1_000);
		HangingTransactions finder = finder(this.log, Duration.ofMinutes(15));

		HangingTransactions.Report report = finder.find(TIMEOUT);
		assertThat(report.transactions()).singleElement().satisfies((hanging) -> {
			assertThat(hanging.transactionalId()).isEqualTo(deadId);
			assertThat(hanging.owner()).isEqualTo(this.prefix + ".i1");
			assertThat(hanging.reason()).contains("lease expired").contains("nobody claimed it");
		});
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> finder.abort("east", lookAlike, TIMEOUT))
			.withMessageContaining("not a transactional id of a served app");

		assertThat(finder.abort("east", deadId, TIMEOUT).owner()).isEqualTo(this.prefix + ".i1");
		await().atMost(TIMEOUT).untilAsserted(() -> assertThat(openOnEast()).doesNotContain(deadId).contains(lookAlike));
		assertThatThrownBy(dead::commitTransaction).isInstanceOf(KafkaException.class);
		other.commitTransaction();
	}

	@Test
	void anInstanceWithDecisionsButNoLeaseIsTandemsAndItsOtherTransactionsAreAborted() throws Exception {
		String decidedOn = this.prefix + ".west.i3.0";
		String openId = this.prefix + ".east.i3.1";
		openTransaction(openId);
		String owner = this.prefix + ".i3";
		this.log.decide(new Decision(TransactionIds.newId(owner), owner, System.currentTimeMillis(),
				List.of(new Decision.ParticipantRecord("west", decidedOn, 0, (short) 0, "tandem-markers", 0, 0))),
				TIMEOUT);
		HangingTransactions finder = finder(this.log, Duration.ofMinutes(15));
		assertThat(finder.find(TIMEOUT).transactions()).singleElement().satisfies((hanging) -> {
			assertThat(hanging.transactionalId()).isEqualTo(openId);
			assertThat(hanging.reason()).contains("holds no lease");
		});
		finder.abort("east", openId, TIMEOUT);
		await().atMost(TIMEOUT).untilAsserted(() -> assertThat(openOnEast()).doesNotContain(openId));
	}

	@Test
	void aTransactionOfARunThatLeftTheLeaseIsListedButTheHoldersAndAnUnknownRunsAreNot() throws Exception {
		String past = java.util.UUID.randomUUID().toString();
		String holder = java.util.UUID.randomUUID().toString();
		String unknown = java.util.UUID.randomUUID().toString(); // a run that took the lease after it was read
		String pastId = TransactionalIds.of(this.prefix, "east", "i4", 0, past);
		String holderId = TransactionalIds.of(this.prefix, "east", "i4", 0, holder);
		String unknownId = TransactionalIds.of(this.prefix, "east", "i4", 0, unknown);
		openTransaction(pastId);
		openTransaction(holderId);
		openTransaction(unknownId);
		InstanceLease live = new InstanceLease(this.prefix + ".i4", this.prefix, "i4", holder,
				System.currentTimeMillis() + 60_000, null, false, List.of(new InstanceLease.PastRun(past, 1)), false);
		this.log.put(live);
		HangingTransactions finder = finder(this.log, Duration.ofMinutes(15));
		assertThat(finder.find(TIMEOUT).transactions()).singleElement().satisfies((hanging) -> {
			assertThat(hanging.transactionalId()).isEqualTo(pastId);
			assertThat(hanging.reason()).contains("its run " + past + " no longer holds").contains("run " + holder);
		});

		this.log.put(live.releasedAt(System.currentTimeMillis()));
		assertThat(finder.find(TIMEOUT).transactions()).extracting(HangingTransactions.Hanging::transactionalId)
			.containsExactlyInAnyOrder(pastId, holderId);
		finder.abort("east", holderId, TIMEOUT);
		finder.abort("east", pastId, TIMEOUT);
		await().atMost(TIMEOUT)
			.untilAsserted(() -> assertThat(openOnEast()).doesNotContain(pastId, holderId).contains(unknownId));
	}

	@Test
	void transactionalIdsReadBackExactlyAsTandemBuildsThem() {
		assertThat(TransactionalIds.of("orders", "east", "web.1", 3)).isEqualTo("orders.east.web.1.3");
		assertThat(TransactionalIds.parse("orders.east.web.1.3", "orders", "east"))
			.isEqualTo(new TransactionalIds.Parsed("orders", "east", "web.1", 3));
		assertThat(TransactionalIds.parse("orders.east.web.1.3", "orders", "east").owner()).isEqualTo("orders.web.1");
		assertThat(TransactionalIds.parse("orders.east.i.0", "orders", "east")).isNotNull();
		assertThat(TransactionalIds.parse("orders.east.i." + Integer.MAX_VALUE, "orders", "east")).isNotNull();
		for (String notTandems : List.of("orders.east.i.07", "orders.east.i.+7", "orders.east.i.-1", "orders.east.i.",
				"orders.east..0", "orders.east.0", "orders.east.i.99999999999", "orders.east.i.2147483648",
				"orders.west.i.0", "orderz.east.i.0", "payments-tx-7", "orders.east.i.1a")) {
			assertThat(TransactionalIds.parse(notTandems, "orders", "east")).as(notTandems).isNull();
		}
	}

	private HangingTransactions finder(DecisionLog decisionLog, Duration transactionTimeout) {
		ClusterClients clients = ClusterClients.builder()
			.cluster("east", Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()))
			.cluster("west", Map.of("bootstrap.servers", kafka.cluster("west").bootstrapServers()))
			.build();
		return HangingTransactions.forApps(clients, () -> List.of(this.prefix), decisionLog, transactionTimeout);
	}

	private KafkaProducer<String, String> openTransaction(String transactionalId) throws Exception {
		EmbeddedKafkaCluster east = kafka.cluster("east");
		Map<String, Object> config = east.producerProperties();
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
		config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) TIMEOUT.toMillis());
		KafkaProducer<String, String> producer = new KafkaProducer<>(config);
		this.producers.add(producer);
		producer.initTransactions();
		producer.beginTransaction();
		producer.send(new ProducerRecord<>(this.topic, 0, transactionalId, "v")).get(30, TimeUnit.SECONDS);
		return producer;
	}

	private List<String> openOnEast() throws Exception {
		return kafka.cluster("east")
			.admin()
			.listTransactions(new ListTransactionsOptions()
				.filterStates(List.of(org.apache.kafka.clients.admin.TransactionState.ONGOING)))
			.all()
			.get(30, TimeUnit.SECONDS)
			.stream()
			.map(TransactionListing::transactionalId)
			.toList();
	}

	/** The in-memory log with leases set by the test. */
	private static final class LeasingLog extends ForwardingDecisionLog {

		private final Map<String, InstanceLease> leases = new ConcurrentHashMap<>();

		LeasingLog() {
			super(new InMemoryDecisionLog());
		}

		void put(InstanceLease lease) {
			this.leases.put(lease.owner(), lease);
		}

		void lease(String idPrefix, String instanceId, long expiresAtMs) {
			this.leases.put(idPrefix + "." + instanceId,
					new InstanceLease(idPrefix + "." + instanceId, idPrefix, instanceId, "run-1", expiresAtMs, null, false));
		}

		@Override
		public boolean supportsLeases() {
			return true;
		}

		@Override
		public List<InstanceLease> leases(String idPrefix, Duration timeout) {
			return this.leases.values().stream().filter((lease) -> lease.idPrefix().equals(idPrefix)).toList();
		}

	}

}
