package dev.tandem.mirror;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.text.DurationText;

/**
 * Rebuilds the offset mappings of newly assigned partitions from what is already on a target: a
 * {@code read_committed} read of the last {@code rebuild-records} records of each remote
 * partition, keeping the records whose provenance header names this mirror's source cluster,
 * topic and partition and the source topic's current incarnation (its topic id). A mapping whose
 * read started at the partition's log start offset is complete (translation of an offset below
 * the first mirrored record is then exact); otherwise it is truncated.
 * <p>
 * Copies of another incarnation (a topic deleted and created again under the same name: its
 * offsets start again at 0) are never mapped. One read before the current incarnation's first copy
 * shows where that incarnation's copies start: the mapping starts there, complete. A copy without
 * a topic id (mirrored before the id was written) is of an unknown incarnation: never mapped, and
 * a mapping that starts after one is truncated (offsets below its first copy are not translated
 * rather than guessed).
 */
final class MappingRebuild {

	private static final Logger logger = LoggerFactory.getLogger(MappingRebuild.class);

	private MappingRebuild() {
	}

	/**
	 * Reads the target and returns one mapping per source partition.
	 * @param readerConfig a read_committed, group-less consumer configuration of the target
	 * @param remotes source partition -> remote partition, only those that exist on the target
	 * @param topicIds source topic -> the id of its incarnation being mirrored
	 */
	static Map<TopicPartition, OffsetMapping> rebuild(MirrorSettings settings, String target,
			Map<String, Object> readerConfig, Map<TopicPartition, TopicPartition> remotes, Map<String, Uuid> topicIds,
			Duration timeout) {
		Map<TopicPartition, OffsetMapping> mappings = new HashMap<>();
		if (remotes.isEmpty()) {
			return mappings;
		}
		Map<String, Object> config = new HashMap<>(readerConfig);
		config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
		config.put(ConsumerConfig.CLIENT_ID_CONFIG, "tandem-mirror-rebuild-" + target);
		Map<TopicPartition, TopicPartition> sourceOf = new HashMap<>();
		remotes.forEach((source, remote) -> sourceOf.put(remote, source));
		try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			Collection<TopicPartition> partitions = remotes.values();
			reader.assign(partitions);
			Map<TopicPartition, Long> begin = reader.beginningOffsets(partitions, timeout);
			Map<TopicPartition, Long> end = reader.endOffsets(partitions, timeout);
			List<TopicPartition> toRead = new ArrayList<>();
			for (TopicPartition remote : partitions) {
				long start = Math.max(begin.get(remote), end.get(remote) - settings.rebuildRecords());
				mappings.put(sourceOf.get(remote), new OffsetMapping(settings.mappingCapacity(), start == begin.get(remote)));
				if (start < end.get(remote)) {
					reader.seek(remote, start);
					toRead.add(remote);
				}
			}
			reader.assign(toRead);
			long deadline = System.nanoTime() + timeout.toNanos();
			while (!toRead.isEmpty() && System.nanoTime() < deadline) {
				for (ConsumerRecord<byte[], byte[]> record : reader.poll(Duration.ofMillis(200))) {
					TopicPartition remote = new TopicPartition(record.topic(), record.partition());
					TopicPartition source = sourceOf.get(remote);
					Provenance provenance = Provenance.read(record.headers());
					if (provenance != null && provenance.sourceCluster().equals(settings.source())
							&& provenance.topic().equals(source.topic()) && provenance.partition() == source.partition()) {
						OffsetMapping mapping = mappings.get(source);
						if (provenance.topicId() != null && provenance.topicId().equals(topicIds.get(source.topic()))) {
							mapping.add(provenance.offset(), record.offset());
						}
						else if (mapping.runs() == 0) {
							// another incarnation's copy: the current one's start after it (complete);
							// a copy of an unknown incarnation: where the current one's start is unknown
							mappings.put(source, new OffsetMapping(settings.mappingCapacity(), provenance.topicId() != null));
						}
					}
				}
				toRead.removeIf((remote) -> reader.position(remote, timeout) >= end.get(remote));
				reader.assign(toRead);
			}
			if (!toRead.isEmpty()) {
				throw new MirrorException("Mirror " + settings.source() + "->" + target + " could not read " + toRead
						+ " to rebuild its offset mapping within " + DurationText.of(timeout), null);
			}
		}
		mappings.forEach((source, mapping) -> {
			if (mapping.runs() > 0) {
				logger.info("Mirror {}->{}: rebuilt the offset mapping of {} from the target ({} runs, next source offset {}, "
						+ "next target offset {}{})", settings.source(), target, source, mapping.runs(),
						mapping.nextSourceOffset(), mapping.nextTargetOffset(), mapping.isTruncated() ? ", truncated" : "");
			}
		});
		return mappings;
	}

}
