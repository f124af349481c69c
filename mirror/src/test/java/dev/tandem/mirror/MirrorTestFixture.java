package dev.tandem.mirror;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.test.EmbeddedKafkaCluster;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;

/**
 * What the mirror's integration tests share, as a JUnit extension on a {@code static}
 * {@code @RegisterExtension} field beside the kit's {@link EmbeddedKafkaClustersExtension} (whose
 * clusters {@code east} and {@code west} it reaches through that extension):
 * <ul>
 * <li>one real Ratis coordinator peer for the class, started before its tests and closed after
 * them, whose decision log is shared by instances (so that its leases see a duplicate
 * instance);</li>
 * <li>per test, a {@link #name() name} taken from the test method, and the mirrors and managers
 * the test started, closed after it in the reverse order;</li>
 * <li>helpers to produce records and read groups' offsets.</li>
 * </ul>
 * It reaches the clusters from test methods only, so the order of the two registrations does not
 * matter. The per-test state lives in this one instance: the test methods of a class must not
 * run concurrently.
 */
final class MirrorTestFixture implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

	private final EmbeddedKafkaClustersExtension kafka;

	private final String idPrefix;

	private final boolean sourceInNames;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private @Nullable EmbeddedCoordinator coordinator;

	private String name = "";

	private MirrorTestFixture(EmbeddedKafkaClustersExtension kafka, String idPrefix, boolean sourceInNames) {
		this.kafka = kafka;
		this.idPrefix = idPrefix;
		this.sourceInNames = sourceInNames;
	}

	/**
	 * Returns a fixture whose mirrors copy {@code east} to {@code west}, their managers'
	 * transactional ids prefixed with {@code idPrefix}, their instance ids and consumer groups
	 * named after the test.
	 */
	static MirrorTestFixture eastToWest(EmbeddedKafkaClustersExtension kafka, String idPrefix) {
		return new MirrorTestFixture(kafka, idPrefix, false);
	}

	/**
	 * Returns a fixture whose mirrors may copy either way, their managers' transactional ids
	 * prefixed with {@code idPrefix}, their instance ids and consumer groups named after the test
	 * and their source cluster.
	 */
	static MirrorTestFixture eitherWay(EmbeddedKafkaClustersExtension kafka, String idPrefix) {
		return new MirrorTestFixture(kafka, idPrefix, true);
	}

	@Override
	public void beforeAll(ExtensionContext context) throws Exception {
		this.coordinator = EmbeddedCoordinator.builder(Files.createTempDirectory(this.idPrefix + "-coordinator"))
			.client((log) -> log.sharedByInstances(true))
			.start();
	}

	@Override
	public void afterAll(ExtensionContext context) throws Exception {
		if (this.coordinator != null) {
			this.coordinator.close();
		}
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		String method = context.getRequiredTestMethod().getName();
		this.name = method.substring(0, Math.min(method.length(), 40));
		this.closeables.clear();
	}

	@Override
	public void afterEach(ExtensionContext context) throws Exception {
		try {
			for (int i = this.closeables.size() - 1; i >= 0; i--) {
				this.closeables.get(i).close();
			}
		}
		finally {
			this.closeables.clear();
		}
	}

	/** Returns the current test method's name, cut to 40 characters, for topic and group names. */
	String name() {
		return this.name;
	}

	EmbeddedCoordinator coordinator() {
		EmbeddedCoordinator coordinator = this.coordinator;
		if (coordinator == null) {
			throw new IllegalStateException("The coordinator starts before the class's tests");
		}
		return coordinator;
	}

	EmbeddedKafkaCluster east() {
		return this.kafka.cluster("east");
	}

	EmbeddedKafkaCluster west() {
		return this.kafka.cluster("west");
	}

	/** Starts a mirror from {@code east} to {@code west}, closed after the test. */
	Mirror mirror(UnaryOperator<MirrorSettings.Builder> customizer) {
		return mirror(UnaryOperator.identity(), customizer);
	}

	/** Starts a mirror from {@code east} to {@code west}, closed after the test. */
	Mirror mirror(UnaryOperator<CrossClusterTransactionManagerBuilder> managerCustomizer,
			UnaryOperator<MirrorSettings.Builder> customizer) {
		return mirror(managerCustomizer, Map.of(), customizer);
	}

	/**
	 * Starts a mirror from {@code east} to {@code west} whose manager's clients of {@code west}
	 * have {@code westConfig} on top of {@link #client(EmbeddedKafkaCluster)}'s; closed after the
	 * test.
	 */
	Mirror mirror(UnaryOperator<CrossClusterTransactionManagerBuilder> managerCustomizer,
			Map<String, Object> westConfig, UnaryOperator<MirrorSettings.Builder> customizer) {
		return mirror("east", List.of("west"), managerCustomizer, westConfig, customizer);
	}

	/** Starts a mirror, closed after the test. */
	Mirror mirror(String source, List<String> targets, UnaryOperator<MirrorSettings.Builder> customizer) {
		return mirror(source, targets, UnaryOperator.identity(), customizer);
	}

	/** Starts a mirror, closed after the test. */
	Mirror mirror(String source, List<String> targets,
			UnaryOperator<CrossClusterTransactionManagerBuilder> managerCustomizer,
			UnaryOperator<MirrorSettings.Builder> customizer) {
		return mirror(source, targets, managerCustomizer, Map.of(), customizer);
	}

	private Mirror mirror(String source, List<String> targets,
			UnaryOperator<CrossClusterTransactionManagerBuilder> managerCustomizer, Map<String, Object> westConfig,
			UnaryOperator<MirrorSettings.Builder> customizer) {
		String stem = this.sourceInNames ? this.name + "-" + source : this.name;
		CrossClusterTransactionManager manager = managerCustomizer
			.apply(manager(stem + "-" + this.closeables.size(), westConfig))
			.build();
		manager.start();
		this.closeables.add(manager);
		MirrorSettings settings = customizer.apply(MirrorSettings.builder(source, targets)
			.consumerGroup("mirror-" + stem)
			.groupSyncInterval(Duration.ofMillis(200))
			.topicRefreshInterval(Duration.ofSeconds(1))).build();
		Mirror mirror = new Mirror(manager, settings);
		this.closeables.add(mirror);
		mirror.start();
		return mirror;
	}

	/**
	 * Returns a manager's builder on {@code east} and {@code west} and this class's coordinator,
	 * for a manager the test starts and closes itself.
	 */
	CrossClusterTransactionManagerBuilder manager(String instanceId) {
		return manager(instanceId, Map.of());
	}

	private CrossClusterTransactionManagerBuilder manager(String instanceId, Map<String, Object> westConfig) {
		Map<String, Object> west = client(west());
		west.putAll(westConfig);
		return CrossClusterTransactionManager.builder()
			.cluster("east", client(east()))
			.cluster("west", west)
			.idPrefix(this.idPrefix)
			.instanceId(instanceId)
			.decisionLog(coordinator().decisionLog());
	}

	/** Returns a manager's client settings for a cluster: at most 50 records a poll. */
	static Map<String, Object> client(EmbeddedKafkaCluster cluster) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
		config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 50);
		return config;
	}

	Uuid topicId(String topic) throws Exception {
		return east().admin().describeTopics(List.of(topic)).allTopicNames().get().get(topic).topicId();
	}

	/** Commits a group's offset on {@code east}, as a consumer of the group would. */
	void commitOnSource(String group, TopicPartition partition, long offset) throws Exception {
		east().admin().alterConsumerGroupOffsets(group, Map.of(partition, new OffsetAndMetadata(offset))).all().get();
	}

	/** Returns a group's committed offset of a partition on {@code west}, or -1 if it has none. */
	long targetCommitted(String group, TopicPartition partition) throws Exception {
		OffsetAndMetadata offset = west().admin().listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
			.get(partition);
		return (offset != null) ? offset.offset() : -1;
	}

	/** Returns whether a group on {@code west} has one member, assigned {@code partitions} partitions. */
	boolean onlyMemberOwns(String group, int partitions) throws Exception {
		var members = west().admin().describeConsumerGroups(List.of(group)).all().get().get(group).members();
		return members.size() == 1 && members.iterator().next().assignment().topicPartitions().size() == partitions;
	}

	/** Returns records {@code from} (inclusive) to {@code to} (exclusive), record i on partition i % partitions. */
	static List<ProducerRecord<String, String>> spread(String topic, int partitions, int from, int to) {
		List<ProducerRecord<String, String>> records = new ArrayList<>();
		for (int i = from; i < to; i++) {
			records.add(new ProducerRecord<>(topic, i % partitions, "k" + i, "v" + i));
		}
		return records;
	}

	static void produce(EmbeddedKafkaCluster cluster, List<ProducerRecord<String, String>> records) {
		send(cluster, records, new StringSerializer(), new StringSerializer());
	}

	static void produceBytes(EmbeddedKafkaCluster cluster, List<ProducerRecord<byte[], byte[]>> records) {
		send(cluster, records, new ByteArraySerializer(), new ByteArraySerializer());
	}

	private static <K, V> void send(EmbeddedKafkaCluster cluster, List<ProducerRecord<K, V>> records,
			Serializer<K> keySerializer, Serializer<V> valueSerializer) {
		try (KafkaProducer<K, V> producer = new KafkaProducer<>(cluster.producerProperties(), keySerializer,
				valueSerializer)) {
			records.forEach(producer::send);
			producer.flush();
		}
	}

	static String utf8(byte[] bytes) {
		return new String(bytes, StandardCharsets.UTF_8);
	}

	/**
	 * A protocol hook that holds the first transaction to reach {@link ProtocolStep#BEFORE_PREPARE}
	 * (after its offset commit) until {@link #release() released} or closed; every other step and
	 * transaction passes. Like any hook that does not say otherwise, it
	 * {@link ProtocolHook#injectsFaults() injects faults}.
	 */
	static final class HeldPrepare implements ProtocolHook, AutoCloseable {

		private final CountDownLatch held = new CountDownLatch(1);

		private final CountDownLatch release = new CountDownLatch(1);

		private final AtomicBoolean armed = new AtomicBoolean(true);

		@Override
		public void reached(String transactionId, ProtocolStep step) {
			if (step == ProtocolStep.BEFORE_PREPARE && this.armed.compareAndSet(true, false)) {
				this.held.countDown();
				try {
					this.release.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}

		/** Returns whether a transaction was held within {@code timeout}. */
		boolean awaitHeld(Duration timeout) throws InterruptedException {
			return this.held.await(timeout.toSeconds(), TimeUnit.SECONDS);
		}

		/** Lets the held transaction, if any, and every later one go on. */
		void release() {
			this.release.countDown();
		}

		/** Releases the held transaction, if any: a test's {@code try (hold)} never leaves it held. */
		@Override
		public void close() {
			release();
		}

	}

}
