package dev.tandem.text;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DurationTextTests {

	@Test
	void durationsAreWrittenWithTheLargestExactUnitAsInApplicationYml() {
		assertThat(DurationText.of(Duration.ofSeconds(5))).isEqualTo("5s");
		assertThat(DurationText.of(Duration.ofSeconds(-5))).isEqualTo("-5s");
		assertThat(DurationText.of(Duration.ofMillis(1500))).isEqualTo("1500ms");
		assertThat(DurationText.of(Duration.ofMinutes(15))).isEqualTo("15m");
		assertThat(DurationText.of(Duration.ofSeconds(90))).isEqualTo("90s");
		assertThat(DurationText.of(Duration.ofHours(2))).isEqualTo("2h");
		assertThat(DurationText.of(Duration.ofDays(30))).isEqualTo("30d");
		assertThat(DurationText.of(Duration.ofNanos(1500))).isEqualTo("1500ns");
		assertThat(DurationText.of(Duration.ZERO)).isEqualTo("0s");
		assertThat(DurationText.of(null)).isEqualTo("empty");
	}

}
