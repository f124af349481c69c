package dev.tandem.autoconfigure.diagnostics;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class NearestNameTests {

	@Test
	void aTypoWithinTheDistanceFindsTheNameItMeant() {
		assertThat(NearestName.nearest("maximum-pool-sise", List.of("minimum-idle", "maximum-pool-size", "pool-name"), 3))
			.isEqualTo("maximum-pool-size");
		assertThat(NearestName.nearest("Socket-Timeuot", List.of("socket-timeout", "login-timeout"), 3))
			.isEqualTo("socket-timeout");
	}

	@Test
	void aNameFartherThanTheDistanceFindsNothing() {
		assertThat(NearestName.nearest("read-only-mode", List.of("socket-timeout", "login-timeout"), 3)).isNull();
		assertThat(NearestName.distance("kitten", "sitting")).isEqualTo(3);
		assertThat(NearestName.distance("", "abc")).isEqualTo(3);
	}

}
