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
 * The provenance headers: the source topic's id round-trips, a header written before topic ids
 * were (no id header) reads as an unknown incarnation, and the headers of a copy (one exact-size
 * array) are the record's own, in order, then the provenance, as {@link Provenance#writeTo} writes
 * them.
 */
class ProvenanceTests {

	@Test
	void theSourceTopicIdRoundTripsThroughTheHeadersOfACopy() {
		Uuid id = Uuid.randomUuid();
		Headers original = new RecordHeaders();
		original.add("trace", "t1".getBytes(StandardCharsets.UTF_8));
		original.add(Provenance.TOPIC_ID_HEADER, Uuid.randomUuid().toString().getBytes(StandardCharsets.UTF_8));
		Headers copy = new RecordHeaders(Provenance.forCopy(original, Provenance.originHeader("east"),
				Provenance.sourcePrefix("east", "orders", 2), 41, Provenance.topicIdHeader(id)));
		assertThat(Provenance.read(copy)).isEqualTo(new Provenance("east", "east", "orders", 2, 41, id));
		assertThat(copy.headers(Provenance.TOPIC_ID_HEADER)).as("the previous hop's id replaced").hasSize(1);
		assertThat(copy.lastHeader("trace")).isNotNull();
	}

	@Test
	void aCopyMirroredBeforeTopicIdsHasAnUnknownIncarnation() {
		Headers legacy = new RecordHeaders();
		legacy.add(Provenance.ORIGIN_HEADER, "east".getBytes(StandardCharsets.UTF_8));
		legacy.add(Provenance.SOURCE_HEADER, "east/orders/0/7".getBytes(StandardCharsets.UTF_8));
		Provenance provenance = Provenance.read(legacy);
		assertThat(provenance).isEqualTo(new Provenance("east", "east", "orders", 0, 7));
		assertThat(provenance.topicId()).isNull();
		Headers rewritten = new RecordHeaders();
		provenance.writeTo(rewritten);
		assertThat(rewritten.lastHeader(Provenance.TOPIC_ID_HEADER)).isNull();
	}

	@Test
	void aMalformedTopicIdReadsAsAnUnknownIncarnation() {
		Headers headers = new RecordHeaders();
		new Provenance("east", "east", "orders", 0, 7, Uuid.randomUuid()).writeTo(headers);
		headers.remove(Provenance.TOPIC_ID_HEADER);
		headers.add(Provenance.TOPIC_ID_HEADER, "not-a-uuid".getBytes(StandardCharsets.UTF_8));
		assertThat(Provenance.read(headers).topicId()).isNull();
	}

	@Test
	void aCopysHeadersAreTheRecordsOwnInOrderThenOriginSourceAndTopicIdInAnArrayOfExactlyThatSize() {
		Uuid id = Uuid.randomUuid();
		Headers original = new RecordHeaders();
		original.add("trace", bytes("t1"));
		original.add(Provenance.ORIGIN_HEADER, bytes("north"));
		original.add("span", bytes("s1"));
		original.add(Provenance.SOURCE_HEADER, bytes("north/orders/2/9"));
		original.add("trace", bytes("t2"));
		original.add(Provenance.TOPIC_ID_HEADER, bytes(Uuid.randomUuid().toString()));
		Header[] copy = Provenance.forCopy(original, Provenance.originHeader("north"),
				Provenance.sourcePrefix("east", "orders", 2), 1_234_567_890_123L, Provenance.topicIdHeader(id));
		assertThat(copy).extracting(Header::key)
			.containsExactly("trace", "span", "trace", Provenance.ORIGIN_HEADER, Provenance.SOURCE_HEADER,
					Provenance.TOPIC_ID_HEADER);
		assertThat(copy).extracting((header) -> new String(header.value(), StandardCharsets.UTF_8))
			.containsExactly("t1", "s1", "t2", "north", "east/orders/2/1234567890123", id.toString());
		assertThat(original.toArray()).as("the source record's headers are not changed").hasSize(6);
		// the same headers as the provenance's own writeTo gives a mutable copy of the record's headers
		Headers written = new RecordHeaders(original.toArray());
		new Provenance("north", "east", "orders", 2, 1_234_567_890_123L, id).writeTo(written);
		assertThat(copy).containsExactly(written.toArray());
	}

	@Test
	void aCopyOfARecordWithoutHeadersOrTopicIdCarriesOnlyOriginAndSource() {
		Header[] copy = Provenance.forCopy(new RecordHeaders(), Provenance.originHeader("east"),
				Provenance.sourcePrefix("east", "orders", 0), 0, null);
		assertThat(copy).extracting(Header::key).containsExactly(Provenance.ORIGIN_HEADER, Provenance.SOURCE_HEADER);
		assertThat(Provenance.read(new RecordHeaders(copy))).isEqualTo(new Provenance("east", "east", "orders", 0, 0));
	}

	@Test
	void theHeadersOfACopyRoundTripThroughTheProducersRecord() {
		Uuid id = Uuid.randomUuid();
		Headers original = new RecordHeaders();
		original.add("trace", bytes("t1"));
		Header[] copy = Provenance.forCopy(original, Provenance.originHeader("east"),
				Provenance.sourcePrefix("east", "orders", 5), 77, Provenance.topicIdHeader(id));
		ProducerRecord<byte[], byte[]> record = new ProducerRecord<>("east.orders", 5, null, bytes("k"), bytes("v"),
				Arrays.asList(copy));
		assertThat(Provenance.read(record.headers())).isEqualTo(new Provenance("east", "east", "orders", 5, 77, id));
		assertThat(record.headers().toArray()).containsExactly(copy);
		record.headers().add("added-later", bytes("x"));
		assertThat(copy).as("the producer's headers are its own").hasSize(4);
	}

	@Test
	void theSourceValueIsThePrefixAndTheOffsetsDecimalDigitsAsLongToStringWritesThem() {
		byte[] prefix = Provenance.sourcePrefix("east", "orders", 5);
		for (long offset : new long[] { 0, 7, 9, 10, 99, 100, 123_456_789, 999_999_999_999L, Long.MAX_VALUE }) {
			assertThat(new String(Provenance.sourceValue(prefix, offset), StandardCharsets.US_ASCII))
				.isEqualTo("east/orders/5/" + offset);
		}
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
