package dev.tandem.mirror.chaos;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The mirror chaos suite's checker, independent of the mirror's code: reads the source topic
 * {@code read_committed} and {@code read_uncommitted} and the mirrored topic {@code read_committed}
 * (with kafka-clients and, if installed, {@code kcat}), and the groups' committed offsets on
 * both clusters. Facts: {@code lost} (committed source records not on the target),
 * {@code duplicated} (target records beyond the first copy of a key), {@code aborted mirrored}
 * (records of aborted source transactions on the target), {@code out of order} (target records
 * whose source partition differs from theirs or whose source offset does not grow along the
 * partition), {@code offsets past data} / {@code offsets behind} (translated group offsets above
 * or below the expected one: the target offset of the first mirrored record whose source offset,
 * from its {@code tandem-mirror} header (decoded here from the documented layout), is at or after the group's committed source
 * offset, or the position after the last mirrored record when there is none) and
 * {@code re-read} (records a consumer of the group on the target reads that the group had read on
 * the source).
 */
final class MirrorChaosChecker {


	private final String sourceServers;

	private final String targetServers;

	private final String sourceTopic;

	private final String targetTopic;

	private final int partitions;

	private final Map<String, Long> facts = new LinkedHashMap<>();

	private final List<String> problems = new ArrayList<>();

	private final List<String> notes = new ArrayList<>();

	MirrorChaosChecker(String sourceServers, String targetServers, String sourceTopic, String targetTopic, int partitions) {
		this.sourceServers = sourceServers;
		this.targetServers = targetServers;
		this.sourceTopic = sourceTopic;
		this.targetTopic = targetTopic;
		this.partitions = partitions;
	}

	Map<String, Long> facts() {
		return this.facts;
	}

	List<String> problems() {
		return this.problems;
	}

	List<String> notes() {
		return this.notes;
	}

	/** One mirrored record: where it is on the target, where it came from. */
	record Copy(String key, int partition, long offset, int sourcePartition, long sourceOffset) {
	}

	void check(List<String> groups) throws Exception {
		Map<String, Long> committedKeys = new HashMap<>();
		readAll(this.sourceServers, this.sourceTopic, "read_committed")
			.forEach((record) -> committedKeys.put(record.key(), record.offset()));
		Set<String> aborted = new HashSet<>();
		readAll(this.sourceServers, this.sourceTopic, "read_uncommitted").forEach((record) -> {
			if (!committedKeys.containsKey(record.key())) {
				aborted.add(record.key());
			}
		});
		List<ConsumerRecord<String, String>> mirrored = readAll(this.targetServers, this.targetTopic, "read_committed");
		Map<Integer, List<Copy>> copies = new TreeMap<>();
		Set<String> seen = new HashSet<>();
		long duplicated = 0;
		long abortedMirrored = 0;
		long outOfOrder = 0;
		long unknownProvenance = 0;
		for (ConsumerRecord<String, String> record : mirrored) {
			if (!seen.add(record.key())) {
				duplicated++;
			}
			if (aborted.contains(record.key())) {
				abortedMirrored++;
			}
			Source provenance = Source.of(record);
			if (provenance == null || !provenance.topic().equals(this.sourceTopic)) {
				unknownProvenance++;
				continue;
			}
			copies.computeIfAbsent(record.partition(), (p) -> new ArrayList<>()).add(new Copy(record.key(),
					record.partition(), record.offset(), provenance.partition(), provenance.offset()));
		}
		for (List<Copy> partition : copies.values()) {
			for (int i = 0; i < partition.size(); i++) {
				Copy copy = partition.get(i);
				boolean samePartition = copy.sourcePartition() == copy.partition();
				boolean growing = i == 0 || partition.get(i - 1).sourceOffset() < copy.sourceOffset();
				Long offset = committedKeys.get(copy.key());
				boolean sameRecord = offset == null || offset == copy.sourceOffset();
				if (!samePartition || !growing || !sameRecord) {
					outOfOrder++;
				}
			}
		}
		Set<String> lost = new HashSet<>(committedKeys.keySet());
		lost.removeAll(seen);
		this.facts.put("source committed", (long) committedKeys.size());
		this.facts.put("source aborted", (long) aborted.size());
		this.facts.put("mirrored", (long) mirrored.size());
		this.facts.put("lost", (long) lost.size());
		this.facts.put("duplicated", duplicated);
		this.facts.put("aborted mirrored", abortedMirrored);
		this.facts.put("out of order", outOfOrder);
		problem(lost.size(), "committed source records not mirrored, such as " + lost.stream().limit(3).toList());
		problem(duplicated, "records mirrored twice");
		problem(abortedMirrored, "records of aborted source transactions mirrored");
		problem(outOfOrder, "records out of source order, in another partition or at another source offset");
		problem(unknownProvenance, "mirrored records without a readable " + Source.HEADER + " header");
		if (aborted.isEmpty()) {
			this.problems.add("the source has no aborted records: the run did not test them");
		}
		kcat(mirrored.size());
		long past = 0;
		long behind = 0;
		long reread = 0;
		for (String group : groups) {
			Map<Integer, Long> sourceOffsets = committed(this.sourceServers, group, this.sourceTopic);
			Map<Integer, Long> targetOffsets = committed(this.targetServers, group, this.targetTopic);
			for (int p = 0; p < this.partitions; p++) {
				Long committed = sourceOffsets.get(p);
				List<Copy> partition = copies.getOrDefault(p, List.of());
				if (committed == null || partition.isEmpty()) {
					this.problems.add("group " + group + " partition " + p + ": nothing to translate (source offset "
							+ committed + ", " + partition.size() + " mirrored records)");
					continue;
				}
				long expected = partition.stream().filter((copy) -> copy.sourceOffset() >= committed).findFirst()
					.map(Copy::offset)
					.orElse(partition.get(partition.size() - 1).offset() + 1);
				Long translated = targetOffsets.get(p);
				if (translated == null || translated < expected) {
					behind++;
					this.problems.add("group " + group + " partition " + p + ": translated " + translated + ", expected "
							+ expected + " (source offset " + committed + ")");
				}
				else if (translated > expected) {
					past++;
					this.problems.add("group " + group + " partition " + p + ": translated " + translated
							+ " past the expected " + expected + " (source offset " + committed + ")");
				}
			}
			long groupReread = reread(group, sourceOffsets);
			reread += groupReread;
			this.notes.add(group + ": source " + sourceOffsets + " -> target " + targetOffsets + ", re-read " + groupReread);
		}
		this.facts.put("offsets past data", past);
		this.facts.put("offsets behind", behind);
		this.facts.put("re-read", reread);
		problem(reread, "records re-read on the target by a consumer of a translated group");
	}

	private void problem(long count, String what) {
		if (count > 0) {
			this.problems.add(count + " " + what);
		}
	}

	/**
	 * A consumer of the group on the target, from the group's committed target offsets to the end:
	 * counts the records whose source offset is below the group's committed source offset.
	 */
	private long reread(String group, Map<Integer, Long> sourceOffsets) {
		Map<String, Object> config = config(this.targetServers, "read_committed");
		config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
		config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		long reread = 0;
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
			List<TopicPartition> partitions = partitions(this.targetTopic);
			consumer.assign(partitions);
			Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
			long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
			while (partitions.stream().anyMatch((partition) -> consumer.position(partition) < ends.get(partition))) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("group " + group + " did not reach the end of " + this.targetTopic);
				}
				for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
					long sourceOffset = Source.of(record).offset();
					if (sourceOffset < sourceOffsets.getOrDefault(record.partition(), 0L)) {
						reread++;
					}
				}
			}
		}
		return reread;
	}

	/** Counts the target's read_committed records with kcat too, when it is installed. */
	private void kcat(long expected) {
		String kcat = List.of("/usr/bin/kcat", "/usr/local/bin/kcat").stream().filter((path) -> new File(path).canExecute())
			.findFirst().orElse(null);
		if (kcat == null) {
			this.notes.add("kcat not installed: target read by kafka-clients only");
			return;
		}
		try {
			Process process = new ProcessBuilder(kcat, "-C", "-b", this.targetServers, "-t", this.targetTopic, "-o",
					"beginning", "-e", "-q", "-X", "isolation.level=read_committed", "-f", "%p %o\\n")
				.redirectErrorStream(true).start();
			long lines;
			try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(),
					StandardCharsets.UTF_8))) {
				lines = reader.lines().filter((line) -> line.matches("\\d+ \\d+")).count();
			}
			if (!process.waitFor(1, TimeUnit.MINUTES) || process.exitValue() != 0) {
				this.problems.add("kcat failed with exit " + (process.isAlive() ? "(timeout)" : process.exitValue()));
				process.destroyForcibly();
				return;
			}
			this.facts.put("kcat read_committed", lines);
			if (lines != expected) {
				this.problems.add("kcat reads " + lines + " committed records on the target, kafka-clients " + expected);
			}
		}
		catch (Exception ex) {
			this.problems.add("kcat could not run: " + ex);
		}
	}

	private List<ConsumerRecord<String, String>> readAll(String servers, String topic, String isolation) {
		List<ConsumerRecord<String, String>> records = new ArrayList<>();
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config(servers, isolation))) {
			List<TopicPartition> partitions = partitions(topic);
			consumer.assign(partitions);
			consumer.seekToBeginning(partitions);
			Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
			long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
			while (partitions.stream().anyMatch((partition) -> consumer.position(partition) < ends.get(partition))) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("could not read " + topic + " to its end " + ends);
				}
				consumer.poll(Duration.ofMillis(200)).forEach(records::add);
			}
		}
		return records;
	}

	private List<TopicPartition> partitions(String topic) {
		List<TopicPartition> partitions = new ArrayList<>();
		for (int p = 0; p < this.partitions; p++) {
			partitions.add(new TopicPartition(topic, p));
		}
		return partitions;
	}

	private static Map<String, Object> config(String servers, String isolation) {
		Map<String, Object> config = new HashMap<>();
		config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
		config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
		config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
		return config;
	}

	private static Map<Integer, Long> committed(String servers, String group, String topic) throws Exception {
		Map<Integer, Long> offsets = new TreeMap<>();
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
			Map<TopicPartition, OffsetAndMetadata> all = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
			all.forEach((partition, offset) -> {
				if (offset != null && partition.topic().equals(topic)) {
					offsets.put(partition.partition(), offset.offset());
				}
			});
		}
		return offsets;
	}

	/** The read_committed end offsets (last stable offsets) of a topic's partitions. */
	static Map<Integer, Long> endOffsets(String servers, String topic, int partitions) throws Exception {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
			return endOffsets(admin, topic, partitions);
		}
	}

	static Map<Integer, Long> endOffsets(Admin admin, String topic, int partitions) throws Exception {
		Map<TopicPartition, OffsetSpec> request = new HashMap<>();
		for (int p = 0; p < partitions; p++) {
			request.put(new TopicPartition(topic, p), OffsetSpec.latest());
		}
		Map<Integer, Long> ends = new TreeMap<>();
		admin.listOffsets(request, new org.apache.kafka.clients.admin.ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
			.all().get(30, TimeUnit.SECONDS)
			.forEach((partition, info) -> ends.put(partition.partition(), info.offset()));
		return ends;
	}

	/**
	 * The source position in a copy's {@code tandem-mirror} header, read from the layout the
	 * mirror's documentation gives (version 1: version byte, flags, origin unless flag 2, source,
	 * topic as varint-length UTF-8, partition varint, 16-byte topic id if flag 1, offset varlong;
	 * zig-zag varints), not with the mirror's own reader.
	 */
	record Source(String topic, int partition, long offset) {

		static final String HEADER = "tandem-mirror";

		static Source of(ConsumerRecord<?, ?> record) {
			Header header = record.headers().lastHeader(HEADER);
			if (header == null || header.value() == null || header.value().length < 2 || header.value()[0] != 1) {
				return null;
			}
			ByteBuffer buffer = ByteBuffer.wrap(header.value());
			buffer.get();
			int flags = buffer.get();
			if ((flags & 2) == 0) {
				skip(buffer);
			}
			skip(buffer);
			int topicLength = (int) varlong(buffer);
			String topic = new String(header.value(), buffer.position(), topicLength, StandardCharsets.UTF_8);
			buffer.position(buffer.position() + topicLength);
			int partition = (int) varlong(buffer);
			if ((flags & 1) != 0) {
				buffer.position(buffer.position() + 16);
			}
			return new Source(topic, partition, varlong(buffer));
		}

		private static void skip(ByteBuffer buffer) {
			int length = (int) varlong(buffer);
			buffer.position(buffer.position() + length);
		}

		/** A zig-zag varint or varlong (protobuf's encoding, as Kafka's record format uses). */
		private static long varlong(ByteBuffer buffer) {
			long raw = 0;
			for (int shift = 0;; shift += 7) {
				byte b = buffer.get();
				raw |= (long) (b & 0x7f) << shift;
				if ((b & 0x80) == 0) {
					return (raw >>> 1) ^ -(raw & 1);
				}
			}
		}

	}

}
