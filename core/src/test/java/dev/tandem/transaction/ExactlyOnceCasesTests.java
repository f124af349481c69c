package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;
import dev.tandem.transaction.internals.ProducerInternals;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

/**
 * Failure cases that public reports of Kafka exactly-once pipelines describe, replayed on two
 * real 3-broker KRaft clusters: a consume-transform-produce loop reads {@code east} and writes
 * {@code west} through Tandem, and each test checks every record with {@code read_committed}.
 * Crashes are simulated with {@link ProtocolHook} and {@link CrossClusterTransactionManager#abandon()}
 * (producers closed without aborting, as a dead process leaves them).
 */
class ExactlyOnceCasesTests {

	private static final StringSerializer STRING = new StringSerializer();

	/** Short enough that a broker aborts an abandoned transaction within a test. */
	private static final Duration SHORT_TRANSACTION_TIMEOUT = Duration.ofSeconds(6);

	// The brokers look for timed-out transactions every 500 ms instead of every 10 s.
	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST3_WEST3
		.builder()
		.brokerProperty("transaction.abort.timed.out.transaction.cleanup.interval.ms", "500"));

	private final InMemoryDecisionLog decisionLog = new InMemoryDecisionLog();

	private final List<CrossClusterTransactionManager> managers = new ArrayList<>();

	private final List<KafkaConsumer<?, ?>> consumers = new ArrayList<>();

	private String source = "";

	private String sink = "";

	private String group = "";

	private String instance = "";

	@BeforeEach
	void createTopics(TestInfo info) {
		String name = info.getTestMethod().orElseThrow().getName();
		this.instance = name;
		this.source = "in-" + name;
		this.sink = "out-" + name;
		this.group = "g-" + name;
		kafka.cluster("east").createTopic(this.source, 1, (short) 3);
		kafka.cluster("east").createTopic(this.sink, 3, (short) 3);
		kafka.cluster("west").createTopic(this.sink, 3, (short) 3);
	}

	@AfterEach
	void close() {
		this.consumers.forEach((consumer) -> consumer.close(Duration.ZERO));
		this.managers.forEach(CrossClusterTransactionManager::close);
	}

	@Test
	void aMarkerGoesToAPartitionLedByTheBrokerOfItsClustersFirstRecord() throws Exception {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE, this.decisionLog,
				CrossClusterTransactionManager.builder());
		int beside = 0;
		for (int i = 0; i < 6; i++) {
			String key = "k" + i;
			CrossClusterTransaction txn = manager.begin();
			txn.send("east", new ProducerRecord<>(this.sink, key, "east-" + i), STRING, STRING);
			txn.send("west", new ProducerRecord<>(this.sink, key, "west-" + i), STRING, STRING);
			txn.commit();
			int recordPartition = ProducerInternals.partitionForKey(STRING.serialize(this.sink, key), 3);
			for (Decision.ParticipantRecord participant : this.decisionLog.decision(txn.transactionId()).participants()) {
				int recordLeader = leader(participant.cluster(), this.sink, recordPartition);
				int markerLeader = leader(participant.cluster(), participant.markerTopic(), participant.markerPartition());
				// The marker topic has a partition per broker; only where none of them is led by the
				// record's broker (leaders not spread) does the marker keep the producer's choice.
				if (leadersOf(participant.cluster(), participant.markerTopic()).contains(recordLeader)) {
					assertThat(markerLeader).as("leader of %s's marker on %s", txn.transactionId(), participant.cluster())
						.isEqualTo(recordLeader);
					beside++;
				}
			}
		}
		assertThat(beside).isPositive();
		assertThat(committed("east")).hasSize(6);
		assertThat(committed("west")).hasSize(6);
	}

	private static int leader(String cluster, String topic, int partition) throws Exception {
		return kafka.cluster(cluster).admin().describeTopics(List.of(topic)).allTopicNames().get().get(topic)
			.partitions().get(partition).leader().id();
	}

	private static List<Integer> leadersOf(String cluster, String topic) throws Exception {
		return kafka.cluster(cluster).admin().describeTopics(List.of(topic)).allTopicNames().get().get(topic)
			.partitions().stream().filter((info) -> info.leader() != null).map((info) -> info.leader().id()).toList();
	}

	@Test
	void crashBetweenSendingOffsetsAndCommitResumesTheGroupFromTheLastCommittedTransaction() {
		produce(this.source, 30, "flight-");
		CrossClusterTransactionManager first = manager(crashAt(ProtocolStep.AFTER_PREPARE, 2), this.decisionLog,
				CrossClusterTransactionManager.builder());
		KafkaConsumer<String, String> consumer = consumer(first);
		copyOneBatch(first, consumer, "first");
		// The second batch's records and offsets are at the brokers, inside open Kafka
		// transactions on both clusters, when the app dies: no decision was written.
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class)
			.isThrownBy(() -> copyOneBatch(first, consumer, "first"));
		first.abandon();
		consumer.close(Duration.ZERO);
		this.consumers.remove(consumer);
		assertThat(committedOffset()).isEqualTo(10);

		CrossClusterTransactionManager restarted = manager(ProtocolHook.NONE, this.decisionLog,
				CrossClusterTransactionManager.builder());
		KafkaConsumer<String, String> resumed = consumer(restarted);
		List<ConsumerRecord<String, String>> batch = poll(resumed, 10);
		assertThat(batch.get(0).offset()).as("first offset read after the restart").isEqualTo(10);
		send(restarted, resumed, batch, "restarted");
		send(restarted, resumed, poll(resumed, 10), "restarted");

		List<String> west = ReadCommitted.values(kafka.cluster("west").bootstrapServers(), this.sink);
		assertThat(west).hasSize(30).doesNotHaveDuplicates();
		assertThat(west).filteredOn((value) -> value.endsWith("@first"))
			.as("only the committed first batch of the crashed instance")
			.hasSize(10)
			.allMatch((value) -> flightNumber(value) < 10);
		assertThat(west).filteredOn((value) -> value.endsWith("@restarted")).hasSize(20)
			.allMatch((value) -> flightNumber(value) >= 10);
		assertThat(stableOffset()).isEqualTo(30);
	}

	@Test
	void appDownLongerThanTheTransactionTimeoutAfterItsDecisionIsReportedAsHeuristicAtRestart() {
		CrossClusterTransactionManager crashed = manager(crashAt(ProtocolStep.MID_COMMIT, 1), this.decisionLog,
				CrossClusterTransactionManager.builder().transactionTimeout(SHORT_TRANSACTION_TIMEOUT));
		CrossClusterTransaction txn = crashed.begin();
		sendBoth(txn, 5);
		// East commits first, then the app dies before west commits.
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(txn::commit);
		crashed.abandon();
		awaitAbortedByTheBroker("west", crashed.transactionalId("west", 0));

		RecordingListener events = new RecordingListener();
		TransactionStatistics statistics = new TransactionStatistics();
		CrossClusterTransactionManager restarted = manager(ProtocolHook.NONE, this.decisionLog,
				CrossClusterTransactionManager.builder().listener(events).listener(statistics));

		assertThat(events.heuristics).singleElement().satisfies((outcome) -> {
			assertThat(outcome.transactionId()).isEqualTo(txn.transactionId());
			assertThat(outcome.committedClusters()).containsExactly("east");
			assertThat(outcome.abortedClusters()).containsExactly("west");
		});
		assertThat(events.recovered).as("never reported as recovered").isEmpty();
		assertThat(events.committed).as("never reported as committed").isEmpty();
		TransactionStatistics.Snapshot counts = statistics.snapshot();
		assertThat(counts.heuristic()).isEqualTo(1);
		assertThat(counts.recovered()).isZero();
		assertThat(counts.committed()).isZero();
		assertThat(counts.recentHeuristics()).extracting(HeuristicOutcome::transactionId)
			.containsExactly(txn.transactionId());
		assertThat(restarted.heuristicOutcome(txn.transactionId())).isNotNull();
		// The data really is mixed: that is what the report is about.
		assertThat(committed("east")).hasSize(5);
		assertThat(committed("west")).isEmpty();
	}

	@Test
	void appStalledLongerThanTheTransactionTimeoutAfterItsDecisionGetsAHeuristicOutcomeException() {
		AtomicInteger stalls = new AtomicInteger();
		ProtocolHook stall = (transactionId, step) -> {
			if (step == ProtocolStep.MID_COMMIT && stalls.getAndIncrement() == 0) {
				// A long GC pause or a stuck thread: east committed, west's broker gives up waiting.
				awaitAbortedByTheBroker("west", "tests.west." + this.instance + ".0");
			}
		};
		RecordingListener events = new RecordingListener();
		TransactionStatistics statistics = new TransactionStatistics();
		CrossClusterTransactionManager manager = manager(stall, this.decisionLog,
				CrossClusterTransactionManager.builder().transactionTimeout(SHORT_TRANSACTION_TIMEOUT)
					.listener(events).listener(statistics));
		assertThat(manager.transactionalId("west", 0)).isEqualTo("tests.west." + this.instance + ".0");
		CrossClusterTransaction txn = manager.begin();
		sendBoth(txn, 5);

		HeuristicOutcomeException heuristic = catchThrowableOfType(HeuristicOutcomeException.class, txn::commit);

		assertThat(heuristic).isNotNull();
		assertThat(heuristic.getOutcome().committedClusters()).containsExactly("east");
		assertThat(heuristic.getOutcome().abortedClusters()).containsExactly("west");
		assertThat(txn.state()).isEqualTo(TransactionState.HEURISTIC_MIXED);
		assertThat(events.heuristics).extracting(HeuristicOutcome::transactionId).containsExactly(txn.transactionId());
		assertThat(events.committed).isEmpty();
		assertThat(statistics.snapshot().heuristic()).isEqualTo(1);
		assertThat(statistics.snapshot().committed()).isZero();
		assertThat(committed("east")).hasSize(5);
		assertThat(committed("west")).isEmpty();
		// The slot is usable again.
		CrossClusterTransaction next = manager.begin();
		sendBoth(next, 1);
		next.commit();
		assertThat(committed("west")).containsExactly("west-0");
	}

	@Test
	void replayingAnAlreadyCommittedDecisionTwiceDuplicatesNothing() {
		CrossClusterTransactionManager crashed = manager(crashAt(ProtocolStep.AFTER_COMMIT, 1), this.decisionLog,
				CrossClusterTransactionManager.builder());
		CrossClusterTransaction txn = crashed.begin();
		sendBoth(txn, 10);
		// Every participant committed; the app dies before recording the completion.
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(txn::commit);
		crashed.abandon();
		assertThat(this.decisionLog.inDoubt(crashed.owner(), Duration.ofSeconds(1))).hasSize(1);

		// First replay: its completion is lost, so the decision stays in-doubt...
		RecordingListener firstReplay = new RecordingListener();
		CrossClusterTransactionManager first = manager(ProtocolHook.NONE, new CompletionLosingDecisionLog(this.decisionLog),
				CrossClusterTransactionManager.builder().listener(firstReplay));
		assertThat(firstReplay.recovered).containsExactly(txn.transactionId());
		first.abandon();
		assertThat(this.decisionLog.inDoubt(crashed.owner(), Duration.ofSeconds(1))).hasSize(1);
		// ... and a second manager of the same instance replays it again, after the first one's
		// initTransactions() moved the producer epochs on.
		RecordingListener secondReplay = new RecordingListener();
		manager(ProtocolHook.NONE, this.decisionLog, CrossClusterTransactionManager.builder().listener(secondReplay));

		assertThat(secondReplay.recovered).containsExactly(txn.transactionId());
		assertThat(firstReplay.heuristics).isEmpty();
		assertThat(secondReplay.heuristics).isEmpty();
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.COMPLETED);
		assertThat(committed("east")).hasSize(10).doesNotHaveDuplicates();
		assertThat(committed("west")).hasSize(10).doesNotHaveDuplicates();
	}

	@Test
	void abortedSourceTransactionsAreNeverMirrored() {
		Map<String, Object> config = new HashMap<>(kafka.cluster("east").producerProperties());
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "upstream-" + this.instance);
		List<String> expected = new ArrayList<>();
		try (KafkaProducer<String, String> upstream = new KafkaProducer<>(config, STRING, STRING)) {
			upstream.initTransactions();
			for (int batch = 0; batch < 6; batch++) {
				boolean commit = batch % 2 == 0;
				upstream.beginTransaction();
				for (int i = 0; i < 5; i++) {
					String value = (commit ? "committed-" : "aborted-") + batch + "-" + i;
					upstream.send(new ProducerRecord<>(this.source, "k" + i, value));
					if (commit) {
						expected.add(value);
					}
				}
				upstream.flush();
				if (commit) {
					upstream.commitTransaction();
				}
				else {
					upstream.abortTransaction();
				}
			}
		}
		long sourceEnd = endOffset();

		CrossClusterTransactionManager mirror = manager(ProtocolHook.NONE, this.decisionLog,
				CrossClusterTransactionManager.builder());
		KafkaConsumer<String, String> consumer = consumer(mirror);
		TopicPartition partition = new TopicPartition(this.source, 0);
		await().atMost(Duration.ofSeconds(60)).until(() -> {
			List<ConsumerRecord<String, String>> records = new ArrayList<>();
			consumer.poll(Duration.ofMillis(200)).forEach(records::add);
			long position = consumer.position(partition);
			CrossClusterTransaction txn = mirror.begin();
			for (ConsumerRecord<String, String> record : records) {
				txn.send("west", new ProducerRecord<>(this.sink, record.key(), record.value()), STRING, STRING);
			}
			txn.sendOffsets(consumer, Map.of(partition, new OffsetAndMetadata(position)));
			txn.commit();
			return position >= sourceEnd;
		});

		List<String> mirrored = ReadCommitted.values(kafka.cluster("west").bootstrapServers(), this.sink);
		assertThat(mirrored).containsExactlyInAnyOrderElementsOf(expected).hasSize(15);
		assertThat(stableOffset()).as("offsets past the aborted records and control markers").isEqualTo(sourceEnd);
	}

	// --- the copier: read east, write west and the offsets on east, in one transaction ---

	private void copyOneBatch(CrossClusterTransactionManager manager, KafkaConsumer<String, String> consumer,
			String incarnation) {
		send(manager, consumer, poll(consumer, 10), incarnation);
	}

	private void send(CrossClusterTransactionManager manager, KafkaConsumer<String, String> consumer,
			List<ConsumerRecord<String, String>> batch, String incarnation) {
		CrossClusterTransaction txn = manager.begin();
		for (ConsumerRecord<String, String> record : batch) {
			txn.send("west", new ProducerRecord<>(this.sink, record.key(), record.value() + "@" + incarnation), STRING,
					STRING);
		}
		ConsumerRecord<String, String> last = batch.get(batch.size() - 1);
		txn.sendOffsets(consumer, Map.of(new TopicPartition(last.topic(), last.partition()),
				new OffsetAndMetadata(last.offset() + 1)));
		txn.commit();
	}

	/** Polls exactly {@code count} records, leaving the consumer's position just after them. */
	private static List<ConsumerRecord<String, String>> poll(KafkaConsumer<String, String> consumer, int count) {
		List<ConsumerRecord<String, String>> records = new ArrayList<>();
		await().atMost(Duration.ofSeconds(60)).until(() -> {
			consumer.poll(Duration.ofMillis(200)).forEach(records::add);
			return records.size() >= count;
		});
		if (records.size() > count) {
			ConsumerRecord<String, String> next = records.get(count);
			consumer.seek(new TopicPartition(next.topic(), next.partition()), next.offset());
		}
		return List.copyOf(records.subList(0, count));
	}

	private KafkaConsumer<String, String> consumer(CrossClusterTransactionManager manager) {
		KafkaConsumer<String, String> consumer = manager.createConsumer("east",
				Map.of(ConsumerConfig.GROUP_ID_CONFIG, this.group, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
						ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10),
				new StringDeserializer(), new StringDeserializer());
		consumer.assign(List.of(new TopicPartition(this.source, 0)));
		this.consumers.add(consumer);
		return consumer;
	}

	private void produce(String topic, int count, String prefix) {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(kafka.cluster("east").producerProperties(),
				STRING, STRING)) {
			for (int i = 0; i < count; i++) {
				producer.send(new ProducerRecord<>(topic, "k" + i, prefix + i));
			}
			producer.flush();
		}
	}

	private static int flightNumber(String value) {
		return Integer.parseInt(value.substring("flight-".length(), value.indexOf('@')));
	}

	private long committedOffset() {
		try {
			Admin admin = kafka.cluster("east").admin();
			OffsetAndMetadata offset = admin.listConsumerGroupOffsets(this.group)
				.partitionsToOffsetAndMetadata()
				.get()
				.get(new TopicPartition(this.source, 0));
			return (offset != null) ? offset.offset() : -1;
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	// once the last commit's markers have reached __consumer_offsets (commit() returns before)
	private long stableOffset() {
		OffsetAndMetadata offset = ReadCommitted.groupOffsets(kafka.cluster("east").bootstrapServers(), this.group, this.source)
			.get(new TopicPartition(this.source, 0));
		return (offset != null) ? offset.offset() : -1;
	}

	private long endOffset() {
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(kafka.cluster("east").consumerProperties())) {
			TopicPartition partition = new TopicPartition(this.source, 0);
			return consumer.endOffsets(List.of(partition), Duration.ofSeconds(30)).get(partition);
		}
	}

	private void sendBoth(CrossClusterTransaction txn, int perCluster) {
		for (int i = 0; i < perCluster; i++) {
			txn.send("east", new ProducerRecord<>(this.sink, "k" + i, "east-" + i), STRING, STRING);
			txn.send("west", new ProducerRecord<>(this.sink, "k" + i, "west-" + i), STRING, STRING);
		}
	}

	private List<String> committed(String cluster) {
		return ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), this.sink);
	}

	/**
	 * Waits until a cluster's transaction coordinator has aborted the open transaction of a
	 * transactional id because its {@code transaction.timeout.ms} expired.
	 */
	private static void awaitAbortedByTheBroker(String cluster, String transactionalId) {
		Admin admin = kafka.cluster(cluster).admin();
		await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> admin
			.describeTransactions(List.of(transactionalId))
			.description(transactionalId)
			.get()
			.state() == org.apache.kafka.clients.admin.TransactionState.COMPLETE_ABORT);
	}

	private CrossClusterTransactionManager manager(ProtocolHook hook, DecisionLog log,
			CrossClusterTransactionManagerBuilder builder) {
		CrossClusterTransactionManager manager = builder.cluster("east", clientConfig("east"))
			.cluster("west", clientConfig("west"))
			.idPrefix("tests")
			.instanceId(this.instance)
			.decisionLog(log)
			.commitTimeout(Duration.ofSeconds(15))
			.recoveryInterval(Duration.ofMillis(500))
			.protocolHook(hook)
			.build();
		this.managers.add(manager);
		manager.start();
		return manager;
	}

	private static Map<String, Object> clientConfig(String cluster) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster(cluster).bootstrapServers());
		config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
		config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 10000);
		return config;
	}

	/** Crashes at the given step of the n-th transaction (1-based) that reaches it. */
	private static ProtocolHook crashAt(ProtocolStep crashStep, int nth) {
		AtomicInteger reached = new AtomicInteger();
		return (transactionId, step) -> {
			if (step == crashStep && reached.incrementAndGet() == nth) {
				throw new ProtocolHook.SimulatedCrashException(step);
			}
		};
	}

	/**
	 * Records what a manager reports.
	 */
	static final class RecordingListener implements TransactionListener {

		final List<String> committed = new CopyOnWriteArrayList<>();

		final List<String> recovered = new CopyOnWriteArrayList<>();

		final List<HeuristicOutcome> heuristics = new CopyOnWriteArrayList<>();

		@Override
		public void onCommitted(String transactionId, int participants, Duration commitLatency) {
			this.committed.add(transactionId);
		}

		@Override
		public void onRecovered(String transactionId) {
			this.recovered.add(transactionId);
		}

		@Override
		public void onHeuristicOutcome(HeuristicOutcome outcome) {
			this.heuristics.add(outcome);
		}

	}

	/**
	 * A decision log whose completions are lost, as when the app dies right after recovery
	 * committed and before the completion reached the log.
	 */
	static final class CompletionLosingDecisionLog implements DecisionLog {

		private final DecisionLog delegate;

		CompletionLosingDecisionLog(DecisionLog delegate) {
			this.delegate = delegate;
		}

		@Override
		public boolean sharedByInstances() {
			return this.delegate.sharedByInstances();
		}

		@Override
		public Decision decide(Decision decision, Duration timeout) {
			return this.delegate.decide(decision, timeout);
		}

		@Override
		public void complete(String transactionId) {
			// lost
		}

		@Override
		public void abort(String transactionId, String owner, Duration timeout) {
			this.delegate.abort(transactionId, owner, timeout);
		}

		@Override
		public DecisionState state(String transactionId, Duration timeout) {
			return this.delegate.state(transactionId, timeout);
		}

		@Override
		public List<Decision> inDoubt(String owner, Duration timeout) {
			return this.delegate.inDoubt(owner, timeout);
		}

		@Override
		public void close() {
		}

	}

}
