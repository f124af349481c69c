package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The two-phase commit across two real 3-broker KRaft clusters in one JVM.
 */
class CrossClusterTransactionTests {

	private static final StringSerializer STRING = new StringSerializer();

	// Stops brokers: clusters of its own.
	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = EmbeddedKafkaClustersExtension.perClass(ClusterPreset.EAST3_WEST3);

	private final InMemoryDecisionLog decisionLog = new InMemoryDecisionLog();

	private final TransactionStatistics statistics = new TransactionStatistics();

	private final List<CrossClusterTransactionManager> managers = new ArrayList<>();

	private String topic = "";

	@org.junit.jupiter.api.BeforeEach
	void createTopics(TestInfo info) {
		this.topic = "t-" + info.getTestMethod().orElseThrow().getName();
		kafka.cluster("east").createTopic(this.topic, 3, (short) 3);
		kafka.cluster("west").createTopic(this.topic, 3, (short) 3);
	}

	@AfterEach
	void closeManagers() {
		this.managers.forEach(CrossClusterTransactionManager::close);
	}

	private CrossClusterTransactionManager manager(ProtocolHook hook) {
		return manager(hook, 1);
	}

	private CrossClusterTransactionManager manager(ProtocolHook hook, int slots) {
		return manager(hook, slots, this.decisionLog);
	}

	private CrossClusterTransactionManager manager(ProtocolHook hook, int slots, DecisionLog log) {
		return manager(hook, slots, log, Duration.ofSeconds(10));
	}

	private CrossClusterTransactionManager manager(ProtocolHook hook, int slots, DecisionLog log,
			Duration commitTimeout) {
		CrossClusterTransactionManager manager = CrossClusterTransactionManager.builder()
			.slots(slots)
			.recoveryInterval(Duration.ofMillis(500))
			.cluster("east", clientConfig("east"))
			.cluster("west", clientConfig("west"))
			.idPrefix("tests")
			.instanceId(this.topic)
			.decisionLog(log)
			.commitTimeout(commitTimeout)
			.protocolHook(hook)
			.listener(this.statistics)
			.build();
		manager.start();
		this.managers.add(manager);
		return manager;
	}

	private static Map<String, Object> clientConfig(String cluster) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster(cluster).bootstrapServers());
		config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000);
		config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 4000);
		return config;
	}

	private void sendBoth(CrossClusterTransaction txn, int perCluster) {
		for (int i = 0; i < perCluster; i++) {
			txn.send("east", new ProducerRecord<>(this.topic, "k" + i, "east-" + i), STRING, STRING);
			txn.send("west", new ProducerRecord<>(this.topic, "k" + i, "west-" + i), STRING, STRING);
		}
	}

	private List<String> committed(String cluster) {
		return ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), this.topic);
	}

	@Test
	void commitIsVisibleOnBothClustersExactlyOnce() {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterTransaction txn = manager.begin();
		sendBoth(txn, 10);
		txn.commit();
		assertThat(txn.state()).isEqualTo(TransactionState.COMMITTED);
		assertThat(committed("east")).hasSize(10).doesNotHaveDuplicates().allMatch((v) -> v.startsWith("east-"));
		assertThat(committed("west")).hasSize(10).doesNotHaveDuplicates().allMatch((v) -> v.startsWith("west-"));
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.COMPLETED);
	}

	@Test
	void oneClusterTransactionCommitsWithoutADecision() {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterTransaction txn = manager.begin();
		txn.send("west", new ProducerRecord<>(this.topic, "k", "only-west"), STRING, STRING);
		txn.commit();
		assertThat(committed("west")).containsExactly("only-west");
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.UNKNOWN);
	}

	@Test
	void oneClusterCommitWithoutAnAnswerIsInDoubtNotAbortedAndCommitsOnceTheClusterIsBack() {
		// Two of west's three brokers stop between prepare and commit: the transaction state log
		// cannot reach its min ISR, so commitTransaction() times out although the broker may still
		// complete it. Reporting that as aborted would make a listener redeliver: duplicates.
		List<Integer> brokers = kafka.cluster("west").brokerIds();
		AtomicInteger stops = new AtomicInteger();
		ProtocolHook stopWest = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_PREPARE && stops.getAndIncrement() == 0) {
				kafka.cluster("west").stopBroker(brokers.get(1));
				kafka.cluster("west").stopBroker(brokers.get(2));
			}
		};
		CrossClusterTransactionManager manager = manager(stopWest, 1, this.decisionLog, Duration.ofSeconds(3));
		CrossClusterTransaction txn = manager.begin();
		for (int i = 0; i < 5; i++) {
			txn.send("west", new ProducerRecord<>(this.topic, "k" + i, "west-" + i), STRING, STRING);
		}
		InDoubtTransactionException inDoubt;
		try {
			inDoubt = org.assertj.core.api.Assertions.catchThrowableOfType(InDoubtTransactionException.class, txn::commit);
			assertThat(inDoubt).isNotNull();
			assertThat(txn.state()).isEqualTo(TransactionState.IN_DOUBT);
			assertThat(manager.inDoubtTransactionIds()).containsExactly(txn.transactionId());
		}
		finally {
			kafka.cluster("west").restartBroker(brokers.get(1));
			kafka.cluster("west").restartBroker(brokers.get(2));
		}
		assertThat(inDoubt.outcome()).succeedsWithin(Duration.ofSeconds(90)).isEqualTo(TransactionState.COMMITTED);
		// The commit is confirmed once the broker has logged it; its markers reach the partitions
		// just after (so do the restarted brokers' replicas).
		await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(committed("west"))
			.containsExactlyInAnyOrder("west-0", "west-1", "west-2", "west-3", "west-4"));
		TransactionStatistics.Snapshot counts = this.statistics.snapshot();
		assertThat(counts.aborted()).isZero();
		assertThat(counts.inDoubt()).isEqualTo(1);
		assertThat(counts.recovered()).isEqualTo(1);
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.UNKNOWN);
		// The slot is free again.
		CrossClusterTransaction next = manager.begin();
		next.send("west", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.commit();
		await().atMost(Duration.ofSeconds(60))
			.untilAsserted(() -> assertThat(committed("west")).hasSize(6).doesNotHaveDuplicates().contains("after"));
	}

	@Test
	void oneClusterCommitRefusedByTheBrokerIsSettledByItsMarker() {
		// A producer with the same transactional.id fences the participant between prepare and
		// commit, which aborts its open transaction: the commit is refused, and the marker proves
		// the broker aborted it.
		AtomicInteger fenced = new AtomicInteger();
		ProtocolHook fence = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_PREPARE && fenced.getAndIncrement() == 0) {
				Map<String, Object> config = new HashMap<>(clientConfig("west"));
				config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tests.west." + this.topic + ".0");
				try (KafkaProducer<String, String> zombieFencer = new KafkaProducer<>(config, STRING, STRING)) {
					zombieFencer.initTransactions();
				}
			}
		};
		CrossClusterTransactionManager manager = manager(fence);
		assertThat(manager.transactionalId("west", 0)).isEqualTo("tests.west." + this.topic + ".0");
		CrossClusterTransaction txn = manager.begin();
		txn.send("west", new ProducerRecord<>(this.topic, "k", "fenced"), STRING, STRING);
		assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(txn::commit)
			.withMessageContaining("marker record was aborted");
		assertThat(txn.state()).isEqualTo(TransactionState.ABORTED);
		assertThat(this.statistics.snapshot().aborted()).isEqualTo(1);
		CrossClusterTransaction next = manager.begin();
		next.send("west", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.commit();
		assertThat(committed("west")).containsExactly("after");
	}

	@Test
	void failingSendAbortsEveryClusterAndLeavesNothingVisible() {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterTransaction txn = manager.begin();
		for (int i = 0; i < 5; i++) {
			txn.send("east", new ProducerRecord<>(this.topic, "k", "east-" + i), STRING, STRING);
		}
		// Larger than max.request.size (1 MiB): the broker never sees it, the send fails.
		txn.send("west", new ProducerRecord<>(this.topic, new byte[0], new byte[2 * 1024 * 1024]));
		assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(txn::commit);
		assertThat(txn.state()).isEqualTo(TransactionState.ABORTED);
		assertThat(committed("east")).isEmpty();
		assertThat(committed("west")).isEmpty();
		// The slot is usable again and the aborted records never resurface.
		CrossClusterTransaction next = manager.begin();
		sendBoth(next, 2);
		next.commit();
		assertThat(committed("east")).containsExactlyInAnyOrder("east-0", "east-1");
		assertThat(committed("west")).containsExactlyInAnyOrder("west-0", "west-1");
	}

	@Test
	void clusterThatCannotReachMinIsrAbortsEverythingAndNothingIsVisible() throws Exception {
		// The abort on west cannot complete either: it is given up after the commit timeout.
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE, 1, this.decisionLog, Duration.ofSeconds(3));
		List<Integer> brokers = kafka.cluster("west").brokerIds();
		kafka.cluster("west").stopBroker(brokers.get(1));
		kafka.cluster("west").stopBroker(brokers.get(2));
		try {
			CrossClusterTransaction txn = manager.begin();
			sendBoth(txn, 5);
			assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(txn::commit);
		}
		finally {
			kafka.cluster("west").restartBroker(brokers.get(1));
			kafka.cluster("west").restartBroker(brokers.get(2));
		}
		assertThat(committed("east")).isEmpty();
		assertThat(committed("west")).isEmpty();
	}

	@Test
	void crashAfterTheDecisionIsCommittedByRecovery() {
		CrossClusterTransactionManager crashing = manager(crashAt(ProtocolStep.AFTER_DECISION));
		CrossClusterTransaction txn = crashing.begin();
		sendBoth(txn, 10);
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(txn::commit);
		crashing.abandon();
		assertThat(this.decisionLog.inDoubt(crashing.owner(), Duration.ofSeconds(1))).hasSize(1);

		manager(ProtocolHook.NONE);
		assertThat(committed("east")).hasSize(10).doesNotHaveDuplicates();
		assertThat(committed("west")).hasSize(10).doesNotHaveDuplicates();
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.COMPLETED);
	}

	@Test
	void crashMidCommitCommitsTheRestOnRecoveryExactlyOnce() {
		CrossClusterTransactionManager crashing = manager(crashAt(ProtocolStep.MID_COMMIT));
		CrossClusterTransaction txn = crashing.begin();
		sendBoth(txn, 10);
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(txn::commit);
		crashing.abandon();

		manager(ProtocolHook.NONE);
		assertThat(committed("east")).hasSize(10).doesNotHaveDuplicates();
		assertThat(committed("west")).hasSize(10).doesNotHaveDuplicates();
	}

	@Test
	void crashBeforeTheDecisionIsAbortedOnRestart() {
		CrossClusterTransactionManager crashing = manager(crashAt(ProtocolStep.AFTER_PREPARE));
		CrossClusterTransaction txn = crashing.begin();
		sendBoth(txn, 10);
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(txn::commit);
		crashing.abandon();

		CrossClusterTransactionManager restarted = manager(ProtocolHook.NONE);
		// initTransactions() aborted the prepared-but-undecided transactions: readers move on.
		CrossClusterTransaction next = restarted.begin();
		next.send("east", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.send("west", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.commit();
		assertThat(committed("east")).containsExactly("after");
		assertThat(committed("west")).containsExactly("after");
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.UNKNOWN);
	}

	@Test
	void participantWithoutRecordsNeitherFailsTheCommitNorLeavesATransactionOpen() {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		KafkaConsumer<String, String> westConsumer = manager.createConsumer("west",
				Map.of(ConsumerConfig.GROUP_ID_CONFIG, "g-" + this.topic), new StringDeserializer(), new StringDeserializer());
		try {
			CrossClusterTransaction txn = manager.begin();
			txn.send("east", new ProducerRecord<>(this.topic, "k", "east-only"), STRING, STRING);
			txn.sendOffsets(westConsumer, Map.of());
			// No offsets enlist nothing; enlisting west ahead (as a pipeline's processor does) sends
			// only its marker, and the commit aborts that marker-only transaction.
			assertThat(txn.enlistedClusters()).containsExactly("east");
			txn.enlistClusterOf(westConsumer);
			assertThat(txn.enlistedClusters()).containsExactly("east", "west");
			txn.commit();
			assertThat(committed("east")).containsExactly("east-only");
			// No transaction was left open on west: its last stable offset moves with a new commit.
			CrossClusterTransaction next = manager.begin();
			next.send("west", new ProducerRecord<>(this.topic, "k", "west-next"), STRING, STRING);
			next.commit();
			assertThat(committed("west")).containsExactly("west-next");
			// An empty transaction commits too.
			CrossClusterTransaction nothing = manager.begin();
			nothing.commit();
			assertThat(nothing.state()).isEqualTo(TransactionState.COMMITTED);
		}
		finally {
			westConsumer.close();
		}
	}

	@Test
	void recordsSentAsynchronouslyJustBeforeCommitAreAllCommitted() {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterTransaction txn = manager.begin();
		List<Future<RecordMetadata>> sends = new ArrayList<>();
		sends.add(txn.send("west", new ProducerRecord<>(this.topic, "k", "first"), STRING, STRING));
		for (int i = 0; i < 9; i++) {
			sends.add(txn.send(i % 2 == 0 ? "east" : "west", new ProducerRecord<>(this.topic, "k", "more-" + i), STRING, STRING));
		}
		txn.commit();
		assertThat(sends).allMatch(Future::isDone);
		assertThat(committed("east").size() + committed("west").size()).isEqualTo(10);
	}

	@Test
	void abortLeavesNothingVisibleOnEitherCluster() {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		try (CrossClusterTransaction txn = manager.begin()) {
			sendBoth(txn, 10);
			throwingWork();
		}
		catch (IllegalStateException expected) {
			// the try-with-resources close() aborted the transaction
		}
		assertThat(committed("east")).isEmpty();
		assertThat(committed("west")).isEmpty();
	}

	private static void throwingWork() {
		throw new IllegalStateException("business failure");
	}

	@Test
	void offsetsAreCommittedOnTheConsumersOwnCluster() throws Exception {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("east").bootstrapServers()), STRING, STRING)) {
			for (int i = 0; i < 10; i++) {
				producer.send(new ProducerRecord<>(this.topic, 0, "k", "in-" + i)).get();
			}
		}
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		String group = "g-" + this.topic;
		KafkaConsumer<String, String> consumer = manager.createConsumer("east",
				Map.of(ConsumerConfig.GROUP_ID_CONFIG, group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
				new StringDeserializer(), new StringDeserializer());
		try {
			TopicPartition partition = new TopicPartition(this.topic, 0);
			consumer.assign(List.of(partition));
			List<ConsumerRecord<String, String>> records = new ArrayList<>();
			await().atMost(Duration.ofSeconds(20)).until(() -> {
				consumer.poll(Duration.ofMillis(200)).forEach(records::add);
				return records.size() >= 10;
			});
			CrossClusterTransaction txn = manager.begin();
			for (ConsumerRecord<String, String> record : records) {
				txn.send("west", new ProducerRecord<>(this.topic, record.key(), record.value().replace("in", "out")),
						STRING, STRING);
			}
			txn.sendOffsets(consumer, Map.of(partition, new OffsetAndMetadata(records.get(9).offset() + 1)));
			txn.commit();
			assertThat(committed("west")).hasSize(10);
			try (Admin west = Admin.create(Map.of("bootstrap.servers", kafka.cluster("west").bootstrapServers()))) {
				Map<TopicPartition, OffsetAndMetadata> eastOffsets = ReadCommitted
					.groupOffsets(kafka.cluster("east").bootstrapServers(), group, partition.topic());
				assertThat(eastOffsets.get(partition).offset()).isEqualTo(10);
				assertThat(west.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()).isEmpty();
			}
		}
		finally {
			consumer.close();
		}
	}

	@Test
	void offsetsOfAnUnregisteredConsumerAreRefused() {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		try (KafkaConsumer<String, String> foreign = new KafkaConsumer<>(
				Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("west").bootstrapServers(),
						ConsumerConfig.GROUP_ID_CONFIG, "foreign"),
				new StringDeserializer(), new StringDeserializer());
				CrossClusterTransaction txn = manager.begin()) {
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> txn.sendOffsets(foreign, Map.of(new TopicPartition(this.topic, 0), new OffsetAndMetadata(1))))
				.withMessageContaining("not registered");
		}
	}

	@Test
	void templateCommitsWhenTheWorkReturnsAndBindsTheTransactionToTheThread() {
		CrossClusterTransactionTemplate template = new CrossClusterTransactionTemplate(manager(ProtocolHook.NONE));
		String id = template.execute((txn) -> {
			assertThat(CrossClusterTransactionTemplate.currentTransaction()).isSameAs(txn);
			sendBoth(txn, 3);
			return txn.transactionId();
		});
		assertThat(CrossClusterTransactionTemplate.currentTransaction()).isNull();
		assertThat(id).isNotBlank();
		assertThat(committed("east")).hasSize(3);
		assertThat(committed("west")).hasSize(3);
	}

	@Test
	void templateAbortsEverywhereWhenTheWorkThrows() {
		CrossClusterTransactionTemplate template = new CrossClusterTransactionTemplate(manager(ProtocolHook.NONE));
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> template.execute((txn) -> {
			sendBoth(txn, 3);
			throw new IllegalStateException("business failure");
		}));
		assertThat(committed("east")).isEmpty();
		assertThat(committed("west")).isEmpty();
	}

	@Test
	void checkedExceptionCommitsUnlessTheRollbackRuleSaysOtherwise() {
		CrossClusterTransactionTemplate template = new CrossClusterTransactionTemplate(manager(ProtocolHook.NONE));
		assertThatExceptionOfType(java.io.IOException.class).isThrownBy(() -> template.executeChecked((txn) -> {
			txn.send("east", new ProducerRecord<>(this.topic, "k", "kept"), STRING, STRING);
			throw new java.io.IOException("checked");
		}));
		CrossClusterTransactionTemplate strict = template.withRollbackOn((ex) -> true);
		assertThatExceptionOfType(java.io.IOException.class).isThrownBy(() -> strict.executeChecked((txn) -> {
			txn.send("east", new ProducerRecord<>(this.topic, "k", "dropped"), STRING, STRING);
			throw new java.io.IOException("checked");
		}));
		assertThat(committed("east")).containsExactly("kept");
	}

	@Test
	void requiredJoinsTheOuterTransactionAndAnInnerFailureMarksItRollbackOnly() {
		CrossClusterTransactionTemplate template = new CrossClusterTransactionTemplate(manager(ProtocolHook.NONE));
		assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(() -> template.execute((outer) -> {
			outer.send("east", new ProducerRecord<>(this.topic, "k", "outer"), STRING, STRING);
			try {
				template.execute((inner) -> {
					assertThat(inner).isSameAs(outer);
					inner.send("west", new ProducerRecord<>(this.topic, "k", "inner"), STRING, STRING);
					throw new IllegalStateException("inner failure");
				});
			}
			catch (IllegalStateException swallowed) {
				// the outer scope goes on, but the transaction is rollback-only
			}
			return null;
		})).withMessageContaining("rollback-only");
		assertThat(committed("east")).isEmpty();
		assertThat(committed("west")).isEmpty();
	}

	@Test
	void requiresNewCommitsIndependentlyOfTheOuterTransaction() {
		CrossClusterTransactionTemplate template = new CrossClusterTransactionTemplate(manager(ProtocolHook.NONE, 2));
		CrossClusterTransactionTemplate requiresNew = template.withPropagation(Propagation.REQUIRES_NEW);
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> template.execute((outer) -> {
			outer.send("east", new ProducerRecord<>(this.topic, "k", "outer"), STRING, STRING);
			requiresNew.execute((inner) -> {
				assertThat(inner).isNotSameAs(outer);
				inner.send("west", new ProducerRecord<>(this.topic, "k", "inner"), STRING, STRING);
				return null;
			});
			assertThat(CrossClusterTransactionTemplate.currentTransaction()).isSameAs(outer);
			throw new IllegalStateException("outer failure");
		}));
		assertThat(committed("east")).isEmpty();
		assertThat(committed("west")).containsExactly("inner");
	}

	@Test
	void mandatoryAndNeverEnforceTheirPropagation() {
		CrossClusterTransactionTemplate template = new CrossClusterTransactionTemplate(manager(ProtocolHook.NONE));
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> template.withPropagation(Propagation.MANDATORY).execute((txn) -> null))
			.withMessageContaining("MANDATORY");
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> template.execute(
				(txn) -> template.withPropagation(Propagation.NEVER).execute((none) -> null)))
			.withMessageContaining("NEVER");
		Boolean unbound = template.withPropagation(Propagation.NEVER).execute((none) -> none == null);
		assertThat(unbound).isTrue();
	}

	@Test
	void activeTransactionsListWhatIsInFlight() {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterTransaction txn = manager.begin();
		txn.send("east", new ProducerRecord<>(this.topic, "k", "v"), STRING, STRING);
		assertThat(manager.activeTransactions()).singleElement().satisfies((info) -> {
			assertThat(info.transactionId()).isEqualTo(txn.transactionId());
			assertThat(info.state()).isEqualTo(TransactionState.ACTIVE);
			assertThat(info.clusters()).containsExactly("east");
		});
		txn.commit();
		assertThat(manager.activeTransactions()).isEmpty();
	}

	@Test
	void decidedTransactionWhoseClusterIsDownAtCommitIsCommittedInTheBackgroundOnceItIsBack() {
		List<Integer> brokers = kafka.cluster("west").brokerIds();
		ProtocolHook stopWest = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_DECISION) {
				kafka.cluster("west").stopBroker(brokers.get(1));
				kafka.cluster("west").stopBroker(brokers.get(2));
			}
		};
		// West's commit times out (twice) and the resolution tried before reporting it in-doubt too.
		CrossClusterTransactionManager manager = manager(stopWest, 1, this.decisionLog, Duration.ofSeconds(3));
		CrossClusterTransaction txn = manager.begin();
		sendBoth(txn, 5);
		InDoubtTransactionException inDoubt;
		try {
			inDoubt = org.assertj.core.api.Assertions.catchThrowableOfType(InDoubtTransactionException.class, txn::commit);
			assertThat(inDoubt).isNotNull();
			assertThat(manager.inDoubtTransactionIds()).containsExactly(txn.transactionId());
		}
		finally {
			kafka.cluster("west").restartBroker(brokers.get(1));
			kafka.cluster("west").restartBroker(brokers.get(2));
		}
		assertThat(inDoubt.outcome()).isNotNull();
		assertThat(inDoubt.outcome()).succeedsWithin(Duration.ofSeconds(90)).isEqualTo(TransactionState.COMMITTED);
		assertThat(committed("east")).hasSize(5);
		assertThat(committed("west")).hasSize(5);
		assertThat(manager.inDoubtCount()).isZero();
	}

	@Test
	void unknownDecisionIsResolvedAsAbortedInTheBackgroundOnceTheLogIsBack() {
		FlakyDecisionLog flaky = new FlakyDecisionLog(this.decisionLog);
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE, 1, flaky);
		CrossClusterTransaction txn = manager.begin();
		sendBoth(txn, 5);
		flaky.down = true;
		InDoubtTransactionException inDoubt = org.assertj.core.api.Assertions
			.catchThrowableOfType(InDoubtTransactionException.class, txn::commit);
		assertThat(inDoubt).isNotNull();
		flaky.down = false;
		assertThat(inDoubt.outcome()).succeedsWithin(Duration.ofSeconds(60)).isEqualTo(TransactionState.ABORTED);
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.ABORTED);
		// Its slot is free again and the aborted records never show; readers are not held back.
		CrossClusterTransaction next = manager.begin();
		next.send("east", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.send("west", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.commit();
		assertThat(committed("east")).containsExactly("after");
		assertThat(committed("west")).containsExactly("after");
	}

	@Test
	void openTransactionsOfSlotsNoLongerUsedAreAbortedAtStart() {
		leaveAPreparedTransactionOpenInTheSecondSlot();

		CrossClusterTransactionManager restarted = manager(ProtocolHook.NONE, 1);
		CrossClusterTransaction next = restarted.begin();
		next.send("east", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.send("west", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.commit();
		assertThat(committed("east")).containsExactly("after");
		assertThat(committed("west")).containsExactly("after");
	}

	/**
	 * A previous run's undecided transaction on a cluster that is down when the next run starts:
	 * it cannot be aborted at start, so it is aborted before the new run's first producer of that
	 * cluster is initialized, once the cluster is back. Before, it stayed open until
	 * {@code transaction.timeout.ms}, holding back every read_committed reader of its partitions
	 * (seen in the mirror's chaos lot, after a start whose recovery was pending on both clusters).
	 */
	@Test
	void aPreviousRunsOpenTransactionOnAClusterDownAtStartIsAbortedWhenTheClusterIsFirstUsed() {
		leaveAPreparedTransactionOpenInTheSecondSlot();

		List<Integer> brokers = kafka.cluster("west").brokerIds();
		brokers.forEach(kafka.cluster("west")::stopBroker);
		CrossClusterTransactionManager restarted;
		try {
			restarted = manager(ProtocolHook.NONE, 1, this.decisionLog, Duration.ofSeconds(3));
		}
		finally {
			brokers.forEach(kafka.cluster("west")::restartBroker);
		}
		await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
			CrossClusterTransaction next = restarted.begin();
			try {
				next.send("east", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
				next.send("west", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
				next.commit();
				return true;
			}
			catch (RuntimeException ex) {
				next.close();
				return false;
			}
		});
		assertThat(committed("east")).containsExactly("after");
		assertThat(committed("west")).containsExactly("after");
	}

	/**
	 * A run crashes after the commits of a decided transaction, before recording its completion,
	 * while an undecided transaction it began earlier is still open on both clusters, with its
	 * markers ahead of the decided one's in the same marker partitions. The restart must tell the
	 * decided one committed and start with every cluster usable. Before, the undecided one held the
	 * last stable offset below the decided one's markers, so the decided one's recovery could not
	 * tell it committed, both clusters stayed pending (no producer initialized there), and nothing
	 * aborted the undecided one until {@code transaction.timeout.ms} (the app's and the mirror's
	 * chaos lots, halts after the decision and after the commits).
	 */
	@Test
	void aDecidedTransactionBehindAnUndecidedOneLeftOpenIsRecoveredAtStart() {
		CrossClusterTransactionManager crashing = manager(crashAt(ProtocolStep.AFTER_COMMIT), 2);
		CrossClusterTransaction undecided = crashing.begin();
		undecided.send("east", new ProducerRecord<>(this.topic, "k", "undecided"), STRING, STRING);
		undecided.send("west", new ProducerRecord<>(this.topic, "k", "undecided"), STRING, STRING);
		CrossClusterTransaction decided = crashing.begin();
		decided.send("east", new ProducerRecord<>(this.topic, "k", "decided"), STRING, STRING);
		decided.send("west", new ProducerRecord<>(this.topic, "k", "decided"), STRING, STRING);
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(decided::commit);
		crashing.abandon();

		CrossClusterTransactionManager restarted = manager(ProtocolHook.NONE, 2);
		assertThat(this.decisionLog.state(decided.transactionId(), Duration.ofSeconds(5)))
			.isEqualTo(DecisionState.COMPLETED);
		CrossClusterTransaction next = restarted.begin();
		next.send("east", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.send("west", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.commit();
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic))
			.containsExactly("decided", "after");
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic))
			.containsExactly("decided", "after");
	}

	/**
	 * A run with 2 slots crashes after preparing its second slot's transaction on both clusters
	 * (undecided, left open), its first slot's aborted.
	 */
	private void leaveAPreparedTransactionOpenInTheSecondSlot() {
		CrossClusterTransactionManager crashing = manager(crashAt(ProtocolStep.AFTER_PREPARE), 2);
		CrossClusterTransaction first = crashing.begin();
		CrossClusterTransaction second = crashing.begin();
		sendBoth(second, 3);
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(second::commit);
		first.abort();
		crashing.abandon();
	}

	/**
	 * A decision log that can be made unreachable.
	 */
	static final class FlakyDecisionLog implements DecisionLog {

		private final DecisionLog delegate;

		volatile boolean down;

		FlakyDecisionLog(DecisionLog delegate) {
			this.delegate = delegate;
		}

		@Override
		public boolean sharedByInstances() {
			return this.delegate.sharedByInstances();
		}

		private void check() {
			if (this.down) {
				throw new DecisionLogException("decision log unreachable (test)");
			}
		}

		@Override
		public Decision decide(Decision decision, Duration timeout) {
			check();
			return this.delegate.decide(decision, timeout);
		}

		@Override
		public void complete(String transactionId) {
			check();
			this.delegate.complete(transactionId);
		}

		@Override
		public void abort(String transactionId, String owner, Duration timeout) {
			check();
			this.delegate.abort(transactionId, owner, timeout);
		}

		@Override
		public DecisionState state(String transactionId, Duration timeout) {
			check();
			return this.delegate.state(transactionId, timeout);
		}

		@Override
		public java.util.List<Decision> inDoubt(String owner, Duration timeout) {
			check();
			return this.delegate.inDoubt(owner, timeout);
		}

		@Override
		public void close() {
		}

	}

	private static ProtocolHook crashAt(ProtocolStep crashStep) {
		AtomicInteger crashes = new AtomicInteger();
		return (transactionId, step) -> {
			if (step == crashStep && crashes.getAndIncrement() == 0) {
				throw new ProtocolHook.SimulatedCrashException(step);
			}
		};
	}

}
