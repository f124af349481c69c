package dev.tandem.transaction;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.text.DurationText;

/**
 * Counts {@link HangingTransactions hanging transactions} in the background, on a daemon thread of
 * its own, every interval, and logs a WARN per transaction found: what a gauge reads (the app's
 * {@code tandem.transaction.hanging}, the coordinator service's the same). The count is -1 until
 * the first check ends, and while a cluster or the decision log cannot be read. Thread-safe;
 * {@link #close()} stops the check.
 *
 * @since 0.1.0
 */
public final class HangingTransactionsCheck implements AutoCloseable {

	/** Default interval between two counts (the app's and the coordinator service's check). */
	public static final Duration DEFAULT_INTERVAL = Duration.ofMinutes(1);


	/**
	 * Name of the gauge over {@link #count()}, for an app and for the coordinator service alike
	 * (the chart's {@code TandemHangingTransactions} rule alerts on it).
	 */
	public static final String METER_NAME = "tandem.transaction.hanging";

	private static final Logger logger = LoggerFactory.getLogger(HangingTransactionsCheck.class);

	private final AtomicInteger count = new AtomicInteger(-1);

	private final @Nullable ScheduledExecutorService checker;

	/**
	 * Starts the check.
	 * @param name who is checked, in the thread's name and in log lines (an owner id, a peer id)
	 * @param find what finds them, given the bound of one check's reads
	 *     ({@link HangingTransactions#find}, {@link CrossClusterTransactionManager#hangingTransactions})
	 * @param interval pause between two checks; zero checks nothing (the count stays -1)
	 * @param timeout the bound of one check's reads per cluster
	 * @throws IllegalArgumentException if the interval is negative
	 */
	public HangingTransactionsCheck(String name, Function<Duration, HangingTransactions.Report> find, Duration interval,
			Duration timeout) {
		if (interval.isNegative()) {
			throw new IllegalArgumentException("interval must not be negative but was " + DurationText.of(interval));
		}
		if (interval.isZero()) {
			this.checker = null;
			return;
		}
		ScheduledExecutorService checker = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "tandem-hanging-" + name);
			thread.setDaemon(true);
			return thread;
		});
		this.checker = checker;
		checker.scheduleWithFixedDelay(() -> {
			try {
				HangingTransactions.Report report = find.apply(timeout);
				this.count.set(report.unavailable().isEmpty() ? report.transactions().size() : -1);
				report.transactions()
					.forEach((hanging) -> logger.warn("Hanging transaction {} on cluster '{}' of {}: {} (open {})",
							hanging.transactionalId(), hanging.cluster(), hanging.owner(), hanging.reason(),
							DurationText.of(Duration.ofMillis(hanging.ageMs()))));
			}
			catch (RuntimeException ex) {
				this.count.set(-1);
				logger.debug("Hanging transactions check of {} failed: {}", name, String.valueOf(ex));
			}
		}, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
	}

	/**
	 * Whether the check runs (a positive interval).
	 * @return false when it was started with a zero interval
	 */
	public boolean isEnabled() {
		return this.checker != null;
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
