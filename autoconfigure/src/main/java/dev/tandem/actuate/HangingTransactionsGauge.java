package dev.tandem.actuate;

import java.time.Duration;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.HangingTransactionsCheck;

/**
 * Gauge {@code tandem.transaction.hanging}: how many of the app's Kafka transactions are open on a
 * broker with nobody to end them ({@link CrossClusterTransactionManager#hangingTransactions}), as a
 * background check on its own daemon thread counted them at its last run (every
 * {@code tandem.transaction.hanging-check-interval}, {@link HangingTransactionsCheck}); -1 until the
 * first check, or while a cluster or the decision log cannot be read. Alert on it above 0.
 * Thread-safe; {@link #close()} stops the check.
 *
 * @since 0.1.0
 */
public final class HangingTransactionsGauge implements AutoCloseable {

	private final HangingTransactionsCheck check;

	/**
	 * Registers the gauge and starts the check.
	 * @param manager the manager whose hanging transactions are counted
	 * @param registry the registry
	 * @param interval pause between two checks; zero registers nothing and checks nothing
	 * @param timeout the bound of one check's reads per cluster
	 * @throws IllegalArgumentException if the interval is negative
	 */
	public HangingTransactionsGauge(CrossClusterTransactionManager manager, MeterRegistry registry, Duration interval,
			Duration timeout) {
		this.check = new HangingTransactionsCheck(manager.owner(), manager::hangingTransactions, interval, timeout);
		if (this.check.isEnabled()) {
			Gauge.builder(HangingTransactionsCheck.METER_NAME, this.check, HangingTransactionsCheck::count)
				.description("Kafka transactions of the app open on a broker with nobody to end them (-1: not known)")
				.register(registry);
		}
	}

	/**
	 * Returns the count of the last check.
	 * @return hanging transactions, or -1 when not known
	 */
	public int count() {
		return this.check.count();
	}

	@Override
	public void close() {
		this.check.close();
	}

}
