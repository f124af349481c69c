package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FenceProducersResult;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.Decision.ParticipantRecord;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Producer-epoch rollover on real brokers (issue 26 item 2): one transactional id per cluster is driven to the
 * end of its producer epochs (32,767; with transactions V2 the broker raises the epoch at every commit, so a
 * busy slot gets there in about an hour), then an instance runs transactions across the rollover (the broker
 * gives the id a new producer id) and is killed at each protocol step in turn, restarted every time. Recovery
 * resumes what was decided with the producer id, epoch and transaction version its decision recorded: 0 lost,
 * 0 mixed, every decided transaction committed on both clusters, every undecided one on neither.
 * <p>
 * Too slow for {@code mvn verify} (the drive to the rollover is about 32,700 round trips per cluster): run with
 * {@code mvn -B -Pepoch-rollover -pl core test} (README, "Long runs").
 */
@EnabledIfSystemProperty(named = "tandem.test.epoch-rollover", matches = "true")
class EpochRolloverTests {

	private static final Logger logger = LoggerFactory.getLogger(EpochRolloverTests.class);

	private static final StringSerializer STRING = new StringSerializer();

	/** How far below the last epoch the ids are driven before the instance runs. */
	private static final int BELOW_ROLLOVER = 24;

	/** How many runs after both ids rolled over (each step killed at least once after it too). */
	private static final int RUNS_AFTER_ROLLOVER = 8;

	private static final List<ProtocolStep> KILLED_AT = List.of(ProtocolStep.AFTER_PREPARE,
			ProtocolStep.AFTER_DECISION, ProtocolStep.MID_COMMIT, ProtocolStep.AFTER_COMMIT);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = EmbeddedKafkaClustersExtension.perClass(ClusterPreset.EAST3_WEST3);

	private final List<CrossClusterTransactionManager> managers = new ArrayList<>();

	@AfterEach
	void closeManagers() {
		this.managers.forEach(CrossClusterTransactionManager::close);
	}

	/** The decisions as the engine wrote them: what each participant used. */
	private static final class RecordingLog extends ForwardingDecisionLog {

		final Map<String, Decision> decided = new LinkedHashMap<>();

		RecordingLog(DecisionLog delegate) {
			super(delegate);
		}

		@Override
		public synchronized Decision decide(Decision decision, @Nullable String incarnation, Duration timeout) {
			Decision landed = super.decide(decision, incarnation, timeout);
			this.decided.put(decision.transactionId(), decision);
			return landed;
		}

		@Override
		public void close() {
		}

	}

	private CrossClusterTransactionManager manager(String topic, DecisionLog log, ProtocolHook hook,
			TransactionStatistics statistics) {
		CrossClusterTransactionManager manager = CrossClusterTransactionManager.builder()
			.slots(1)
			.recoveryInterval(Duration.ofMillis(500))
			.cluster("east", clientConfig("east"))
			.cluster("west", clientConfig("west"))
			.idPrefix("rollover")
			.instanceId(topic)
			.decisionLog(log)
			.commitTimeout(Duration.ofSeconds(10))
			.transactionTimeout(Duration.ofMinutes(5))
			.protocolHook(hook)
			.listener(statistics)
			.build();
		this.managers.add(manager);
		return manager;
	}

	private static Map<String, Object> clientConfig(String cluster) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster(cluster).bootstrapServers());
		config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
		config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10000);
		return config;
	}

	/**
	 * Raises the epoch of a transactional id until it is {@code below} under the last one: one
	 * InitProducerId a call ({@code Admin.fenceProducers}, KIP-618), each raising the epoch by one.
	 */
	private static void driveEpoch(String cluster, String transactionalId, int below) throws Exception {
		Map<String, Object> config = clientConfig(cluster);
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, STRING, STRING)) {
			producer.initTransactions(); // the id exists from here on
		}
		long start = System.nanoTime();
		int calls = 0;
		try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
				kafka.cluster(cluster).bootstrapServers()))) {
			short epoch = 0;
			while (epoch < Short.MAX_VALUE - below) {
				FenceProducersResult fenced = admin.fenceProducers(List.of(transactionalId));
				epoch = fenced.epochId(transactionalId).get(30, TimeUnit.SECONDS);
				calls++;
			}
		}
		logger.info("Drove {} on {} to {} epochs below the last in {} calls, {} ms", transactionalId, cluster, below,
				calls, (System.nanoTime() - start) / 1_000_000);
	}

	private static TransactionDescription describe(String cluster, String transactionalId) throws Exception {
		try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
				kafka.cluster(cluster).bootstrapServers()))) {
			return admin.describeTransactions(List.of(transactionalId)).description(transactionalId)
				.get(30, TimeUnit.SECONDS);
		}
	}

	@Test
	void recoveryCommitsWhatWasDecidedAcrossTheEpochRolloverWhereverTheInstanceIsKilled() throws Exception {
		String topic = "rollover-kills";
		kafka.cluster("east").createTopic(topic, 1, (short) 3);
		kafka.cluster("west").createTopic(topic, 1, (short) 3);
		RecordingLog log = new RecordingLog(new InMemoryDecisionLog());
		TransactionStatistics statistics = new TransactionStatistics();
		// no lease in this log: the legacy transactional ids, the same for every run, so the epochs carry over
		Map<String, String> ids = Map.of("east", TransactionalIds.of("rollover", "east", topic, 0), "west",
				TransactionalIds.of("rollover", "west", topic, 0));
		CompletableFuture<Void> east = CompletableFuture.runAsync(() -> drive("east", ids.get("east")));
		CompletableFuture<Void> west = CompletableFuture.runAsync(() -> drive("west", ids.get("west")));
		east.get(30, TimeUnit.MINUTES);
		west.get(30, TimeUnit.MINUTES);
		Map<String, Long> firstProducerIds = new HashMap<>();
		for (String cluster : ids.keySet()) {
			firstProducerIds.put(cluster, describe(cluster, ids.get(cluster)).producerId());
		}

		Map<String, Boolean> killed = new LinkedHashMap<>(); // transaction id -> whether it was decided
		List<String> done = new ArrayList<>();
		int afterRollover = 0;
		for (int run = 0; afterRollover < RUNS_AFTER_ROLLOVER; run++) {
			ProtocolStep step = KILLED_AT.get(run % KILLED_AT.size());
			ProtocolHook crash = (transactionId, at) -> {
				if (at == step) {
					throw new ProtocolHook.SimulatedCrashException(at);
				}
			};
			CrossClusterTransactionManager manager = manager(topic, log, crash, statistics);
			manager.start(); // recovers the previous run's decided transaction first
			CrossClusterTransaction txn = manager.begin();
			txn.send("east", new ProducerRecord<>(topic, "k", "east-" + run), STRING, STRING);
			txn.send("west", new ProducerRecord<>(topic, "k", "west-" + run), STRING, STRING);
			assertThat(catchThrowable(txn::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
			manager.abandon(); // kill -9
			DecisionState state = log.state(txn.transactionId(), Duration.ofSeconds(5));
			killed.put(txn.transactionId(), state == DecisionState.DECIDED || state == DecisionState.COMPLETED);
			done.add(run + ":" + step + ":" + state);
			Decision decision = log.decided.get(txn.transactionId());
			if (decision != null) {
				for (ParticipantRecord participant : decision.participants()) {
					assertThat(participant.transactionVersionKnown()).as("decision records the transaction version")
						.isTrue();
					logger.info("run {} killed {}: {} decided at producerId={} epoch={} transactions V{}", run, step,
							participant.cluster(), participant.producerId(), participant.producerEpoch(),
							participant.transactionVersion());
				}
			}
			boolean rolled = true;
			for (String cluster : ids.keySet()) {
				rolled &= describe(cluster, ids.get(cluster)).producerId() != firstProducerIds.get(cluster);
			}
			if (rolled) {
				afterRollover++;
			}
			assertThat(run).as("runs before both ids rolled over").isLessThan(BELOW_ROLLOVER * 4);
		}
		// a last run recovers the last kill and commits one more transaction
		CrossClusterTransactionManager last = manager(topic, log, ProtocolHook.NONE, statistics);
		last.start();
		CrossClusterTransaction txn = last.begin();
		txn.send("east", new ProducerRecord<>(topic, "k", "east-last"), STRING, STRING);
		txn.send("west", new ProducerRecord<>(topic, "k", "west-last"), STRING, STRING);
		txn.commit();
		logger.info("Runs: {}", done);

		List<String> decidedRuns = new ArrayList<>();
		List<String> undecidedRuns = new ArrayList<>();
		int run = 0;
		for (boolean decided : killed.values()) {
			(decided ? decidedRuns : undecidedRuns).add(String.valueOf(run++));
		}
		await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
			for (String cluster : ids.keySet()) {
				List<String> values = ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), topic);
				List<String> expected = new ArrayList<>();
				decidedRuns.forEach((r) -> expected.add(cluster + "-" + r));
				expected.add(cluster + "-last");
				assertThat(values).as("%s: every decided transaction once, no undecided one", cluster)
					.containsExactlyInAnyOrderElementsOf(expected);
			}
		});
		assertThat(statistics.snapshot().heuristic()).as("mixed outcomes").isZero();
		assertThat(decidedRuns).isNotEmpty();
		assertThat(undecidedRuns).isNotEmpty();
		for (String cluster : ids.keySet()) {
			assertThat(describe(cluster, ids.get(cluster)).producerId()).as("%s rolled over", cluster)
				.isNotEqualTo(firstProducerIds.get(cluster));
		}
	}

	private static void drive(String cluster, String transactionalId) {
		try {
			driveEpoch(cluster, transactionalId, BELOW_ROLLOVER);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not drive the epoch of " + transactionalId + " on " + cluster, ex);
		}
	}

}
