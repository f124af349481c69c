package dev.tandem.autoconfigure;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code tandem.transaction.*} defaults are the core builder's, and {@link TandemProperties.Transaction#validate()}
 * names the property at fault.
 */
class TandemPropertiesTests {

	@Test
	void transactionDefaultsAreTheBuildersDefaults() {
		TandemProperties.Transaction transaction = new TandemProperties().getTransaction();
		assertThat(transaction.getSlots()).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_SLOTS);
		assertThat(transaction.getTimeout()).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_TRANSACTION_TIMEOUT);
		assertThat(transaction.getCommitTimeout()).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_COMMIT_TIMEOUT);
		assertThat(transaction.getDecisionTimeout())
			.isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_DECISION_TIMEOUT);
		assertThat(transaction.getLeaseTimeout()).isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_LEASE_TIMEOUT);
		assertThat(transaction.getStaleDecisionAge())
			.isEqualTo(CrossClusterTransactionManagerBuilder.DEFAULT_STALE_DECISION_AGE);
		assertThat(transaction.getMarkerTopic()).isEqualTo(CrossClusterTransactionManager.DEFAULT_MARKER_TOPIC);
		transaction.validate();
	}

	@Test
	void tooShortLeaseTimeoutNamesThePropertyTheShortestAndTheDefault() {
		TandemProperties.Transaction transaction = new TandemProperties().getTransaction();
		transaction.setLeaseTimeout(Duration.ofMillis(100));
		assertThatExceptionOfType(TandemConfigurationException.class).isThrownBy(transaction::validate)
			.satisfies((ex) -> {
				assertThat(ex.getProperty()).isEqualTo("tandem.transaction.lease-timeout");
				assertThat(ex.getMessage()).isEqualTo("tandem.transaction.lease-timeout 100ms is too short: "
						+ "the lease is renewed every third of it.");
				assertThat(ex.getAction()).isEqualTo("Set tandem.transaction.lease-timeout to 300ms or more "
						+ "(10s by default), or 0 to turn leases off.");
			});
		transaction.setLeaseTimeout(Duration.ZERO);
		transaction.validate();
		transaction.setLeaseTimeout(Duration.ofMillis(300));
		transaction.validate();
	}

}
