package dev.tandem.mirror;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.ClusterClients;

/**
 * The mapping job: one {@link OffsetMapping} per target and assigned source partition, of one
 * incarnation of the source topic (its Kafka topic id). Rebuilt from the target when partitions
 * are assigned ({@link MappingRebuild}, from the copies of the incarnation described then),
 * dropped when they are revoked, grown with the target offsets of committed copies of the same
 * incarnation ({@link #learn}), asked for translations of group offsets read from the same
 * incarnation ({@link #translate}). A topic whose id changes while assigned (deleted and created
 * again without the mirror's consumer seeing it gone) starts a new, truncated mapping
 * ({@link #incarnations}): a translated offset never points into another incarnation's copies.
 * <p>
 * Thread-safe. {@link #rebuild}, {@link #revoked} and {@link #incarnations} run on the polling
 * thread (rebalance callbacks, topic refresh), {@link #learn} on whichever thread resolves a
 * transaction (the pipeline's committing thread or the polling thread); these hold this object's
 * lock, so that a rebuild and a commit's copies never interleave. {@link #translate},
 * {@link #topicId} and {@link #remote} take no lock and may be called from any thread (each
 * mapping is thread-safe itself, and an incarnation and its mapping are replaced together).
 */
final class OffsetMappings {

	private static final Logger logger = LoggerFactory.getLogger(OffsetMappings.class);

	private final MirrorSettings settings;

	private final TargetTopics topics;

	private final ClusterClients clients;

	private final Duration timeout;

	private final Map<Key, Incarnation> mappings = new ConcurrentHashMap<>();

	/** Source topic -> the id of the incarnation assigned (copies are tagged with it). */
	private final Map<String, Uuid> topicIds = new ConcurrentHashMap<>();

	OffsetMappings(MirrorSettings settings, TargetTopics topics, ClusterClients clients, Duration timeout) {
		this.settings = settings;
		this.topics = topics;
		this.clients = clients;
		this.timeout = timeout;
	}

	/**
	 * Describes the source topics of newly assigned (selected) partitions (their incarnations) and
	 * rebuilds their mappings from the copies of those incarnations on every target; blocks.
	 */
	synchronized void rebuild(List<TopicPartition> assigned) {
		Map<String, Uuid> ids;
		try {
			ids = assigned.isEmpty() ? Map.of()
					: this.topics.describeSourceTopicIds(assigned.stream().map(TopicPartition::topic).distinct().toList());
		}
		catch (RuntimeException ex) {
			// Copies then carry no topic id and nothing is translated until a topic refresh reads the ids.
			logger.warn("Mirror {}: could not describe the source topics of {} ({}); their offsets are not translated "
					+ "until a topic refresh reads their ids", this.settings.source(), assigned, ex.toString());
			ids = Map.of();
		}
		assigned.forEach((source) -> this.topicIds.remove(source.topic()));
		this.topicIds.putAll(ids);
		for (String target : this.settings.targets()) {
			Map<TopicPartition, TopicPartition> remotes = new HashMap<>();
			for (TopicPartition source : assigned) {
				Uuid id = ids.get(source.topic());
				TopicPartition remote = remote(source);
				if (id != null && this.topics.knownPartitions(target, remote.topic()) > source.partition()) {
					remotes.put(source, remote);
				}
				else {
					this.mappings.put(new Key(target, source),
							new Incarnation(id, new OffsetMapping(this.settings.mappingCapacity(), id != null)));
				}
			}
			try {
				Map<String, Uuid> topicIds = ids;
				MappingRebuild.rebuild(this.settings, target, this.clients.readerConfig(target), remotes, topicIds,
						this.timeout)
					.forEach((source, mapping) -> this.mappings.put(new Key(target, source),
							new Incarnation(topicIds.get(source.topic()), mapping)));
			}
			catch (RuntimeException ex) {
				// Mirroring goes on; offsets mirrored before now cannot be translated (truncated mappings).
				logger.warn("Mirror {}->{}: could not rebuild the offset mappings of {} from the target ({}); group offsets "
						+ "below what is mirrored from now on are not translated", this.settings.source(), target,
						remotes.keySet(), ex.toString());
				Map<String, Uuid> topicIds = ids;
				remotes.keySet().forEach((source) -> this.mappings.put(new Key(target, source),
						new Incarnation(topicIds.get(source.topic()), new OffsetMapping(this.settings.mappingCapacity(), false))));
			}
		}
	}

	synchronized void revoked(Collection<TopicPartition> partitions) {
		partitions.forEach((tp) -> this.settings.targets().forEach((target) -> this.mappings.remove(new Key(target, tp))));
	}

	/**
	 * Compares the incarnations of the assigned topics with the source topics' current ids (read at
	 * a topic refresh): a topic whose id changed was deleted and created again without a
	 * rebalance; its partitions start new mappings, truncated (copies made since the change may
	 * carry the old id and are not used), and its copies carry the new id from now on.
	 * @param current source topic -> its id now, for the topics that exist
	 */
	synchronized void incarnations(Map<String, Uuid> current) {
		for (Map.Entry<String, Uuid> entry : current.entrySet()) {
			String topic = entry.getKey();
			Uuid id = entry.getValue();
			Uuid assigned = this.topicIds.get(topic);
			boolean mapped = this.mappings.keySet().stream().anyMatch((key) -> key.source().topic().equals(topic));
			if (!mapped || id.equals(assigned)) {
				continue;
			}
			logger.warn("Mirror {}: source topic '{}' was created again (topic id {}, was {}); its offset mappings start "
					+ "over: group offsets are translated again once the new incarnation's copies are known",
					this.settings.source(), topic, id, assigned);
			this.topicIds.put(topic, id);
			this.mappings.replaceAll((key, incarnation) -> key.source().topic().equals(topic)
					? new Incarnation(id, new OffsetMapping(this.settings.mappingCapacity(), false)) : incarnation);
		}
	}

	/**
	 * Returns the id of the source topic's incarnation whose copies are made now (their
	 * {@link Provenance#topicId()}).
	 * @return the id, or null if not known (the topic is not assigned, or could not be described)
	 */
	@Nullable Uuid topicId(String sourceTopic) {
		return this.topicIds.get(sourceTopic);
	}

	/**
	 * Adds the target offsets of a committed transaction's copies, in send order; a copy whose
	 * send failed is left out. Called once per committed transaction, oldest first.
	 */
	synchronized void learn(List<Copy> copies) {
		OffsetMapping mapping = null;
		Copy previous = null;
		for (Copy copy : copies) {
			RecordMetadata metadata = metadata(copy.future());
			if (metadata != null) {
				// copies of one partition to one target come in runs: look their mapping up once a run
				if (previous == null || !copy.target().equals(previous.target()) || !copy.source().equals(previous.source())) {
					Incarnation incarnation = this.mappings.computeIfAbsent(new Key(copy.target(), copy.source()),
							(key) -> new Incarnation(copy.topicId(), new OffsetMapping(this.settings.mappingCapacity(), true)));
					// a copy tagged with another incarnation (made before a change of topic id was seen) is not mapped
					mapping = Objects.equals(incarnation.topicId(), copy.topicId()) ? incarnation.mapping() : null;
					previous = copy;
				}
				if (mapping != null) {
					mapping.add(copy.sourceOffset(), metadata.offset());
				}
			}
		}
	}

	private static @Nullable RecordMetadata metadata(Future<RecordMetadata> future) {
		try {
			return future.get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
		catch (ExecutionException ex) {
			return null;
		}
	}

	/**
	 * Translates a group's committed source offset with what is mirrored and committed so far of
	 * the same incarnation of the source topic.
	 * @param topicId the id the source topic had when the committed offset was read, or null if
	 *     unknown
	 * @return the target offset, or empty for a partition not mapped here (not assigned, or
	 *     nothing known, see {@link OffsetMapping#translate}), or when the offset was read from
	 *     another incarnation than the one mapped, or from an unknown one
	 */
	OptionalLong translate(String target, TopicPartition source, long committed, @Nullable Uuid topicId) {
		Incarnation incarnation = this.mappings.get(new Key(target, source));
		if (incarnation == null || topicId == null || !topicId.equals(incarnation.topicId())) {
			return OptionalLong.empty();
		}
		return incarnation.mapping().translate(committed);
	}

	/** The remote partition of a source partition on every target. */
	TopicPartition remote(TopicPartition source) {
		return new TopicPartition(this.settings.naming().remoteTopic(this.settings.source(), source.topic()),
				source.partition());
	}

	/**
	 * One record copy sent into a transaction.
	 * @param target target cluster
	 * @param source source partition
	 * @param sourceOffset the record's source offset
	 * @param topicId the source topic's id the copy carries, or null if unknown
	 * @param future the send's outcome (its target offset)
	 */
	record Copy(String target, TopicPartition source, long sourceOffset, @Nullable Uuid topicId,
			Future<RecordMetadata> future) {
	}

	private record Key(String target, TopicPartition source) {
	}

	/** A mapping and the source topic incarnation whose copies it maps (null: unknown, never translated). */
	private record Incarnation(@Nullable Uuid topicId, OffsetMapping mapping) {
	}

}
