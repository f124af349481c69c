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
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.DecisionLogException;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.ForwardingDecisionLog;
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
		for (CrossClusterTransactionManager manager : this.managers) {
			try {
				manager.close();
			}
			catch (RuntimeException ex) {
				// a trial's broken manager may fail to close; the others must still close
			}
		}
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

	/** A run killed after prepare: one undecided transaction open on both clusters; its run id. */
	String runKilledAfterPrepare(String instanceId, CrossClusterTransactionManagerBuilder builder, String tag)
			throws Exception {
		CrossClusterTransactionManager doomed = started(builder.protocolHook(crashAt(ProtocolStep.AFTER_PREPARE)));
		String runId = holder(instanceId);
		CrossClusterTransaction txn = doomed.begin();
		for (int i = 0; i < 3; i++) {
			txn.send("east", new ProducerRecord<>(this.topic, "k" + i, tag + "-east-" + i), STRING, STRING);
			txn.send("west", new ProducerRecord<>(this.topic, "k" + i, tag + "-west-" + i), STRING, STRING);
		}
		assertThat(catchThrowable(txn::commit)).isInstanceOf(ProtocolHook.SimulatedCrashException.class);
		doomed.abandon(); // kill -9: the transaction stays open on both clusters, the lease unreleased
		assertThat(open("east")).anyMatch((id) -> id.endsWith(runId));
		assertThat(open("west")).anyMatch((id) -> id.endsWith(runId));
		return runId;
	}

	/** What InstanceLeaseKeeper.acquire() does once the lease is free; the run then dies (kill -9). */
	String takeAndDie(String instanceId) {
		return takeAndDie(instanceId, LEASE);
	}

	/** {@link #takeAndDie(String)} with a lease of the given timeout. */
	String takeAndDie(String instanceId, Duration leaseTimeout) {
		String run = UUID.randomUUID().toString();
		await().atMost(leaseTimeout.multipliedBy(4).plusSeconds(5))
			.pollDelay(Duration.ZERO)
			.pollInterval(Duration.ofMillis(20))
			.until(() -> log()
			.renewLease(this.topic, instanceId, run, leaseTimeout, Duration.ofSeconds(5))
			.isHeldBy(run));
		return run;
	}

	InstanceLease lease(String instanceId) throws Exception {
		String owner = this.topic + "." + instanceId;
		return log().leases(this.topic, Duration.ofSeconds(5))
			.stream()
			.filter((lease) -> lease.owner().equals(owner))
			.findFirst()
			.orElseThrow();
	}

	String holder(String instanceId) throws Exception {
		return lease(instanceId).incarnation();
	}

	/** The committed values of the topic, or an exception while the last stable offset is pinned. */
	List<String> committed(String cluster, Duration wait) {
		return ReadCommitted.records(kafka.cluster(cluster).bootstrapServers(), this.topic, wait)
			.stream()
			.map((record) -> new String(record.value(), StandardCharsets.UTF_8))
			.toList();
	}

	/** Whether all three records committed after the dead run are visible (no partition pinned). */
	boolean readersMovedOn(String cluster) {
		try {
			return committed(cluster, Duration.ofSeconds(2)).stream().filter(("after-" + cluster)::equals).count() == 3;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	List<String> openOf(String cluster, String runId) throws Exception {
		return open(cluster).stream().filter((id) -> id.endsWith("." + runId)).toList();
	}

	/**
	 * The shared decision log, except that the start-up recovery's read of the instance's in-doubt
	 * transactions (the first step after the lease is taken) runs {@code failure}, which throws.
	 */
	static DecisionLog recoveryFailing(Runnable failure) {
		return new ForwardingDecisionLog(log()) {
			@Override
			public List<Decision> inDoubt(String owner, Duration timeout) {
				failure.run();
				throw new IllegalStateException("the injected failure did not throw");
			}

			@Override
			public void close() {
				// the shared log stays open
			}
		};
	}

	/**
	 * A real start-up that fails after taking the lease: the decision log fails the start-up
	 * recovery's read of the instance's in-doubt transactions. Returns the run that took the lease.
	 */
	String startUpFailingAfterTheTake(String instanceId) throws Exception {
		DecisionLog failingRecovery = recoveryFailing(() -> {
			throw new DecisionLogException("recovery's read failed (injected)");
		});
		String previous = holder(instanceId);
		CrossClusterTransactionManager failing = builder(instanceId, ProtocolHook.NONE).decisionLog(failingRecovery)
			.build();
		assertThat(catchThrowable(failing::start)).isInstanceOf(DecisionLogException.class);
		String run = holder(instanceId);
		assertThat(run).isNotEqualTo(previous);
		return run;
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
