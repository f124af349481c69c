package dev.tandem.mirror;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class OffsetMappingTests {

	@Test
	void committedOffsetInsideARunMapsToTheSameRecordOnTheTarget() {
		OffsetMapping mapping = new OffsetMapping(100, true);
		for (long source = 10; source < 20; source++) {
			mapping.add(source, source - 10);
		}
		assertThat(mapping.runs()).isEqualTo(1);
		assertThat(mapping.translate(13)).hasValue(3);
	}

	@Test
	void committedOffsetInAGapMapsToTheFirstMirroredRecordAfterIt() {
		OffsetMapping mapping = new OffsetMapping(100, true);
		mapping.add(0, 0);
		mapping.add(1, 1);
		// source offsets 2..5: a transaction marker and aborted records, never mirrored
		mapping.add(6, 3);
		assertThat(mapping.translate(2)).hasValue(3);
		assertThat(mapping.translate(5)).hasValue(3);
		assertThat(mapping.translate(6)).hasValue(3);
	}

	@Test
	void groupAheadOfTheMirroredDataIsTranslatedToThePositionAfterTheLastMirroredRecord() {
		OffsetMapping mapping = new OffsetMapping(100, true);
		mapping.add(0, 5);
		mapping.add(1, 6);
		assertThat(mapping.translate(2)).hasValue(7);
		assertThat(mapping.translate(1_000)).as("never past the mirrored data").hasValue(7);
	}

	@Test
	void offsetBelowTheFirstMirroredRecordMapsToItWhenTheMappingIsCompleteAndIsUnknownWhenTruncated() {
		OffsetMapping complete = new OffsetMapping(100, true);
		complete.add(20, 0);
		assertThat(complete.translate(10)).as("expired source range, KAFKA-12635").hasValue(0);
		OffsetMapping truncated = new OffsetMapping(100, false);
		truncated.add(20, 7);
		assertThat(truncated.translate(10)).isEmpty();
		assertThat(truncated.translate(20)).hasValue(7);
	}

	@Test
	void capacityDropsTheOldestRunsAndMarksTheMappingTruncated() {
		OffsetMapping mapping = new OffsetMapping(2, true);
		mapping.add(0, 0);
		mapping.add(2, 2);
		mapping.add(4, 4);
		assertThat(mapping.runs()).isEqualTo(2);
		assertThat(mapping.isTruncated()).isTrue();
		assertThat(mapping.translate(0)).isEmpty();
		assertThat(mapping.translate(3)).hasValue(4);
	}

	@Test
	void nothingMirroredTranslatesToNothing() {
		assertThat(new OffsetMapping(10, true).translate(0)).isEmpty();
	}

}
