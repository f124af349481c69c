package dev.tandem.mirror;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.text.DurationText;

/**
 * Follows, at the group sync interval, on its own thread: the selected source groups' committed
 * offsets (Admin {@code listConsumerGroupOffsets}), whether each group has members on each target
 * (Admin {@code describeConsumerGroups}: a group with members there is never written), each group's
 * committed offsets on each target (a translation never moves a group backwards). On a second
 * thread, at the same interval and from the source alone: the {@code read_committed} end offsets
 * of the source partitions this instance mirrors ({@link Assignment}) and the mirror's own committed offsets (for the
 * lag), so that a target that does not answer cannot freeze the lag. Readers see one
 * {@link Snapshot}: the latest of each part. Thread-safe.
 */
final class GroupOffsetFollower implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(GroupOffsetFollower.class);

	private final MirrorSettings settings;

	private final Admin source;

	private final Map<String, Admin> targets;

	private final Duration timeout;

	private final Assignment assignment;

	private final ScheduledExecutorService executor;

	private final ScheduledExecutorService positionsExecutor;

	/** The groups' part of the snapshot (its source ends and mirror offsets unused). */
	private volatile Snapshot groups = Snapshot.EMPTY;

	private volatile Positions positions = Positions.EMPTY;

	/** The source topics named by the groups' offsets at the last read; only the groups' thread. */
	private Set<String> namedTopics = Set.of();

	private volatile boolean failing;

	private volatile boolean positionsFailing;

	GroupOffsetFollower(MirrorSettings settings, Admin source, Map<String, Admin> targets, Duration timeout,
			Assignment assignment) {
		this.settings = settings;
		this.source = source;
		this.targets = targets;
		this.timeout = timeout;
		this.assignment = assignment;
		this.executor = daemon("tandem-mirror-groups-" + settings.source());
		this.positionsExecutor = daemon("tandem-mirror-lag-" + settings.source());
	}

	private static ScheduledExecutorService daemon(String name) {
		return Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, name);
			thread.setDaemon(true);
			return thread;
		});
	}

	void start() {
		long interval = this.settings.groupSyncInterval().toMillis();
		this.executor.scheduleWithFixedDelay(this::refreshQuietly, 0, interval, TimeUnit.MILLISECONDS);
		this.positionsExecutor.scheduleWithFixedDelay(this::refreshPositionsQuietly, 0, interval,
				TimeUnit.MILLISECONDS);
	}

	Snapshot snapshot() {
		return this.groups.with(this.positions);
	}

	private void refreshPositionsQuietly() {
		try {
			this.positions = readPositions();
			if (this.positionsFailing) {
				logger.info("Mirror {}: reading the source's end offsets works again", this.settings.source());
				this.positionsFailing = false;
			}
		}
		catch (RuntimeException ex) {
			if (!this.positionsFailing) {
				logger.warn("Mirror {}: could not read the source's end offsets ({}); the lag is the last one read; "
						+ "retrying every {}", this.settings.source(), ex.toString(), DurationText.of(this.settings.groupSyncInterval()));
				this.positionsFailing = true;
			}
		}
	}

	private void refreshQuietly() {
		try {
			this.groups = readGroups();
			if (this.failing) {
				logger.info("Mirror {}: reading group offsets works again", this.settings.source());
				this.failing = false;
			}
		}
		catch (RuntimeException ex) {
			if (!this.failing) {
				logger.warn("Mirror {}: could not read group offsets ({}); retrying every {}", this.settings.source(),
						ex.toString(), DurationText.of(this.settings.groupSyncInterval()));
				this.failing = true;
			}
		}
	}

	/** Reads everything once, on the calling thread. */
	Snapshot read() {
		return readGroups().with(readPositions());
	}

	/** Reads the source's end offsets and the mirror's own committed offsets, from the source alone. */
	private Positions readPositions() {
		Map<TopicPartition, Long> ends = endOffsets(this.assignment.partitions());
		Map<TopicPartition, OffsetAndMetadata> own = committed(this.source, Set.of(this.settings.consumerGroup()),
				this.settings.source()).getOrDefault(this.settings.consumerGroup(), Map.of());
		return new Positions(Map.copyOf(ends), own);
	}

	/**
	 * Reads the groups on the source and on every target, and the ids of the source topics of the
	 * groups' offsets: described before and after the offsets are listed, so that an id is kept only
	 * when the topic was that incarnation all along (a topic first named by this read is described
	 * before the offsets at the next read; its offsets are translated from then on).
	 */
	private Snapshot readGroups() {
		Set<String> groups = groups();
		Set<String> named = this.namedTopics;
		Map<String, Uuid> before = named.isEmpty() ? Map.of() : topicIds(named);
		Map<String, Map<TopicPartition, OffsetAndMetadata>> sourceOffsets = groups.isEmpty() ? Map.of()
				: committed(this.source, groups, this.settings.source());
		Set<String> topics = new HashSet<>();
		sourceOffsets.values().forEach((offsets) -> offsets.keySet().stream()
			.map(TopicPartition::topic)
			.filter(this.settings.topics()::matches) // the mirrored ones: only those are translated
			.forEach(topics::add));
		Map<String, Uuid> after = topics.isEmpty() ? Map.of() : topicIds(topics);
		Map<String, Uuid> stable = new HashMap<>();
		after.forEach((topic, id) -> {
			if (id.equals(before.get(topic))) {
				stable.put(topic, id);
			}
		});
		this.namedTopics = Set.copyOf(topics);
		Map<String, Set<String>> active = new HashMap<>();
		Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> targetOffsets = new HashMap<>();
		for (String target : this.settings.targets()) {
			Admin admin = this.targets.get(target);
			active.put(target, groups.isEmpty() ? Set.of() : activeGroups(admin, groups, target));
			targetOffsets.put(target, groups.isEmpty() ? Map.of() : committed(admin, groups, target));
		}
		return new Snapshot(Map.copyOf(sourceOffsets), Map.copyOf(stable), Map.copyOf(active), Map.copyOf(targetOffsets),
				Map.of(), Map.of(), System.currentTimeMillis());
	}

	/** The ids of the source topics that exist, by name; a topic that does not is left out. */
	private Map<String, Uuid> topicIds(Set<String> topics) {
		Map<String, Uuid> ids = new HashMap<>();
		var described = this.source.describeTopics(topics).topicNameValues();
		for (String topic : topics) {
			try {
				ids.put(topic, KafkaCalls.get(described.get(topic), this.timeout,
						"describe topic '" + topic + "' of '" + this.settings.source() + "'").topicId());
			}
			catch (MirrorException ex) {
				if (!(ex.getCause() instanceof UnknownTopicOrPartitionException)) {
					throw ex;
				}
			}
		}
		return ids;
	}

	private Set<String> groups() {
		MirrorSettings.GroupSelection selection = this.settings.groups();
		Set<String> groups = new LinkedHashSet<>(selection.names());
		if (selection.pattern() != null) {
			Collection<GroupListing> listed = KafkaCalls.get(
					this.source.listGroups(ListGroupsOptions.forConsumerGroups()).all(), this.timeout,
					"list the consumer groups of '" + this.settings.source() + "'");
			listed.stream().map(GroupListing::groupId).filter(selection::matches).forEach(groups::add);
		}
		groups.remove(this.settings.consumerGroup());
		return groups;
	}

	private Map<String, Map<TopicPartition, OffsetAndMetadata>> committed(Admin admin, Set<String> groups,
			String cluster) {
		Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
		groups.forEach((group) -> specs.put(group, new ListConsumerGroupOffsetsSpec()));
		Map<String, Map<TopicPartition, OffsetAndMetadata>> result = new HashMap<>();
		var answer = admin.listConsumerGroupOffsets(specs);
		for (String group : groups) {
			Map<TopicPartition, OffsetAndMetadata> offsets;
			try {
				offsets = KafkaCalls.get(answer.partitionsToOffsetAndMetadata(group), this.timeout,
						"read the offsets of group '" + group + "' on '" + cluster + "'");
			}
			catch (MirrorException ex) {
				if (ex.getCause() instanceof GroupIdNotFoundException) {
					continue;
				}
				throw ex;
			}
			Map<TopicPartition, OffsetAndMetadata> present = new HashMap<>();
			offsets.forEach((partition, offset) -> {
				if (offset != null) {
					present.put(partition, offset);
				}
			});
			result.put(group, Map.copyOf(present));
		}
		return result;
	}

	private Set<String> activeGroups(Admin admin, Set<String> groups, String target) {
		Set<String> active = new HashSet<>();
		var described = admin.describeConsumerGroups(groups).describedGroups();
		for (String group : groups) {
			try {
				ConsumerGroupDescription description = KafkaCalls.get(described.get(group), this.timeout,
						"describe group '" + group + "' on '" + target + "'");
				GroupState state = description.groupState();
				if (!description.members().isEmpty() || (state != GroupState.EMPTY && state != GroupState.DEAD)) {
					active.add(group);
				}
			}
			catch (MirrorException ex) {
				if (!(ex.getCause() instanceof GroupIdNotFoundException)) {
					throw ex;
				}
			}
		}
		return active;
	}

	private Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
		if (partitions.isEmpty()) {
			return Map.of();
		}
		Map<TopicPartition, OffsetSpec> specs = new HashMap<>();
		partitions.forEach((partition) -> specs.put(partition, OffsetSpec.latest()));
		Map<TopicPartition, ListOffsetsResultInfo> ends = KafkaCalls.get(
				this.source.listOffsets(specs, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).all(), this.timeout,
				"read the end offsets of " + partitions.size() + " partitions of '" + this.settings.source() + "'");
		Map<TopicPartition, Long> result = new HashMap<>();
		ends.forEach((partition, info) -> result.put(partition, info.offset()));
		return result;
	}

	@Override
	public void close() {
		this.executor.shutdownNow();
		this.positionsExecutor.shutdownNow();
		try {
			this.executor.awaitTermination(5, TimeUnit.SECONDS);
			this.positionsExecutor.awaitTermination(5, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		this.source.close(Duration.ofSeconds(1));
		this.targets.values().forEach((admin) -> admin.close(Duration.ofSeconds(1)));
	}

	/**
	 * What the follower read last.
	 * @param sourceOffsets group -> committed offsets on the source
	 * @param sourceTopicIds source topic -> its id throughout the read of the offsets; a topic
	 *     missing here (first seen, or created again during the read) is not translated
	 * @param activeOnTarget target -> groups with members there
	 * @param targetOffsets target -> group -> committed offsets there
	 * @param sourceEnds read_committed end offsets of the mirrored source partitions
	 * @param mirrorCommitted the mirror's own committed offsets on the source
	 * @param readAtMs when the read of the groups finished, epoch ms; 0 before the first read
	 */
	record Snapshot(Map<String, Map<TopicPartition, OffsetAndMetadata>> sourceOffsets,
			Map<String, Uuid> sourceTopicIds, Map<String, Set<String>> activeOnTarget,
			Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> targetOffsets,
			Map<TopicPartition, Long> sourceEnds, Map<TopicPartition, OffsetAndMetadata> mirrorCommitted, long readAtMs) {

		static final Snapshot EMPTY = new Snapshot(Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), Map.of(), 0);

		/** This snapshot's groups with the given source positions. */
		Snapshot with(Positions positions) {
			return new Snapshot(this.sourceOffsets, this.sourceTopicIds, this.activeOnTarget, this.targetOffsets,
					positions.sourceEnds(), positions.mirrorCommitted(), this.readAtMs);
		}

		/** The source topic's id throughout the read of the groups' offsets, or null if not known. */
		@Nullable Uuid sourceTopicId(String topic) {
			return this.sourceTopicIds.get(topic);
		}

		boolean isActive(String target, String group) {
			return this.activeOnTarget.getOrDefault(target, Set.of()).contains(group);
		}

		long targetCommitted(String target, String group, TopicPartition remote) {
			OffsetAndMetadata offset = this.targetOffsets.getOrDefault(target, Map.of())
				.getOrDefault(group, Map.of())
				.get(remote);
			return (offset != null) ? offset.offset() : -1;
		}

		List<String> groups() {
			return List.copyOf(this.sourceOffsets.keySet());
		}

	}

	/**
	 * What the source holds and what the mirror committed there, read apart from the groups.
	 * @param sourceEnds read_committed end offsets of the mirrored source partitions
	 * @param mirrorCommitted the mirror's own committed offsets on the source
	 */
	record Positions(Map<TopicPartition, Long> sourceEnds, Map<TopicPartition, OffsetAndMetadata> mirrorCommitted) {

		static final Positions EMPTY = new Positions(Map.of(), Map.of());

	}

}
