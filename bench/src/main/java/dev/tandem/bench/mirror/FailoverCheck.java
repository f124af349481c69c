package dev.tandem.bench.mirror;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import dev.tandem.bench.RegionClusters;

/**
 * Moves a consumer group from the source to the target and counts what it re-reads and what it
 * skips: a consumer of the same group on the target's remote topic ({@code read_committed},
 * no auto commit, the group's committed offsets on the target) reads every partition from its
 * committed offset to the end. A record it reads whose source offset is below the group's
 * committed source offset is a re-read; a source offset at or after it that it never reads is
 * a skip. A partition with no committed offset on the target is read from its beginning
 * ({@code auto.offset.reset=earliest}, the setting that loses nothing) and counted as untranslated.
 */
final class FailoverCheck {

	private FailoverCheck() {
	}

	/**
	 * Returns the group's committed offsets on a cluster for the partitions of one topic (absent:
	 * none committed).
	 */
	static Map<TopicPartition, Long> committed(RegionClusters.Cluster cluster, String group, String topic)
			throws Exception {
		Map<TopicPartition, Long> offsets = new HashMap<>();
		Map<TopicPartition, OffsetAndMetadata> all = cluster.admin().listConsumerGroupOffsets(group)
			.partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
		all.forEach((partition, offset) -> {
			if (partition.topic().equals(topic) && offset != null) {
				offsets.put(partition, offset.offset());
			}
		});
		return offsets;
	}

	static Result measure(RegionClusters.Cluster source, RegionClusters.Cluster target, String group, String topic,
			String remoteTopic, SourceLog log, long records, Contender contender) throws Exception {
		Map<TopicPartition, Long> sourceCommitted = committed(source, group, topic);
		Map<String, Object> config = target.clientProperties();
		config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
		config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
		config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
		List<TopicPartition> partitions = new ArrayList<>();
		for (int p = 0; p < log.partitions(); p++) {
			partitions.add(new TopicPartition(remoteTopic, p));
		}
		long rereads = 0;
		long skips = 0;
		long committedSource = 0;
		long committedTarget = 0;
		long wrongPartition = 0;
		long mismatches = 0;
		long exactTarget = -1;
		int untranslated = 0;
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
			consumer.assign(partitions);
			Map<TopicPartition, OffsetAndMetadata> translated = consumer.committed(new HashSet<>(partitions),
					Duration.ofSeconds(30));
			for (TopicPartition partition : partitions) {
				OffsetAndMetadata offset = translated.get(partition);
				if (offset == null) {
					untranslated++;
					consumer.seekToBeginning(List.of(partition));
				}
				else {
					committedTarget += offset.offset();
					consumer.seek(partition, offset.offset());
				}
			}
			Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
			Map<Integer, BitSet> readAtOrAfter = new HashMap<>();
			Set<TopicPartition> open = new HashSet<>(partitions);
			long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
			while (!open.isEmpty()) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("Group " + group + " could not read " + remoteTopic + " to its end");
				}
				for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
					long id = SourceLog.id(record.key());
					long sourceOffset = contender.sourceOffset(record);
					long logged = (id >= 0 && id < log.size()) ? log.offset(id) : -1;
					if (sourceOffset < 0) {
						sourceOffset = logged;
					}
					else if (sourceOffset != logged) {
						mismatches++;
					}
					if (sourceOffset < 0 || id < 0 || log.partition(id) != record.partition()) {
						wrongPartition++;
						continue;
					}
					long from = sourceCommitted.getOrDefault(new TopicPartition(topic, record.partition()), 0L);
					if (sourceOffset < from) {
						rereads++;
					}
					else {
						readAtOrAfter.computeIfAbsent(record.partition(), (p) -> new BitSet())
							.set((int) (sourceOffset - from));
					}
				}
				open.removeIf((partition) -> consumer.position(partition) >= ends.get(partition));
			}
			for (int p = 0; p < log.partitions(); p++) {
				long from = sourceCommitted.getOrDefault(new TopicPartition(topic, p), 0L);
				committedSource += from;
				BitSet read = readAtOrAfter.get(p);
				skips += (log.count(p, records) - from) - ((read != null) ? read.cardinality() : 0);
			}
			if (skips > 0 || mismatches > 0) {
				exactTarget = exactTranslation(consumer, partitions, ends, topic, sourceCommitted, log, contender);
			}
		}
		return new Result(group, committedSource, committedTarget, rereads, skips, untranslated, wrongPartition,
				mismatches, exactTarget);
	}

	/**
	 * Diagnoses a translation that skipped records: reads the remote topic from its beginning and
	 * returns the sum over partitions of the exact translation, the target offset of the first
	 * record whose source offset is at or after the group's committed source offset (the
	 * partition's end offset where there is none).
	 */
	private static long exactTranslation(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> partitions,
			Map<TopicPartition, Long> ends, String topic, Map<TopicPartition, Long> sourceCommitted, SourceLog log,
			Contender contender) {
		Map<TopicPartition, Long> exact = new HashMap<>(ends);
		consumer.seekToBeginning(partitions);
		Set<TopicPartition> open = new HashSet<>(partitions);
		long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
		while (!open.isEmpty() && System.nanoTime() < deadline) {
			for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
				long sourceOffset = contender.sourceOffset(record);
				long id = SourceLog.id(record.key());
				if (sourceOffset < 0 && id >= 0 && id < log.size()) {
					sourceOffset = log.offset(id);
				}
				TopicPartition partition = new TopicPartition(record.topic(), record.partition());
				long from = sourceCommitted.getOrDefault(new TopicPartition(topic, record.partition()), 0L);
				if (sourceOffset >= from && record.offset() < exact.get(partition)) {
					exact.put(partition, record.offset());
				}
			}
			open.removeIf((partition) -> consumer.position(partition) >= ends.get(partition));
		}
		return exact.values().stream().mapToLong(Long::longValue).sum();
	}

	/**
	 * One group's failover: the sums over partitions of its committed source offsets and of its
	 * translated offsets on the target, records re-read and skipped, partitions without a
	 * translated offset, records read whose origin could not be placed, records whose provenance
	 * header names another source offset than the bench logged for their id, and, only when records
	 * were skipped or mismatched, the sum of the exact translations (else -1).
	 */
	record Result(String group, long committedSource, long committedTarget, long rereads, long skips,
			int untranslated, long unplaced, long mismatches, long exactTarget) {
	}

}
