package dev.tandem.bench.throughput;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a copier reports while it runs: when its first poll returned records (the start of the
 * measured copy, so that group joins and application start-up are not counted) with the
 * process's CPU time then, and how many transactions (or batches) it completed. Thread-safe.
 *
 * @since 0.1.0
 */
final class CopyProbe {

	private static final com.sun.management.OperatingSystemMXBean OS = (com.sun.management.OperatingSystemMXBean) ManagementFactory
		.getOperatingSystemMXBean();

	private final AtomicLong firstPollNanos = new AtomicLong();

	private volatile long firstPollCpuNanos;

	private final LongAdder transactions = new LongAdder();

	/**
	 * Records that a poll returned records; only the first call counts.
	 */
	void polled() {
		if (this.firstPollNanos.get() == 0) {
			long cpu = processCpuNanos();
			if (this.firstPollNanos.compareAndSet(0, System.nanoTime())) {
				this.firstPollCpuNanos = cpu;
			}
		}
	}

	/**
	 * Records one completed transaction (or at-least-once batch).
	 */
	void completed() {
		this.transactions.increment();
	}

	long firstPollNanos() {
		return this.firstPollNanos.get();
	}

	long firstPollCpuNanos() {
		return this.firstPollCpuNanos;
	}

	long transactions() {
		return this.transactions.sum();
	}

	/**
	 * Returns the CPU time of this whole process (brokers, copier, reader), in nanoseconds.
	 */
	static long processCpuNanos() {
		return OS.getProcessCpuTime();
	}

}
