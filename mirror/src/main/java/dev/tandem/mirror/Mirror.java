package dev.tandem.mirror;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.transaction.CrossClusterProcessor;
import dev.tandem.transaction.CrossClusterProcessorBuilder;
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
 * all or nothing. Where those offsets live is {@link MirrorSettings#positions()}: with
 * {@link MirrorSettings.Positions#TARGET} (one target, the default) in the mirror's group on the
 * target, so that a mirror transaction is one Kafka transaction there and the source only sees
 * fetches; the source consumer is then assigned the partitions that a member of that group owns
 * (its generation fences an instance that lost them, KIP-447). With
 * {@link MirrorSettings.Positions#SOURCE} in the mirror's group on the source, through which the
 * source consumer is subscribed, and every mirror transaction is a cross-cluster transaction.
 * Several instances (each with its own Tandem instance id) share the partitions through the
 * mirror's group. Target topics are created with the source's partition count
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

	/**
	 * Bound of one read of pending positions on the target, tried again at every loop while a
	 * previous owner's transaction holds them.
	 */
	private static final Duration PENDING_READ = Duration.ofMillis(500);

	private final CrossClusterTransactionManager manager;

	private final MirrorSettings settings;

	private final TargetTopics topics;

	private final GroupOffsetFollower follower;

	private final Assignment assignment;

	private final OffsetMappings mappings;

	private final MirrorProgress progress;

	private final RecordCopier copier;

	private final GroupTranslator translator;

	private final PositionsGuard guard;

	private final Object lifecycleMonitor = new Object();

	private @Nullable Thread thread;

	private @Nullable KafkaConsumer<byte[], byte[]> consumer;

	/** With {@link MirrorSettings.Positions#TARGET}: the member of the mirror's group on the target. */
	private @Nullable KafkaConsumer<byte[], byte[]> members;

	/** Remote topic -> source topic, of every topic selected so far (polling thread). */
	private Map<String, String> remoteTopics = Map.of();

	/** With {@link MirrorSettings.Positions#TARGET}: the rebalance listener of the member. */
	private @Nullable TargetAssignments targetAssignments;

	/** The source topics selected at {@link #start()}. */
	private Set<String> startSelection = Set.of();

	/**
	 * Whether this instance copies nothing because instances keeping their positions in the other
	 * place run ({@link PositionsGuard}).
	 */
	private volatile boolean waitingForOtherMode;

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
		this.guard = new PositionsGuard(settings, manager.clusterClients().admin(settings.source(), ADMIN_TIMEOUT),
				(settings.targets().size() == 1) ? manager.clusterClients().admin(settings.targets().get(0), ADMIN_TIMEOUT)
						: null,
				ADMIN_TIMEOUT);
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
			this.startSelection = Set.copyOf(selected.keySet());
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
			KafkaConsumer<byte[], byte[]> group = null;
			if (positionsOnTarget()) {
				Map<String, Object> memberOverrides = new LinkedHashMap<>();
				memberOverrides.put(ConsumerConfig.GROUP_ID_CONFIG, this.settings.consumerGroup());
				memberOverrides.put(ConsumerConfig.CLIENT_ID_CONFIG, "tandem-mirror-" + this.manager.owner() + "-members");
				memberOverrides.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
				memberOverrides.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
				// a source partition added at a topic refresh is a remote partition the group must see
				memberOverrides.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, (int) this.settings.topicRefreshInterval().toMillis());
				group = this.manager.createConsumer(this.settings.targets().get(0), memberOverrides,
						new ByteArrayDeserializer(), new ByteArrayDeserializer());
				this.members = group;
				this.targetAssignments = new TargetAssignments(source, group);
				if (!standDownForOtherMode()) {
					subscribeMembers(group, selected.keySet());
				}
			}
			KafkaConsumer<byte[], byte[]> memberConsumer = group;
			this.running = true;
			Thread loop = new Thread(() -> run(source, memberConsumer), "tandem-mirror-" + this.manager.owner());
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

	private boolean positionsOnTarget() {
		return this.settings.positions() == MirrorSettings.Positions.TARGET;
	}

	private void run(KafkaConsumer<byte[], byte[]> source, @Nullable KafkaConsumer<byte[], byte[]> group) {
		try {
			if (group == null && !awaitTargetModeStopped()) {
				closeClients(source, null);
				return;
			}
		}
		catch (RuntimeException ex) {
			logger.error("Mirror {}: could not take over the positions kept on the target; the mirror stops", describe(), ex);
			this.failure = ex;
			closeClients(source, null);
			return;
		}
		CrossClusterProcessorBuilder<byte[], byte[]> builder = CrossClusterProcessor.builder(this.manager, source)
			.depth(this.settings.depth())
			.maxRecords(this.settings.maxRecords())
			.growth(this.settings.growth())
			.maxInterval(this.settings.maxInterval())
			.handler(this.copier::copy)
			.beforeCommit((txn, next) -> this.translator.beforeCommit(txn))
			.listener(this.copier)
			.listener(this.translator);
		TargetAssignments targetAssignments = this.targetAssignments;
		if (group == null || targetAssignments == null) {
			builder.subscribe(this.settings.topics().subscriptionPattern()).rebalanceListener(new Assignments());
		}
		else {
			builder.assign(List.of()).offsetsIn(group, this::positions);
		}
		CrossClusterProcessor<byte[], byte[]> processor = builder.build();
		if (targetAssignments != null) {
			targetAssignments.processor = processor;
		}
		FailureBackOff backOff = new FailureBackOff();
		long nextTopicRefresh = System.nanoTime() + this.settings.topicRefreshInterval().toNanos();
		try {
			while (this.running) {
				try {
					// a transaction aborted after this count is rewound by a later poll, not this one
					long abortedBefore = this.progress.abortedCount();
					if (group != null) {
						pollMembers(group, source);
					}
					if (group == null || !source.assignment().isEmpty()) {
						processor.poll(Duration.ofMillis(100));
					}
					if (System.nanoTime() >= nextTopicRefresh) {
						Map<String, Integer> selected = this.topics.refresh();
						if (group != null) {
							if (standDownForOtherMode()) {
								if (!group.subscription().isEmpty()) {
									// revokes this instance's partitions: drained, then given up
									group.unsubscribe();
								}
							}
							else {
								subscribeMembers(group, selected.keySet());
							}
						}
						this.mappings.incarnations(this.topics.sourceTopicIds());
						nextTopicRefresh = System.nanoTime() + this.settings.topicRefreshInterval().toNanos();
					}
					if (processor.inFlight() == 0 && idle()) {
						translateIdle();
						// only this thread begins transactions: still idle when the positions are read; and
						// none aborted since the poll, or the consumer is not rewound yet (its position is
						// past records never mirrored)
						if (idle() && this.progress.abortedCount() == abortedBefore) {
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
				closeClients(source, group);
			}
		}
	}

	private void closeClients(KafkaConsumer<byte[], byte[]> source, @Nullable KafkaConsumer<byte[], byte[]> group) {
		this.manager.unregisterConsumer(source);
		source.close(Duration.ofSeconds(5));
		if (group != null) {
			TargetAssignments targetAssignments = this.targetAssignments;
			if (targetAssignments != null) {
				// leaving the group revokes its partitions: nothing is left to drain or reassign
				targetAssignments.closed = true;
			}
			this.manager.unregisterConsumer(group);
			group.close(Duration.ofSeconds(5));
		}
	}

	/**
	 * With {@link MirrorSettings.Positions#TARGET}: whether this instance must copy nothing now
	 * because the mirror's group on the source has members (instances keeping their positions
	 * there run, as during a rolling upgrade); logs the change.
	 */
	private boolean standDownForOtherMode() {
		boolean active = this.guard.otherModeActive();
		if (active != this.waitingForOtherMode) {
			if (active) {
				logger.warn("Mirror {}: instances keeping their positions on '{}' (group '{}' has members there) run; this "
						+ "instance (positions=target) copies nothing until they stopped, then continues from their positions",
						describe(), this.settings.source(), this.settings.consumerGroup());
			}
			else {
				logger.info("Mirror {}: no instance keeps its positions on '{}' any more; this instance copies", describe(),
						this.settings.source());
			}
			this.waitingForOtherMode = active;
		}
		return active;
	}

	/**
	 * With {@link MirrorSettings.Positions#SOURCE} and one target: waits while instances keeping
	 * their positions on the target run, then moves the target group's positions that are further
	 * on into the source group ({@link PositionsGuard#takePositionsFromTarget}).
	 * @return false if the mirror was closed meanwhile
	 */
	private boolean awaitTargetModeStopped() {
		if (this.settings.positions() != MirrorSettings.Positions.SOURCE || this.settings.targets().size() != 1) {
			return true;
		}
		while (this.running && this.guard.otherModeActive()) {
			if (!this.waitingForOtherMode) {
				logger.warn("Mirror {}: instances keeping their positions on '{}' (group '{}' has members there) run; this "
						+ "instance (positions=source) copies nothing until they stopped, then continues from their positions",
						describe(), this.settings.targets().get(0), this.settings.consumerGroup());
				this.waitingForOtherMode = true;
			}
			long until = System.nanoTime() + this.settings.topicRefreshInterval().toNanos();
			while (this.running && System.nanoTime() < until) {
				sleepQuietly(Duration.ofMillis(100));
			}
		}
		if (!this.running) {
			return false;
		}
		this.waitingForOtherMode = false;
		Map<String, String> remote = new LinkedHashMap<>();
		for (String topic : this.startSelection) {
			remote.put(this.settings.naming().remoteTopic(this.settings.source(), topic), topic);
		}
		this.guard.takePositionsFromTarget(remote, this.topics.sourceTopicIds());
		return true;
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
	 * Subscribes the member of the target group to the remote topics of the selected source
	 * topics (they exist on the target: {@link TargetTopics#refresh()} created them), if they
	 * changed.
	 */
	private void subscribeMembers(KafkaConsumer<byte[], byte[]> group, Collection<String> sourceTopics) {
		Map<String, String> remote = new LinkedHashMap<>();
		for (String topic : sourceTopics) {
			remote.put(this.settings.naming().remoteTopic(this.settings.source(), topic), topic);
		}
		if (remote.keySet().equals(group.subscription())) {
			return;
		}
		// never forgets a remote topic: a revocation after the topic left the selection still
		// names it (a remote topic's name always stands for the same source topic)
		Map<String, String> known = new LinkedHashMap<>(this.remoteTopics);
		known.putAll(remote);
		this.remoteTopics = Map.copyOf(known);
		logger.info("Mirror {}: the group '{}' on '{}' follows {} remote topic(s) now", describe(),
				this.settings.consumerGroup(), this.settings.targets().get(0), remote.size());
		if (remote.isEmpty()) {
			group.unsubscribe();
		}
		else {
			group.subscribe(remote.keySet(), this.targetAssignments);
		}
	}

	/**
	 * Keeps the member of the target group in its group (its partitions stay paused: it never
	 * fetches); rebalances run their callbacks here; waits for records only while this instance
	 * owns no partition.
	 */
	private void pollMembers(KafkaConsumer<byte[], byte[]> group, KafkaConsumer<byte[], byte[]> source) {
		if (group.subscription().isEmpty()) {
			if (source.assignment().isEmpty()) {
				sleepQuietly(Duration.ofMillis(100));
			}
			return;
		}
		TargetAssignments listener = this.targetAssignments;
		boolean pending = listener != null && listener.hasPending();
		group.poll((source.assignment().isEmpty() && !pending) ? Duration.ofMillis(100) : Duration.ZERO);
		if (listener != null) {
			listener.takePending();
		}
	}

	private static void sleepQuietly(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * The source positions a transaction commits in the target group: each source partition's
	 * next offset under its remote partition, with the source topic's incarnation as metadata.
	 */
	private Map<TopicPartition, OffsetAndMetadata> positions(Map<TopicPartition, OffsetAndMetadata> next) {
		Map<TopicPartition, OffsetAndMetadata> positions = new LinkedHashMap<>();
		next.forEach((source, offset) -> {
			Uuid topicId = this.mappings.topicId(source.topic());
			positions.put(remote(source), new OffsetAndMetadata(offset.offset(), (topicId != null) ? topicId.toString() : ""));
		});
		return positions;
	}

	private TopicPartition remote(TopicPartition source) {
		return new TopicPartition(this.settings.naming().remoteTopic(this.settings.source(), source.topic()),
				source.partition());
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
	 * Returns whether this instance copies nothing for now because instances of the same mirror
	 * that keep their positions in the other place ({@link MirrorSettings#positions()}) run: the
	 * mirror's group has members on the other cluster, as during a rolling upgrade or a switch of
	 * modes. Instances of the two modes never copy side by side (they would share the partitions
	 * through two unrelated groups and copy records twice); this one continues from their
	 * positions once they stopped. Checked at start and at every topic refresh
	 * ({@link MirrorSettings#topicRefreshInterval()}).
	 * @return whether this instance stands by
	 * @since 0.2.0
	 */
	public boolean isStandingBy() {
		return this.waitingForOtherMode;
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
				KafkaConsumer<byte[], byte[]> group = this.members;
				if (group != null) {
					group.wakeup();
				}
				try {
					loop.join(Duration.ofSeconds(60).toMillis());
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			this.follower.close();
			this.topics.close();
			this.guard.close();
		}
	}

	private String describe() {
		return this.settings.source() + "->" + this.settings.targets();
	}

	/** Newly assigned source partitions: the selected ones are mirrored, their mappings rebuilt. */
	private void assigned(Collection<TopicPartition> partitions) {
		List<TopicPartition> selected = this.assignment.assign(partitions);
		this.progress.assigned(selected);
		this.mappings.rebuild(selected);
	}

	/** Source partitions revoked or lost. */
	private void revoked(Collection<TopicPartition> partitions) {
		this.assignment.revoke(partitions);
		this.progress.revoked(partitions);
		this.mappings.revoked(partitions);
	}

	/**
	 * The rebalance listener of the target group's member ({@link MirrorSettings.Positions#TARGET}),
	 * on the polling thread: assigned remote partitions become assigned source partitions,
	 * positioned where the target group says (read {@code read_committed}, so a pending
	 * transactional offset commit of the previous owner is settled first); revoked ones are
	 * committed and drained first; lost ones are given up.
	 */
	private final class TargetAssignments implements ConsumerRebalanceListener {

		private final KafkaConsumer<byte[], byte[]> source;

		private final KafkaConsumer<byte[], byte[]> group;

		/** Set by the polling thread once it built the processor (before its first poll of the group). */
		@Nullable CrossClusterProcessor<byte[], byte[]> processor;

		/** Set when the source consumer is closed: the member's leave needs nothing done. */
		boolean closed;

		/** Remote -> source partition, assigned by the group, whose positions are not read yet. */
		private final Map<TopicPartition, TopicPartition> pending = new LinkedHashMap<>();

		/** Whether the wait for pending positions was logged. */
		private boolean waiting;

		TargetAssignments(KafkaConsumer<byte[], byte[]> source, KafkaConsumer<byte[], byte[]> group) {
			this.source = source;
			this.group = group;
		}

		@Override
		public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
			revoked(partitions, false);
		}

		@Override
		public void onPartitionsLost(Collection<TopicPartition> partitions) {
			revoked(partitions, true);
		}

		@Override
		public void onPartitionsAssigned(Collection<TopicPartition> remotes) {
			if (this.closed) {
				return;
			}
			this.group.pause(remotes);
			this.pending.putAll(sources(remotes));
			takePending();
		}

		/**
		 * Starts mirroring the pending partitions whose positions can be read now. A position is
		 * read {@code read_committed} (stable offsets): while a previous owner's transaction holds
		 * an offset commit of the partition, the read waits for that transaction's outcome, which
		 * can take until it is fenced (a restart or a takeover of that instance) or times out on
		 * the broker; the partitions stay pending meanwhile and are tried again at every loop, and
		 * the other partitions are mirrored on. Called on the polling thread.
		 */
		void takePending() {
			if (this.pending.isEmpty() || this.closed) {
				return;
			}
			Map<TopicPartition, OffsetAndMetadata> stored;
			try {
				stored = this.group.committed(this.pending.keySet(), PENDING_READ);
			}
			catch (org.apache.kafka.common.errors.TimeoutException ex) {
				if (!this.waiting) {
					logger.warn("Mirror {}: the positions of {} on '{}' are held by a transaction of a previous owner that "
							+ "has not ended; they are mirrored once it ends (committed or aborted)", describe(),
							this.pending.keySet(), Mirror.this.settings.targets().get(0));
					this.waiting = true;
				}
				return;
			}
			this.waiting = false;
			Map<TopicPartition, TopicPartition> sources = new LinkedHashMap<>(this.pending);
			this.pending.clear();
			// the bookkeeping first (mappings rebuilt, topic ids read), then assign and seek at once:
			// a source partition is never assigned without its position
			assigned(sources.values());
			Set<TopicPartition> assignment = new HashSet<>(this.source.assignment());
			assignment.addAll(sources.values());
			this.source.assign(assignment);
			Map<TopicPartition, Long> positioned = new LinkedHashMap<>();
			sources.forEach((remote, partition) -> {
				OffsetAndMetadata position = stored.get(remote);
				Uuid topicId = Mirror.this.mappings.topicId(partition.topic());
				if (position != null && (position.metadata().isEmpty() || topicId == null
						|| position.metadata().equals(topicId.toString()))) {
					this.source.seek(partition, position.offset());
					positioned.put(partition, position.offset());
				}
				// else: the source group's committed offset (a mirror that kept them there before),
				// then auto.offset.reset (earliest)
			});
			// everything before a stored position is mirrored: the lag counts from it (the follower
			// reads only the source, so the lag still moves while the target is down)
			Mirror.this.progress.idlePositions(positioned);
			logger.info("Mirror {}: assigned {} partition(s) through group '{}' on '{}', {} with a position there",
					describe(), sources.size(), Mirror.this.settings.consumerGroup(), Mirror.this.settings.targets().get(0),
					positioned.size());
		}

		/** Whether partitions wait for their positions (the loop then does not wait for records). */
		boolean hasPending() {
			return !this.pending.isEmpty();
		}

		private void revoked(Collection<TopicPartition> remotes, boolean lost) {
			if (this.closed) {
				return;
			}
			// pending ones were never given to the source consumer
			remotes.forEach(this.pending::remove);
			Map<TopicPartition, TopicPartition> sources = sources(remotes);
			sources.values().retainAll(this.source.assignment());
			CrossClusterProcessor<byte[], byte[]> current = this.processor;
			if (current != null && !sources.isEmpty()) {
				if (lost) {
					current.abandon(sources.values());
				}
				else {
					current.drain();
				}
			}
			Set<TopicPartition> assignment = new HashSet<>(this.source.assignment());
			assignment.removeAll(sources.values());
			this.source.assign(assignment);
			Mirror.this.revoked(sources.values());
		}

		/** Remote partition -> source partition, for the remote topics of selected source topics. */
		private Map<TopicPartition, TopicPartition> sources(Collection<TopicPartition> remotes) {
			Map<TopicPartition, TopicPartition> sources = new LinkedHashMap<>();
			for (TopicPartition remote : remotes) {
				String topic = Mirror.this.remoteTopics.get(remote.topic());
				if (topic != null) {
					sources.put(remote, new TopicPartition(topic, remote.partition()));
				}
			}
			return sources;
		}

	}

	private final class Assignments implements ConsumerRebalanceListener {

		@Override
		public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
			revoked(partitions);
		}

		@Override
		public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
			assigned(partitions);
			logger.info("Mirror {}: assigned {} partition(s) through group '{}' on '{}'", describe(), partitions.size(),
					Mirror.this.settings.consumerGroup(), Mirror.this.settings.source());
		}

		@Override
		public void onPartitionsLost(Collection<TopicPartition> partitions) {
			revoked(partitions);
		}

	}

}
