package dev.tandem.mirror;

import java.nio.charset.StandardCharsets;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The provenance headers: the source topic's id round-trips, and a header written before topic ids
 * were (no id header) reads as an unknown incarnation.
 */
class ProvenanceTests {

	@Test
	void theSourceTopicIdRoundTripsThroughTheHeadersOfACopy() {
		Uuid id = Uuid.randomUuid();
		Headers original = new RecordHeaders();
		original.add("trace", "t1".getBytes(StandardCharsets.UTF_8));
		original.add(Provenance.TOPIC_ID_HEADER, Uuid.randomUuid().toString().getBytes(StandardCharsets.UTF_8));
		Headers copy = Provenance.forCopy(original, Provenance.originHeader("east"),
				Provenance.sourcePrefix("east", "orders", 2), 41, Provenance.topicIdHeader(id));
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

}
