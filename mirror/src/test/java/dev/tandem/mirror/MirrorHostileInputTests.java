package dev.tandem.mirror;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.AbstractRecords;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;

import static dev.tandem.mirror.MirrorTestFixture.produceBytes;
import static dev.tandem.mirror.MirrorTestFixture.utf8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The mirror against an authenticated but hostile or careless client, on two real KRaft clusters,
 * {@code east} and {@code west}, with a real Ratis coordinator peer: source records carrying a
 * malformed {@value Provenance#HEADER} or malformed earlier-snapshot string headers are copied once
 * each with a valid header of their own and the user's headers in order; a well-formed header (or
 * an earlier snapshot's origin header) naming the target as origin makes the record skipped, by
 * design (loop prevention), and counted; a forged copy written straight into the remote topic is
 * read by a restarted mirror's mapping rebuild like a copy of its own.
 */
class MirrorHostileInputTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@RegisterExtension
	static final MirrorTestFixture fixture = MirrorTestFixture.eastToWest(kafka, "mirror-hostile-tests");

	@Test
	void malformedProvenanceHeadersAreReplacedAndEveryRecordIsCopiedOnceWithTheUsersHeadersInOrder() throws Exception {
		String topic = "malformed-" + fixture.name();
		fixture.east().createTopic(topic, 1, (short) 1);
		byte[] good = Provenance.value(Provenance.prefix("north", "north", "orders", 0, Uuid.randomUuid()), 7);
		byte[] version2 = good.clone();
		version2[0] = 2;
		byte[] huge = new byte[900_000];
		Arrays.fill(huge, (byte) 0x80);
		huge[0] = 1;
		List<byte[]> malformed = Arrays.asList(bytes("garbage"), new byte[] { 1, 0, (byte) 0xff, (byte) 0xff,
				(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff },
				new byte[] { 1, 2, (byte) 0xfe, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07 }, new byte[0], null, huge,
				version2, Arrays.copyOf(good, good.length - 1), new byte[] { 1, 0, 1 });
		List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
		for (int i = 0; i < malformed.size(); i++) {
			RecordHeaders headers = new RecordHeaders();
			headers.add("a", bytes("a" + i));
			headers.add(Provenance.HEADER, malformed.get(i));
			headers.add("b", null);
			records.add(new ProducerRecord<>(topic, 0, null, bytes("k" + i), bytes("v" + i), headers));
		}
		Uuid topicId = fixture.topicId(topic);
		produceBytes(fixture.east(), records);

		Mirror mirror = fixture.mirror((settings) -> settings.topics(List.of(topic)));

		String remote = "east." + topic;
		await().atMost(WAIT).until(() -> ReadCommitted.records(fixture.west().bootstrapServers(), remote, WAIT).size() >= malformed.size());
		await().atMost(WAIT).untilAsserted(() -> assertThat(mirror.status().lagRecords()).isZero());
		List<ConsumerRecord<byte[], byte[]>> copies = ReadCommitted.records(fixture.west().bootstrapServers(), remote, WAIT);
		assertThat(copies).hasSize(malformed.size());
		for (ConsumerRecord<byte[], byte[]> copy : copies) {
			int i = Integer.parseInt(utf8(copy.value()).substring(1));
			assertThat(copy.offset()).isEqualTo(i);
			assertThat(copy.headers().toArray()).extracting(Header::key).containsExactly("a", "b", Provenance.HEADER);
			assertThat(utf8(copy.headers().lastHeader("a").value())).isEqualTo("a" + i);
			assertThat(copy.headers().lastHeader("b").value()).isNull();
			assertThat(Provenance.read(copy.headers())).as("copy of record %d", i)
				.isEqualTo(new Provenance("east", "east", topic, 0, i, topicId));
		}
		assertThat(mirror.status().recordsMirrored()).isEqualTo(malformed.size());
		assertThat(mirror.status().recordsSkipped()).isZero();
	}

	@Test
	void provenanceNamingTheTargetAsOriginIsSkippedAndCountedAndMalformedStringHeadersAreCopied() throws Exception {
		String topic = "forged-" + fixture.name();
		fixture.east().createTopic(topic, 1, (short) 1);
		List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			RecordHeaders headers = new RecordHeaders();
			headers.add("a", bytes("a" + i));
			switch (i) {
				// a well-formed binary provenance forged to claim the record came from west
				case 1 -> headers.add(Provenance.HEADER, Provenance.value(Provenance.prefix("west", "west", "x", 0, null), 3));
				// an earlier snapshot's origin header naming west, nothing else
				case 2 -> headers.add(Provenance.ORIGIN_HEADER, bytes("west"));
				// earlier snapshot's headers with garbage values
				case 3 -> {
					headers.add(Provenance.ORIGIN_HEADER, new byte[] { (byte) 0xff, (byte) 0xfe });
					headers.add(Provenance.SOURCE_HEADER, bytes("a/b"));
					headers.add(Provenance.TOPIC_ID_HEADER, bytes("not-a-uuid"));
				}
				case 4 -> {
					headers.add(Provenance.ORIGIN_HEADER, null);
					headers.add(Provenance.SOURCE_HEADER, null);
				}
				default -> {
				}
			}
			headers.add("b", bytes("b" + i));
			records.add(new ProducerRecord<>(topic, 0, null, bytes("k" + i), bytes("v" + i), headers));
		}
		Uuid topicId = fixture.topicId(topic);
		produceBytes(fixture.east(), records);

		Mirror mirror = fixture.mirror((settings) -> settings.topics(List.of(topic)));

		String remote = "east." + topic;
		await().atMost(WAIT).untilAsserted(() -> assertThat(mirror.status().lagRecords()).isZero());
		await().atMost(WAIT).until(() -> ReadCommitted.records(fixture.west().bootstrapServers(), remote, WAIT).size() >= 4);
		List<ConsumerRecord<byte[], byte[]>> copies = ReadCommitted.records(fixture.west().bootstrapServers(), remote, WAIT);
		assertThat(copies).extracting((copy) -> utf8(copy.value())).containsExactly("v0", "v3", "v4", "v5");
		assertThat(copies).allSatisfy((copy) -> assertThat(copy.headers().toArray()).extracting(Header::key)
			.containsExactly("a", "b", Provenance.HEADER));
		assertThat(mirror.status().recordsSkipped()).as("records 1 and 2, loop prevention").isEqualTo(2);
		assertThat(mirror.status().recordsMirrored()).isEqualTo(4);
		assertThat(Provenance.read(copies.get(0).headers())).isEqualTo(new Provenance("east", "east", topic, 0, 0, topicId));
		assertThat(Provenance.read(copies.get(1).headers()))
			.as("an earlier snapshot's origin header is trusted whatever its value: the garbage origin is carried on")
			.isEqualTo(new Provenance("\uFFFD\uFFFD", "east", topic, 0, 3, topicId));
		assertThat(Provenance.read(copies.get(2).headers())).isEqualTo(new Provenance("east", "east", topic, 0, 4, topicId));
	}

	/**
	 * A client writes a forged copy into the remote topic while the mirror is stopped, its
	 * provenance well formed (the real topic id, read from any copy) and claiming source offset 0,
	 * already mirrored; the restarted mirror rebuilds its mapping from the target's records.
	 */
	@Test
	void aForgedCopyOfAnEarlierOffsetInTheRemoteTopicAndARestartedMirror() throws Exception {
		String topic = "rebuild-" + fixture.name();
		String remote = "east." + topic;
		fixture.east().createTopic(topic, 1, (short) 1);
		produceBytes(fixture.east(), values(topic, 0, 20));
		Mirror first = fixture.mirror((settings) -> settings.topics(List.of(topic)));
		await().atMost(WAIT).until(() -> ReadCommitted.records(fixture.west().bootstrapServers(), remote, WAIT).size() == 20);
		first.close();
		Uuid topicId = fixture.topicId(topic);
		RecordHeaders forged = new RecordHeaders();
		forged.add(Provenance.HEADER, Provenance.value(Provenance.prefix("east", "east", topic, 0, topicId), 0));
		produceBytes(fixture.west(), List.of(new ProducerRecord<>(remote, 0, null, bytes("k"), bytes("forged"), forged)));
		produceBytes(fixture.east(), values(topic, 20, 30));
		String group = "g-" + fixture.name();
		// the group read source offsets 0-4: on the target it should go on at the copy of 5, offset 5
		fixture.commitOnSource(group, new TopicPartition(topic, 0), 5);

		fixture.mirror((settings) -> settings.topics(List.of(topic)).groups(List.of(group)));

		await().atMost(WAIT).until(() -> ReadCommitted.records(fixture.west().bootstrapServers(), remote, WAIT).size() == 31);
		List<ConsumerRecord<byte[], byte[]>> copies = ReadCommitted.records(fixture.west().bootstrapServers(), remote, WAIT);
		assertThat(copies).extracting((copy) -> utf8(copy.value())).filteredOn((value) -> !value.equals("forged"))
			.hasSize(30).doesNotHaveDuplicates();
		TopicPartition target = new TopicPartition(remote, 0);
		await().atMost(WAIT).until(() -> fixture.targetCommitted(group, target) >= 0);
		long copyOf5 = targetOffsetOf(copies, "v5");
		long copyOf20 = targetOffsetOf(copies, "v20");
		assertThat(copyOf5).isEqualTo(5);
		// The rebuild read the forged copy after the copy of 19 as the partition mirrored again from
		// source offset 0 (OffsetMapping clears), then the next real copy, of 20, as the first after a
		// source gap 1-19: the group is translated past the copies of 5-19, which it never read, and a
		// group never moves backwards on the target. Known weakness: only the mirror may write the
		// remote topics (ACLs, docs/mirror.md).
		assertThat(fixture.targetCommitted(group, target)).as("known weakness: translated past the copies of 5-19")
			.isEqualTo(copyOf20);
	}

	private static long targetOffsetOf(List<ConsumerRecord<byte[], byte[]>> copies, String value) {
		return copies.stream().filter((copy) -> utf8(copy.value()).equals(value)).mapToLong(ConsumerRecord::offset)
			.findFirst().orElseThrow();
	}

	/**
	 * A careless client writes a record just under the producer's {@code max.request.size} (1 MiB,
	 * the default on both sides): its copy, with the provenance header added, is over the mirror
	 * producer's limit.
	 */
	@Test
	void aRecordWhoseCopyIsOverTheProducersLimit() throws Exception {
		String topic = "limit-" + fixture.name();
		fixture.east().createTopic(topic, 1, (short) 1);
		int size = 1_048_576 - 200;
		while (AbstractRecords.estimateSizeInBytesUpperBound(RecordBatch.CURRENT_MAGIC_VALUE, CompressionType.NONE,
				bytes("k"), new byte[size + 1], new Header[0]) <= 1_048_576 - 8) {
			size++;
		}
		List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(values(topic, 0, 2));
		records.add(new ProducerRecord<>(topic, 0, bytes("k"), new byte[size]));
		records.addAll(values(topic, 3, 5));
		produceBytes(fixture.east(), records);
		assertThat(ReadCommitted.records(fixture.east().bootstrapServers(), topic, WAIT)).hasSize(5);

		Mirror mirror = fixture.mirror((settings) -> settings.topics(List.of(topic)));

		// Known: the copy's send fails (RecordTooLargeException), its transaction aborts, the records
		// are delivered again, and so on: the partition stalls, with the records around it.
		await().atMost(WAIT).until(() -> mirror.status().transactionsAborted() >= 4);
		MirrorStatus status = mirror.status();
		assertThat(status.recordsMirrored()).isZero();
		assertThat(ReadCommitted.records(fixture.west().bootstrapServers(), "east." + topic, WAIT)).isEmpty();
		// Before the fix the positions of the consumer not yet rewound after an abort were taken as
		// mirrored (idle positions): lag 0 and mirroredOffset 5 while nothing was on the target.
		await().atMost(WAIT).untilAsserted(() -> assertThat(mirror.status().lagRecords()).as("the stall shows as lag")
			.isEqualTo(5));
		assertThat(mirror.status().partitions().get(0).mirroredOffset()).isIn(-1L, 0L);
	}

	private static List<ProducerRecord<byte[], byte[]>> values(String topic, int from, int to) {
		List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
		for (int i = from; i < to; i++) {
			records.add(new ProducerRecord<>(topic, 0, bytes("k" + i), bytes("v" + i)));
		}
		return records;
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
