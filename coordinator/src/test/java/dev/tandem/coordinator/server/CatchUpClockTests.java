package dev.tandem.coordinator.server;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Unit tests of {@link CatchUpClock} (pure logic, explicit times).
 */
class CatchUpClockTests {

	private static final long MS = 1_000_000;

	private final CatchUpClock clock = new CatchUpClock();

	@Test
	void aReplicaThatReachesTheTargetIsNotBehind() {
		assertThat(this.clock.behindMs("n2", 10, 10, 0)).isZero();
		assertThat(this.clock.behindMs("n2", 11, 10, 500 * MS)).isZero();
	}

	@Test
	void aReplicaThatKeepsUpUnderLoadIsBehindOnlyUntilItsNextObservation() {
		assertThat(this.clock.behindMs("n2", 100, 105, 0)).isZero();
		assertThat(this.clock.behindMs("n2", 103, 110, 100 * MS)).isEqualTo(100);
		// 105 reached: measured again from the target seen now
		assertThat(this.clock.behindMs("n2", 106, 115, 200 * MS)).isZero();
		assertThat(this.clock.behindMs("n2", 116, 120, 300 * MS)).isZero();
		assertThat(this.clock.behindMs("n2", 119, 125, 400 * MS)).isEqualTo(100);
	}

	@Test
	void aReplicaStuckOneEntryBehindIsBehindForEverLongerWhileTheTargetMovesOn() {
		assertThat(this.clock.behindMs("n1", 413, 414, 0)).isZero();
		assertThat(this.clock.behindMs("n1", 413, 414, 5_000 * MS)).isEqualTo(5_000);
		assertThat(this.clock.behindMs("n1", 413, 418, 20_000 * MS)).isEqualTo(20_000);
		// Catching up resets it
		assertThat(this.clock.behindMs("n1", 418, 418, 21_000 * MS)).isZero();
		assertThat(this.clock.behindMs("n1", 418, 419, 22_000 * MS)).isZero();
	}

	@Test
	void replicasAreMeasuredApartAndCanBeForgotten() {
		this.clock.behindMs("n1", 1, 9, 0);
		this.clock.behindMs("n2", 1, 9, 1_000 * MS);
		assertThat(this.clock.behindMs("n1", 1, 9, 3_000 * MS)).isEqualTo(3_000);
		assertThat(this.clock.behindMs("n2", 1, 9, 3_000 * MS)).isEqualTo(2_000);
		this.clock.forget("n1");
		assertThat(this.clock.behindMs("n1", 1, 9, 4_000 * MS)).isZero();
		assertThat(this.clock.behindMs("n1", 1, 9, 4_500 * MS)).isEqualTo(500);
	}

}
