package dev.tandem.autoconfigure.failover;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

import dev.tandem.failover.LeaderCacheRegistry;

/**
 * Checks the reachability of every client of a {@link LeaderCacheRegistry} at a fixed
 * interval, on one daemon thread named {@code tandem-reachability}: a client that lost all
 * its brokers is logged, counted and shown in health even if it sends nothing (producers
 * also check on send) and polls nothing new (a consumer's interceptor sees only non-empty
 * polls). Each check reads the clients' own metadata; it sends no broker request.
 *
 * @since 0.1.0
 */
public class ReachabilityMonitor implements SmartLifecycle {

	private static final Logger logger = LoggerFactory.getLogger(ReachabilityMonitor.class);

	private final LeaderCacheRegistry registry;

	private final Duration interval;

	private @Nullable ScheduledExecutorService scheduler;

	/**
	 * Create a monitor; it starts with the application context.
	 * @param registry the clients to check
	 * @param interval the time between checks; zero for none (the monitor then does nothing)
	 * @throws IllegalArgumentException if {@code interval} is negative
	 */
	public ReachabilityMonitor(LeaderCacheRegistry registry, Duration interval) {
		if (interval.isNegative()) {
			throw new IllegalArgumentException("interval must not be negative but was " + interval);
		}
		this.registry = registry;
		this.interval = interval;
	}

	@Override
	public synchronized void start() {
		if (this.scheduler != null || this.interval.isZero()) {
			return;
		}
		ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "tandem-reachability");
			thread.setDaemon(true);
			return thread;
		});
		long periodMs = Math.max(1, this.interval.toMillis());
		scheduler.scheduleWithFixedDelay(this::check, periodMs, periodMs, TimeUnit.MILLISECONDS);
		this.scheduler = scheduler;
	}

	private void check() {
		try {
			this.registry.checkReachability();
		}
		catch (RuntimeException ex) {
			// never let the schedule die: the next check may succeed
			logger.debug("Reachability check failed", ex);
		}
	}

	@Override
	public synchronized void stop() {
		if (this.scheduler != null) {
			this.scheduler.shutdownNow();
			this.scheduler = null;
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.scheduler != null;
	}

}
