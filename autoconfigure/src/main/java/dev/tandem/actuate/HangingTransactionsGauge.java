package dev.tandem.actuate;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.HangingTransactions;

/**
 * Gauge {@code tandem.transaction.hanging}: how many of the app's Kafka transactions are open on a
 * broker with nobody to end them ({@link CrossClusterTransactionManager#hangingTransactions}), as a
 * background check on its own daemon thread counted them at its last run (every
 * {@code tandem.transaction.hanging-check-interval}); -1 until the first check, or while a cluster or
 * the decision log cannot be read. Alert on it above 0. Thread-safe; {@link #close()} stops the
 * check.
 *
 * @since 0.1.0
 */
public final class HangingTransactionsGauge implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(HangingTransactionsGauge.class);

	private final AtomicInteger count = new AtomicInteger(-1);

	private final @Nullable ScheduledExecutorService checker;

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
		if (interval.isNegative()) {
			throw new IllegalArgumentException("interval must not be negative but was " + interval);
		}
		if (interval.isZero()) {
			this.checker = null;
			return;
		}
		Gauge.builder("tandem.transaction.hanging", this.count, AtomicInteger::get)
			.description("Kafka transactions of the app open on a broker with nobody to end them (-1: not known)")
			.register(registry);
		ScheduledExecutorService checker = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "tandem-hanging-" + manager.owner());
			thread.setDaemon(true);
			return thread;
		});
		this.checker = checker;
		checker.scheduleWithFixedDelay(() -> {
			try {
				HangingTransactions.Report report = manager.hangingTransactions(timeout);
				this.count.set(report.unavailable().isEmpty() ? report.transactions().size() : -1);
				report.transactions()
					.forEach((hanging) -> logger.warn("Hanging transaction {} on cluster '{}' of {}: {} (open {} ms)",
							hanging.transactionalId(), hanging.cluster(), hanging.owner(), hanging.reason(),
							hanging.ageMs()));
			}
			catch (RuntimeException ex) {
				this.count.set(-1);
				logger.debug("Hanging transactions check of {} failed: {}", manager.owner(), String.valueOf(ex));
			}
		}, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
	}

	/**
	 * Returns the count of the last check.
	 * @return hanging transactions, or -1 when not known
	 */
	public int count() {
		return this.count.get();
	}

	@Override
	public void close() {
		if (this.checker != null) {
			this.checker.shutdownNow();
		}
	}

}
