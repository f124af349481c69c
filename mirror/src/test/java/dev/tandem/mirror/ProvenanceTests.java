package dev.tandem.mirror;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The provenance header: every field round-trips through the one binary header of a copy, the
 * origin across hops; the three string headers earlier snapshots wrote still read (without a topic
 * id as an unknown incarnation) and are replaced on the next copy; a malformed value reads as no
 * provenance; the headers of a copy (one exact-size array) are the record's own, in order, then the
 * provenance, as {@link Provenance#writeTo} writes them.
 */
class ProvenanceTests {

	@Test
	void everyFieldRoundTripsThroughTheOneHeaderOfACopyAndPreviousHopsProvenanceIsReplaced() {
		Uuid id = Uuid.randomUuid();
		Headers original = new RecordHeaders();
		original.add("trace", bytes("t1"));
		original.add(Provenance.TOPIC_ID_HEADER, bytes(Uuid.randomUuid().toString()));
		new Provenance("north", "north", "orders", 1, 5, Uuid.randomUuid()).writeTo(original);
		Headers copy = new RecordHeaders(Provenance.forCopy(original,
				Provenance.prefix("north", "east", "orders", 2, id), 41));
		assertThat(Provenance.read(copy)).isEqualTo(new Provenance("north", "east", "orders", 2, 41, id));
		assertThat(Provenance.origin(copy)).isEqualTo("north");
		assertThat(copy.toArray()).extracting(Header::key).containsExactly("trace", Provenance.HEADER);
	}

	@Test
	void aCopyWrittenByAnEarlierSnapshotStillReadsAndWithoutATopicIdHasAnUnknownIncarnation() {
		Headers legacy = new RecordHeaders();
		legacy.add(Provenance.ORIGIN_HEADER, bytes("north"));
		legacy.add(Provenance.SOURCE_HEADER, bytes("east/orders/0/7"));
		Provenance provenance = Provenance.read(legacy);
		assertThat(provenance).isEqualTo(new Provenance("north", "east", "orders", 0, 7));
		assertThat(provenance.topicId()).isNull();
		assertThat(Provenance.origin(legacy)).isEqualTo("north");
		Uuid id = Uuid.randomUuid();
		legacy.add(Provenance.TOPIC_ID_HEADER, bytes(id.toString()));
		assertThat(Provenance.read(legacy).topicId()).isEqualTo(id);
		provenance.writeTo(legacy);
		assertThat(legacy.toArray()).extracting(Header::key).containsExactly(Provenance.HEADER);
		assertThat(Provenance.read(legacy)).isEqualTo(provenance);
	}

	@Test
	void aMalformedProvenanceReadsAsNone() {
		Headers legacyId = new RecordHeaders();
		legacyId.add(Provenance.ORIGIN_HEADER, bytes("east"));
		legacyId.add(Provenance.SOURCE_HEADER, bytes("east/orders/0/7"));
		legacyId.add(Provenance.TOPIC_ID_HEADER, bytes("not-a-uuid"));
		assertThat(Provenance.read(legacyId).topicId()).as("a malformed legacy id: unknown incarnation").isNull();
		byte[] good = Provenance.value(Provenance.prefix("east", "east", "orders", 3, Uuid.randomUuid()), 99);
		assertThat(Provenance.read(headers(good))).isNotNull();
		assertThat(Provenance.read(headers(Arrays.copyOf(good, good.length - 1)))).as("cut short").isNull();
		assertThat(Provenance.read(headers(Arrays.copyOf(good, good.length + 1)))).as("bytes left over").isNull();
		byte[] otherVersion = good.clone();
		otherVersion[0] = 2;
		assertThat(Provenance.read(headers(otherVersion))).as("an unknown version").isNull();
		assertThat(Provenance.origin(headers(otherVersion))).isNull();
		byte[] hugeLength = { 1, 2, (byte) 0xfe, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x07 };
		assertThat(Provenance.read(headers(hugeLength))).as("a length past the end").isNull();
		assertThat(Provenance.read(headers(new byte[0]))).isNull();
		assertThat(Provenance.read(headers(null))).isNull();
		assertThat(Provenance.read(new RecordHeaders())).as("not a copy").isNull();
	}

	@Test
	void aCopysHeadersAreTheRecordsOwnInOrderThenTheProvenanceInAnArrayOfExactlyThatSize() {
		Uuid id = Uuid.randomUuid();
		Headers original = new RecordHeaders();
		original.add("trace", bytes("t1"));
		original.add(Provenance.ORIGIN_HEADER, bytes("north"));
		original.add("span", bytes("s1"));
		original.add(Provenance.SOURCE_HEADER, bytes("north/orders/2/9"));
		original.add("trace", bytes("t2"));
		original.add(Provenance.TOPIC_ID_HEADER, bytes(Uuid.randomUuid().toString()));
		original.add("tandem-mirrored", bytes("a user's own"));
		Header[] copy = Provenance.forCopy(original, Provenance.prefix("north", "east", "orders", 2, id),
				1_234_567_890_123L);
		assertThat(copy).extracting(Header::key)
			.containsExactly("trace", "span", "trace", "tandem-mirrored", Provenance.HEADER);
		assertThat(Provenance.read(new RecordHeaders(copy)))
			.isEqualTo(new Provenance("north", "east", "orders", 2, 1_234_567_890_123L, id));
		assertThat(original.toArray()).as("the source record's headers are not changed").hasSize(7);
		// the same headers as the provenance's own writeTo gives a mutable copy of the record's headers
		Headers written = new RecordHeaders(original.toArray());
		new Provenance("north", "east", "orders", 2, 1_234_567_890_123L, id).writeTo(written);
		assertThat(new RecordHeaders(copy)).isEqualTo(written);
	}

	@Test
	void aHostileHeaderValueReadsAsNoneAndEveryProvenanceHeaderIsDroppedFromTheCopy() {
		byte[] endlessVarint = { 1, 0, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff };
		assertThat(Provenance.read(headers(endlessVarint))).as("a varint that never ends").isNull();
		byte[] endlessVarlong = Provenance.prefix("east", "east", "orders", 0, null);
		endlessVarlong = Arrays.copyOf(endlessVarlong, endlessVarlong.length + 11);
		Arrays.fill(endlessVarlong, endlessVarlong.length - 11, endlessVarlong.length, (byte) 0xff);
		assertThat(Provenance.read(headers(endlessVarlong))).as("an offset varlong that never ends").isNull();
		assertThat(Provenance.read(headers(new byte[] { 1, 0, 1 }))).as("a negative length").isNull();
		byte[] negativeOffset = Provenance.value(Provenance.prefix("east", "east", "orders", 0, null), 0);
		negativeOffset[negativeOffset.length - 1] = 1;
		assertThat(Provenance.read(headers(negativeOffset))).as("offset -1").isNull();
		Headers original = new RecordHeaders();
		original.add("a", bytes("a"));
		original.add(Provenance.HEADER, null);
		original.add(Provenance.ORIGIN_HEADER, bytes("west"));
		original.add(Provenance.HEADER, endlessVarint);
		original.add("b", null);
		assertThat(Provenance.origin(original)).as("the binary header wins, even malformed: no origin").isNull();
		assertThat(Provenance.read(original)).isNull();
		Header[] copy = Provenance.forCopy(original, Provenance.prefix("east", "east", "orders", 0, null), 3);
		assertThat(copy).extracting(Header::key).containsExactly("a", "b", Provenance.HEADER);
		assertThat(Provenance.read(new RecordHeaders(copy))).isEqualTo(new Provenance("east", "east", "orders", 0, 3));
	}

	@Test
	void theValueIsCompactAndEveryOffsetRoundTrips() {
		Uuid id = Uuid.randomUuid();
		byte[] prefix = Provenance.prefix("east", "east", "flights", 3, id);
		// version, flags, "east" and "flights" with their lengths, the partition, the id
		assertThat(prefix).hasSize(1 + 1 + 5 + 8 + 1 + 16);
		assertThat(Provenance.value(prefix, 123_456)).hasSize(prefix.length + 3);
		assertThat(Provenance.prefix("east", "east", "flights", 3, null)).as("no id").hasSize(1 + 1 + 5 + 8 + 1);
		assertThat(Provenance.prefix("north", "east", "flights", 3, id)).as("another origin").hasSize(prefix.length + 6);
		for (long offset : new long[] { 0, 63, 64, 127, 128, 123_456_789, 999_999_999_999L, Long.MAX_VALUE }) {
			assertThat(Provenance.read(headers(Provenance.value(prefix, offset))))
				.isEqualTo(new Provenance("east", "east", "flights", 3, offset, id));
		}
		assertThat(Provenance.read(headers(Provenance.value(Provenance.prefix("nörd", "östen", "bestellungen-ü", 4095,
				null), 7)))).isEqualTo(new Provenance("nörd", "östen", "bestellungen-ü", 4095, 7));
	}

	@Test
	void theHeadersOfACopyRoundTripThroughTheProducersRecord() {
		Uuid id = Uuid.randomUuid();
		Headers original = new RecordHeaders();
		original.add("trace", bytes("t1"));
		Header[] copy = Provenance.forCopy(original, Provenance.prefix("east", "east", "orders", 5, id), 77);
		ProducerRecord<byte[], byte[]> record = new ProducerRecord<>("east.orders", 5, null, bytes("k"), bytes("v"),
				Arrays.asList(copy));
		assertThat(Provenance.read(record.headers())).isEqualTo(new Provenance("east", "east", "orders", 5, 77, id));
		assertThat(record.headers().toArray()).containsExactly(copy);
		record.headers().add("added-later", bytes("x"));
		assertThat(copy).as("the producer's headers are its own").hasSize(2);
	}

	private static Headers headers(byte[] value) {
		Headers headers = new RecordHeaders();
		headers.add(Provenance.HEADER, value);
		return headers;
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
