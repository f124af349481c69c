package dev.tandem.bench;

import java.util.Arrays;

/**
 * Every record one client sent: wall-clock send time (ms), latency to acknowledgement or
 * failure (µs), and whether it succeeded. Appends are synchronized; reads take a copy.
 *
 * @author Tandem
 * @since 0.1.0
 */
final class LatencyLog {

	private long[] sentAtMs = new long[1 << 16];

	private long[] latencyMicros = new long[1 << 16];

	private boolean[] failed = new boolean[1 << 16];

	private int size;

	synchronized void add(long sentAtMs, long latencyMicros, boolean failed) {
		if (this.size == this.sentAtMs.length) {
			int capacity = this.size * 2;
			this.sentAtMs = Arrays.copyOf(this.sentAtMs, capacity);
			this.latencyMicros = Arrays.copyOf(this.latencyMicros, capacity);
			this.failed = Arrays.copyOf(this.failed, capacity);
		}
		this.sentAtMs[this.size] = sentAtMs;
		this.latencyMicros[this.size] = latencyMicros;
		this.failed[this.size] = failed;
		this.size++;
	}

	synchronized int size() {
		return this.size;
	}

	/**
	 * Statistics of the records sent in {@code [fromMs, toMs)}.
	 * @param fromMs window start, wall clock
	 * @param toMs window end, wall clock
	 * @param eventStartMs when the disturbance began, for the recovery time
	 * @param slowMicros latency above which a record counts as disturbed
	 * @return the statistics
	 */
	synchronized WindowStats window(long fromMs, long toMs, long eventStartMs, long slowMicros) {
		long[] latencies = new long[this.size];
		int count = 0;
		int failures = 0;
		long lastSlowAckMs = eventStartMs;
		for (int i = 0; i < this.size; i++) {
			long sent = this.sentAtMs[i];
			if (sent < fromMs || sent >= toMs) {
				continue;
			}
			if (this.failed[i]) {
				failures++;
			}
			latencies[count++] = this.latencyMicros[i];
			if (this.latencyMicros[i] > slowMicros) {
				lastSlowAckMs = Math.max(lastSlowAckMs, sent + this.latencyMicros[i] / 1000);
			}
		}
		long[] sorted = Arrays.copyOf(latencies, count);
		Arrays.sort(sorted);
		return new WindowStats(count, failures, percentile(sorted, 50), percentile(sorted, 99),
				percentile(sorted, 99.9), (count > 0) ? sorted[count - 1] : 0, lastSlowAckMs - eventStartMs);
	}

	private static long percentile(long[] sorted, double percentile) {
		if (sorted.length == 0) {
			return 0;
		}
		int index = (int) Math.ceil(percentile / 100.0 * sorted.length) - 1;
		return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
	}

	/**
	 * Latency statistics of one window; latencies in µs, recovery in ms.
	 *
	 * @param records records sent in the window
	 * @param failures records that failed
	 * @param p50 median latency (µs)
	 * @param p99 99th percentile (µs)
	 * @param p999 99.9th percentile (µs)
	 * @param max worst latency (µs)
	 * @param recoveryMs from the event start to the acknowledgement of the last disturbed
	 * record (ms), 0 if none was disturbed
	 */
	record WindowStats(int records, int failures, long p50, long p99, long p999, long max, long recoveryMs) {

	}

}
