package dev.tandem.autoconfigure.diagnostics;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.boot.convert.DurationStyle;

import dev.tandem.text.DurationText;

import static org.assertj.core.api.Assertions.assertThat;

/** What {@link DurationText} writes is what Spring Boot reads back from a property. */
class DurationTextTests {

	@Test
	void whatIsWrittenParsesBackToTheSameDuration() {
		for (Duration duration : new Duration[] { Duration.ofMillis(-300), Duration.ofSeconds(90), Duration.ofDays(2),
				Duration.ofMillis(1), Duration.ofNanos(7) }) {
			assertThat(DurationStyle.SIMPLE.parse(DurationText.of(duration))).isEqualTo(duration);
		}
	}

}
