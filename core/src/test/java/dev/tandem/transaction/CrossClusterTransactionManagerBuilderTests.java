package dev.tandem.transaction;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.postgresql.xa.PGXADataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The builder's defaults are its {@code DEFAULT_*} constants (which the Spring Boot properties read
 * too), and its checks of the lease timeout use the same shortest value.
 */
class CrossClusterTransactionManagerBuilderTests {

	@Test
	void aNewBuilderHoldsTheDeclaredDefaults() {
		CrossClusterTransactionManagerBuilder builder = CrossClusterTransactionManager.builder();
		assertThat(builder.slots).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_SLOTS);
		assertThat(builder.transactionTimeout).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_TRANSACTION_TIMEOUT);
		assertThat(builder.commitTimeout).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_COMMIT_TIMEOUT);
		assertThat(builder.decisionTimeout).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_DECISION_TIMEOUT);
		assertThat(builder.recoveryInterval).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_RECOVERY_INTERVAL);
		assertThat(builder.leaseTimeout).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_LEASE_TIMEOUT);
		assertThat(builder.staleDecisionAge).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_STALE_DECISION_AGE);
		assertThat(builder.markerTopic).isEqualTo(CrossClusterTransactionManager.DEFAULT_MARKER_TOPIC);
	}

	@Test
	void leaseTimeoutIsZeroOrAtLeastTheShortest() {
		CrossClusterTransactionManagerBuilder builder = CrossClusterTransactionManager.builder();
		builder.leaseTimeout(Duration.ZERO);
		builder.leaseTimeout(CrossClusterTransactionManagerBuilder.MIN_LEASE_TIMEOUT);
		assertThat(builder.leaseTimeout).isEqualTo(Duration.ofMillis(300));
		assertThatIllegalArgumentException().isThrownBy(() -> builder.leaseTimeout(Duration.ofMillis(299)))
			.withMessage("leaseTimeout must be zero (off) or at least 300ms: 299ms");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.leaseTimeout(Duration.ofMillis(-1)));
	}

	@Test
	void aDatabaseNeedsAValidNameOfItsOwn() {
		CrossClusterTransactionManagerBuilder builder = CrossClusterTransactionManager.builder();
		builder.database("orders_eu-1", new PGXADataSource());
		assertThat(builder.databases).containsOnlyKeys("orders_eu-1");
		assertThatIllegalArgumentException().isThrownBy(() -> builder.database("orders_eu-1", new PGXADataSource()))
			.withMessage("Database 'orders_eu-1' is configured twice");
		for (String invalid : new String[] { "", "a.b", "a b", "x".repeat(201) }) {
			assertThatIllegalArgumentException().isThrownBy(() -> builder.database(invalid, new PGXADataSource()))
				.withMessageContaining("letters, digits, '-' and '_'");
		}
	}

	@Test
	void slotsBelowOneAreRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> CrossClusterTransactionManager.builder().slots(0))
			.withMessage("slots must be 1 or more");
	}

}
