package dev.tandem.mirror;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.ClusterClients;

/**
 * The mapping job: one {@link OffsetMapping} per target and assigned source partition. Rebuilt
 * from the target when partitions are assigned ({@link MappingRebuild}), dropped when they are
 * revoked, grown with the target offsets of committed copies ({@link #learn}), asked for
 * translations ({@link #translate}).
 * <p>
 * Thread-safe. {@link #rebuild} and {@link #revoked} run on the polling thread (rebalance
 * callbacks), {@link #learn} on whichever thread resolves a transaction (the pipeline's committing
 * thread or the polling thread); these three hold this object's lock, so that a rebuild and a
 * commit's copies never interleave. {@link #translate} and {@link #remote} take no lock and may be
 * called from any thread (each mapping is thread-safe itself).
 */
final class OffsetMappings {

	private static final Logger logger = LoggerFactory.getLogger(OffsetMappings.class);

	private final MirrorSettings settings;

	private final TargetTopics topics;

	private final ClusterClients clients;

	private final Duration timeout;

	private final Map<Key, OffsetMapping> mappings = new ConcurrentHashMap<>();

	OffsetMappings(MirrorSettings settings, TargetTopics topics, ClusterClients clients, Duration timeout) {
		this.settings = settings;
		this.topics = topics;
		this.clients = clients;
		this.timeout = timeout;
	}

	/** Rebuilds the mappings of newly assigned (selected) partitions from every target; blocks. */
	synchronized void rebuild(List<TopicPartition> assigned) {
		for (String target : this.settings.targets()) {
			Map<TopicPartition, TopicPartition> remotes = new HashMap<>();
			for (TopicPartition source : assigned) {
				TopicPartition remote = remote(source);
				if (this.topics.knownPartitions(target, remote.topic()) > source.partition()) {
					remotes.put(source, remote);
				}
				else {
					this.mappings.put(new Key(target, source), new OffsetMapping(this.settings.mappingCapacity(), true));
				}
			}
			try {
				MappingRebuild.rebuild(this.settings, target, this.clients.readerConfig(target), remotes, this.timeout)
					.forEach((source, mapping) -> this.mappings.put(new Key(target, source), mapping));
			}
			catch (RuntimeException ex) {
				// Mirroring goes on; offsets mirrored before now cannot be translated (truncated mappings).
				logger.warn("Mirror {}->{}: could not rebuild the offset mappings of {} from the target ({}); group offsets "
						+ "below what is mirrored from now on are not translated", this.settings.source(), target,
						remotes.keySet(), ex.toString());
				remotes.keySet().forEach((source) -> this.mappings.put(new Key(target, source),
						new OffsetMapping(this.settings.mappingCapacity(), false)));
			}
		}
	}

	synchronized void revoked(Collection<TopicPartition> partitions) {
		partitions.forEach((tp) -> this.settings.targets().forEach((target) -> this.mappings.remove(new Key(target, tp))));
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
				if (mapping == null || !copy.target().equals(previous.target()) || !copy.source().equals(previous.source())) {
					mapping = this.mappings.computeIfAbsent(new Key(copy.target(), copy.source()),
							(key) -> new OffsetMapping(this.settings.mappingCapacity(), true));
					previous = copy;
				}
				mapping.add(copy.sourceOffset(), metadata.offset());
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
	 * Translates a group's committed source offset with what is mirrored and committed so far.
	 * @return the target offset, or empty for a partition not mapped here (not assigned, or
	 *     nothing known, see {@link OffsetMapping#translate})
	 */
	OptionalLong translate(String target, TopicPartition source, long committed) {
		OffsetMapping mapping = this.mappings.get(new Key(target, source));
		return (mapping != null) ? mapping.translate(committed) : OptionalLong.empty();
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
	 * @param future the send's outcome (its target offset)
	 */
	record Copy(String target, TopicPartition source, long sourceOffset, Future<RecordMetadata> future) {
	}

	private record Key(String target, TopicPartition source) {
	}

}
