package dev.tandem.transaction;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * When a transaction spanning polls closes: at {@code maxRecords} once the previous one has
 * prepared, else at {@code growth × maxRecords}, or at {@code maxInterval} of age.
 */
class TransactionSizingTests {

	private final TransactionSizing sizing = new TransactionSizing(100, 4, Duration.ofMillis(100));

	private static final long YOUNG = Duration.ofMillis(10).toNanos();

	@Test
	void aTransactionAtMaxRecordsClosesOnceThePreviousOneHasPrepared() {
		assertThat(this.sizing.due(99, YOUNG, 0)).isFalse();
		assertThat(this.sizing.due(100, YOUNG, 0)).isTrue();
	}

	@Test
	void aTransactionKeepsGrowingWhileThePreviousOnePreparesUpToGrowthTimesMaxRecords() {
		assertThat(this.sizing.due(100, YOUNG, 1)).isFalse();
		assertThat(this.sizing.due(399, YOUNG, 1)).isFalse();
		assertThat(this.sizing.due(400, YOUNG, 1)).isTrue();
	}

	@Test
	void anOldTransactionClosesWhateverItsSize() {
		long old = Duration.ofMillis(100).toNanos();
		assertThat(this.sizing.due(0, old, 1)).isTrue();
		assertThat(this.sizing.due(1, old, 3)).isTrue();
		assertThat(this.sizing.nanosUntilDue(old + 1)).isZero();
		assertThat(this.sizing.nanosUntilDue(YOUNG)).isEqualTo(Duration.ofMillis(90).toNanos());
	}

	@Test
	void growthOneClosesAtMaxRecords() {
		TransactionSizing noGrowth = new TransactionSizing(100, 1, Duration.ofSeconds(1));
		assertThat(noGrowth.due(100, YOUNG, 2)).isTrue();
	}

	@Test
	void theDefaultsAreTheProcessors() {
		assertThat(TransactionSizing.DEFAULT.maxRecords()).isEqualTo(CrossClusterProcessor.DEFAULT_MAX_RECORDS);
		assertThat(TransactionSizing.DEFAULT.growth()).isEqualTo(CrossClusterProcessor.DEFAULT_GROWTH);
		assertThat(TransactionSizing.DEFAULT.maxInterval()).isEqualTo(CrossClusterProcessor.DEFAULT_MAX_INTERVAL);
	}

	@Test
	void valuesOutOfRangeAreRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> new TransactionSizing(0, 1, Duration.ofMillis(1)));
		assertThatIllegalArgumentException().isThrownBy(() -> new TransactionSizing(1, 0, Duration.ofMillis(1)));
		assertThatIllegalArgumentException().isThrownBy(() -> new TransactionSizing(1, 1001, Duration.ofMillis(1)));
		assertThatIllegalArgumentException().isThrownBy(() -> new TransactionSizing(1, 1, Duration.ZERO));
	}

}
