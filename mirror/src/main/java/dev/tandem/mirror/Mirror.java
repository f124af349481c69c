package dev.tandem.mirror;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.transaction.CrossClusterProcessor;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.FailureBackOff;
import dev.tandem.transaction.HeuristicOutcomeException;

/**
 * An exactly-once mirror from one source cluster to one or more target clusters, on Tandem's
 * cross-cluster transactions (design: {@code docs/architecture.md}, "Mirror").
 * <p>
 * The source is read {@code read_committed} by a consumer of the mirror's own group (created by
 * {@link CrossClusterTransactionManager#createConsumer}); each mirror transaction, driven by a
 * {@link CrossClusterProcessor}, writes the records to every target (same partition; key, value,
 * headers and timestamp kept, plus the {@link Provenance} headers) and the mirror's source offsets,
 * all or nothing. Several instances (each with its own Tandem instance id) share the partitions
 * through the mirror's group. Target topics are created with the source's partition count
 * ({@link MirrorSettings#replicationFactor()}, {@link MirrorSettings#copiedConfigs()}) and grow when
 * the source does, before any record of a new partition is written.
 * <p>
 * <b>Group offset translation.</b> For the selected source groups, their committed offsets are
 * read at {@link MirrorSettings#groupSyncInterval()} and translated exactly with the
 * source-to-target mapping of the mirrored records ({@link OffsetMapping}); the translated
 * offsets go to the targets' {@code __consumer_offsets} inside the mirror's transactions, so a
 * group moved from the source to a target neither skips nor re-reads. When the source is quiet, a
 * transaction of translated offsets alone is committed.
 * <p>
 * <b>Active-active.</b> Mirrors A→B and B→A together never loop: a record whose origin header is
 * the target is not copied there, and topics named as remote copies of a target's topics
 * ({@code <target>.*}) are not selected.
 * <p>
 * {@link #start()} starts the mirror's thread; {@link #close()} commits what is open and stops it.
 * Thread-safe.
 *
 * @since 0.1.0
 */
public final class Mirror implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(Mirror.class);

	/** Bound of every admin call and of the rebuild of a partition's offset mapping. */
	private static final Duration ADMIN_TIMEOUT = Duration.ofSeconds(30);

	private final CrossClusterTransactionManager manager;

	private final MirrorSettings settings;

	private final TargetTopics topics;

	private final GroupOffsetFollower follower;

	private final Assignment assignment;

	private final OffsetMappings mappings;

	private final MirrorProgress progress;

	private final RecordCopier copier;

	private final GroupTranslator translator;

	private final Object lifecycleMonitor = new Object();

	private @Nullable Thread thread;

	private @Nullable KafkaConsumer<byte[], byte[]> consumer;

	private volatile boolean running;

	private volatile @Nullable Throwable failure;

	/**
	 * Creates a mirror; nothing is read or written before {@link #start()}.
	 * @param manager a running manager that knows the source and every target cluster
	 * @param settings what to mirror
	 * @throws IllegalArgumentException if the manager does not know a cluster of the settings
	 */
	public Mirror(CrossClusterTransactionManager manager, MirrorSettings settings) {
		this.manager = manager;
		this.settings = settings;
		for (String cluster : clusters(settings)) {
			if (!manager.clusters().contains(cluster)) {
				throw new IllegalArgumentException("Cluster '" + cluster + "' of the mirror is not configured; known: "
						+ manager.clusters());
			}
		}
		Map<String, Admin> topicAdmins = new LinkedHashMap<>();
		Map<String, Admin> groupAdmins = new LinkedHashMap<>();
		for (String target : settings.targets()) {
			topicAdmins.put(target, manager.clusterClients().admin(target, ADMIN_TIMEOUT));
			groupAdmins.put(target, manager.clusterClients().admin(target, ADMIN_TIMEOUT));
		}
		this.topics = new TargetTopics(settings, manager.clusterClients().admin(settings.source(), ADMIN_TIMEOUT),
				topicAdmins, ADMIN_TIMEOUT);
		this.assignment = new Assignment(settings.topics());
		this.follower = new GroupOffsetFollower(settings, manager.clusterClients().admin(settings.source(), ADMIN_TIMEOUT),
				groupAdmins, ADMIN_TIMEOUT, this.assignment);
		this.mappings = new OffsetMappings(settings, this.topics, manager.clusterClients(), ADMIN_TIMEOUT);
		this.translator = new GroupTranslator(settings, this.follower, this.assignment, this.mappings);
		this.progress = new MirrorProgress(settings, manager.owner(), this.follower, this.assignment, this.mappings,
				this.translator);
		this.copier = new RecordCopier(settings, this.topics, this.mappings, this.progress);
	}

	private static List<String> clusters(MirrorSettings settings) {
		List<String> clusters = new ArrayList<>(settings.targets());
		clusters.add(0, settings.source());
		return clusters;
	}

	/**
	 * Creates the missing target topics, then starts following groups and mirroring on the
	 * mirror's own thread.
	 * @throws MirrorException if the source or a target does not answer
	 * @throws IllegalStateException if already started
	 */
	public void start() {
		synchronized (this.lifecycleMonitor) {
			if (this.thread != null) {
				throw new IllegalStateException("Mirror " + describe() + " is already started");
			}
			Map<String, Integer> selected = this.topics.refresh();
			logger.info("Mirror {} starting ({}): {} topic(s) selected now {}, naming {}, groups {}", describe(),
					this.manager.owner(), selected.size(), selected.keySet(), this.settings.naming(), this.settings.groups());
			this.follower.start();
			Map<String, Object> overrides = new LinkedHashMap<>();
			overrides.put(ConsumerConfig.GROUP_ID_CONFIG, this.settings.consumerGroup());
			overrides.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
			overrides.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, (int) this.settings.topicRefreshInterval().toMillis());
			overrides.put(ConsumerConfig.CLIENT_ID_CONFIG, "tandem-mirror-" + this.manager.owner());
			overrides.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPollRecords());
			KafkaConsumer<byte[], byte[]> source = this.manager.createConsumer(this.settings.source(), overrides,
					new ByteArrayDeserializer(), new ByteArrayDeserializer());
			this.consumer = source;
			this.running = true;
			Thread loop = new Thread(() -> run(source), "tandem-mirror-" + this.manager.owner());
			loop.setDaemon(true);
			this.thread = loop;
			loop.start();
		}
	}

	/**
	 * The source consumer's {@code max.poll.records}: the cluster's (Kafka's default if unset),
	 * lowered to {@link MirrorSettings#maxRecords()}. The processor closes a transaction only
	 * between polls, so without it one poll (500 records by default) would make a transaction of
	 * many times {@code max-records}.
	 */
	private int maxPollRecords() {
		Object configured = this.manager.clusterClients().consumerConfig(this.settings.source())
			.get(ConsumerConfig.MAX_POLL_RECORDS_CONFIG);
		int poll = (configured != null) ? Integer.parseInt(configured.toString().trim())
				: ConsumerConfig.DEFAULT_MAX_POLL_RECORDS;
		return Math.min(poll, this.settings.maxRecords());
	}

	private void run(KafkaConsumer<byte[], byte[]> source) {
		CrossClusterProcessor<byte[], byte[]> processor = CrossClusterProcessor.builder(this.manager, source)
			.subscribe(this.settings.topics().subscriptionPattern())
			.rebalanceListener(new Assignments())
			.depth(this.settings.depth())
			.maxRecords(this.settings.maxRecords())
			.growth(this.settings.growth())
			.maxInterval(this.settings.maxInterval())
			.handler(this.copier::copy)
			.beforeCommit((txn, next) -> this.translator.beforeCommit(txn))
			.listener(this.copier)
			.listener(this.translator)
			.build();
		FailureBackOff backOff = new FailureBackOff();
		long nextTopicRefresh = System.nanoTime() + this.settings.topicRefreshInterval().toNanos();
		try {
			while (this.running) {
				try {
					processor.poll(Duration.ofMillis(100));
					if (System.nanoTime() >= nextTopicRefresh) {
						this.topics.refresh();
						this.mappings.incarnations(this.topics.sourceTopicIds());
						nextTopicRefresh = System.nanoTime() + this.settings.topicRefreshInterval().toNanos();
					}
					if (processor.inFlight() == 0 && idle()) {
						translateIdle();
						// only this thread begins transactions: still idle when the positions are read
						if (idle()) {
							this.progress.idlePositions(positions(source));
						}
					}
					backOff.succeeded();
				}
				catch (WakeupException ex) {
					// close() wakes the consumer up
				}
				catch (HeuristicOutcomeException ex) {
					logger.error("Mirror {}: a transaction has a heuristic (mixed) outcome; the mirror stops and needs an "
							+ "operator (see /actuator/kafkatransactions)", describe(), ex);
					this.failure = ex;
					return;
				}
				catch (RuntimeException ex) {
					if (!backOff.failed("Mirror " + describe(), ex)) {
						return;
					}
				}
			}
		}
		finally {
			try {
				processor.close();
			}
			finally {
				this.manager.unregisterConsumer(source);
				source.close(Duration.ofSeconds(5));
			}
		}
	}

	/** Whether every mirror transaction's outcome has been told (none open, none unresolved). */
	private boolean idle() {
		return this.copier.idle() && this.translator.idle();
	}

	/** The idle translation transaction, counted with the others. */
	private void translateIdle() {
		try {
			if (this.translator.translateIdle(this.manager)) {
				this.progress.committed(Map.of(), 0, System.currentTimeMillis());
			}
		}
		catch (RuntimeException ex) {
			this.progress.aborted();
			throw ex;
		}
	}

	private static Map<TopicPartition, Long> positions(KafkaConsumer<byte[], byte[]> source) {
		Map<TopicPartition, Long> positions = new LinkedHashMap<>();
		for (TopicPartition partition : source.assignment()) {
			try {
				positions.put(partition, source.position(partition, Duration.ZERO));
			}
			catch (org.apache.kafka.common.errors.TimeoutException ex) {
				// no position yet
			}
		}
		return positions;
	}

	/**
	 * Returns what the mirror did and how far behind it is.
	 * @return a snapshot
	 */
	public MirrorStatus status() {
		return this.progress.status();
	}

	/**
	 * Returns the settings.
	 * @return the settings
	 */
	public MirrorSettings settings() {
		return this.settings;
	}

	/**
	 * Returns whether the mirror's thread runs.
	 * @return false before {@link #start()}, after {@link #close()} or after a fatal failure
	 */
	public boolean isRunning() {
		Thread loop = this.thread;
		return this.running && loop != null && loop.isAlive();
	}

	/**
	 * Returns the failure that stopped the mirror (a heuristic outcome), if any.
	 * @return the failure, or {@code null}
	 */
	public @Nullable Throwable failure() {
		return this.failure;
	}

	/**
	 * Commits the open transaction, waits for the pipeline, stops the thread and closes the
	 * mirror's clients; does not close the manager. Idempotent.
	 */
	@Override
	public void close() {
		synchronized (this.lifecycleMonitor) {
			this.running = false;
			KafkaConsumer<byte[], byte[]> source = this.consumer;
			Thread loop = this.thread;
			if (source != null && loop != null && loop.isAlive()) {
				source.wakeup();
				try {
					loop.join(Duration.ofSeconds(60).toMillis());
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			this.follower.close();
			this.topics.close();
		}
	}

	private String describe() {
		return this.settings.source() + "->" + this.settings.targets();
	}

	private final class Assignments implements ConsumerRebalanceListener {

		@Override
		public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
			revoked(partitions);
		}

		@Override
		public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
			List<TopicPartition> selected = Mirror.this.assignment.assign(partitions);
			Mirror.this.progress.assigned(selected);
			Mirror.this.mappings.rebuild(selected);
		}

		@Override
		public void onPartitionsLost(Collection<TopicPartition> partitions) {
			revoked(partitions);
		}

		private void revoked(Collection<TopicPartition> partitions) {
			Mirror.this.assignment.revoke(partitions);
			Mirror.this.progress.revoked(partitions);
			Mirror.this.mappings.revoked(partitions);
		}

	}

}
