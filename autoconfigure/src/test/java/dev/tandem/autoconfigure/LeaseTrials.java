package dev.tandem.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;
import dev.tandem.transaction.TransactionStatistics;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * What the breaking trials of instance leases and per-run transactional ids share: two real
 * 3-broker clusters per test class, one embedded Ratis peer as the decision log shared by the
 * instances, managers built on them, and the brokers' view of the transactions left open.
 * Each trial's topic and id prefix is {@link #topicPrefix()} plus the test method's name.
 */
abstract class LeaseTrials {

	/** Prefix of each trial's topic and transactional id prefix, one per subclass. */
	abstract String topicPrefix();

	static final StringSerializer STRING = new StringSerializer();

	static final Duration LEASE = Duration.ofMillis(1500);

	/** Far longer than any wait here: only Tandem can end a transaction open on the brokers. */
	static final Duration TRANSACTION_TIMEOUT = Duration.ofMinutes(5);

	/** What a downstream read_committed reader may wait once the next run has started. */
	static final Duration RESUMES_WITHIN = LEASE.plus(Duration.ofSeconds(20));

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = EmbeddedKafkaClustersExtension.perClass(ClusterPreset.EAST3_WEST3);

	@TempDir
	static Path coordinatorDir;

	static EmbeddedCoordinator coordinator;

	final List<CrossClusterTransactionManager> managers = new ArrayList<>();

	String topic = "";

	@BeforeAll
	static void start() throws Exception {
		coordinator = EmbeddedCoordinator.builder(coordinatorDir).client((log) -> log.sharedByInstances(true)).start();
	}

	@AfterAll
	static void stop() {
		if (coordinator != null) {
			coordinator.close();
		}
	}

	@BeforeEach
	void createTopics(TestInfo info) {
		this.topic = topicPrefix() + info.getTestMethod().orElseThrow().getName();
		kafka.cluster("east").createTopic(this.topic, 3, (short) 3);
		kafka.cluster("west").createTopic(this.topic, 3, (short) 3);
	}

	@AfterEach
	void closeManagers() throws Exception {
		this.managers.forEach(CrossClusterTransactionManager::close);
		// what a failed trial left open pins the shared marker topic's LSO for the next trial: fence it
		for (String cluster : List.of("east", "west")) {
			fenceOpen(cluster);
		}
	}

	static RatisDecisionLog log() {
		return coordinator.decisionLog();
	}

	CrossClusterTransactionManagerBuilder builder(String instanceId, ProtocolHook hook) {
		return CrossClusterTransactionManager.builder()
			.cluster("east", clientConfig("east"))
			.cluster("west", clientConfig("west"))
			.idPrefix(this.topic)
			.instanceId(instanceId)
			.decisionLog(log())
			.commitTimeout(Duration.ofSeconds(10))
			.transactionTimeout(TRANSACTION_TIMEOUT)
			.leaseTimeout(LEASE)
			.recoveryInterval(Duration.ofMillis(500))
			.protocolHook(hook);
	}

	CrossClusterTransactionManager started(CrossClusterTransactionManagerBuilder builder) {
		CrossClusterTransactionManager manager = builder.build();
		this.managers.add(manager);
		manager.start();
		return manager;
	}

	static Map<String, Object> clientConfig(String cluster) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster(cluster).bootstrapServers());
		config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000);
		config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 4000);
		return config;
	}

	static ProtocolHook crashAt(ProtocolStep at) {
		return (transactionId, step) -> {
			if (step == at) {
				throw new ProtocolHook.SimulatedCrashException(step);
			}
		};
	}

	/** A record committed by an independent producer after the dead run's transaction, on every partition. */
	void commitAfter(String cluster, String value) {
		Map<String, Object> config = clientConfig(cluster);
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "independent-" + this.topic + "-" + cluster);
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, STRING, STRING)) {
			producer.initTransactions();
			producer.beginTransaction();
			for (int partition = 0; partition < 3; partition++) {
				producer.send(new ProducerRecord<>(this.topic, partition, "later", value));
			}
			producer.commitTransaction();
		}
	}

	List<String> open(String cluster) throws Exception {
		try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
				kafka.cluster(cluster).bootstrapServers()))) {
			List<String> ids = new ArrayList<>();
			for (TransactionListing listing : admin
				.listTransactions(new ListTransactionsOptions().filterStates(List.of(TransactionState.ONGOING)))
				.all()
				.get(10, TimeUnit.SECONDS)) {
				if (listing.transactionalId().startsWith(this.topic + ".")) {
					ids.add(listing.transactionalId());
				}
			}
			return ids;
		}
	}

	void fenceOpen(String cluster) throws Exception {
		List<String> ids = open(cluster);
		if (ids.isEmpty()) {
			return;
		}
		try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
				kafka.cluster(cluster).bootstrapServers()))) {
			admin.fenceProducers(ids).all().get(10, TimeUnit.SECONDS);
		}
	}

}
