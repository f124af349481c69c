package dev.tandem.bench.throughput;

import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What one contender measured in one round.
 *
 * @param round 1-based round number
 * @param recordsPerSecond backlog records over the time from the copier's first poll to the
 *     reader seeing the last backlog record; 0 if the copy did not finish
 * @param cpuMicrosPerRecord process CPU time in that window per backlog record, in microseconds
 * @param threadsPerThousand threads the process started in that window per 1,000 backlog records
 * @param latencyP50Ms median end-to-end latency of the live records, in ms (-1 without any)
 * @param latencyP99Ms 99th percentile of the same
 * @param latencyMaxMs maximum of the same
 * @param expected distinct records expected on the target (backlog and live)
 * @param read records the reader read, duplicates included
 * @param distinct distinct expected ids read
 * @param unknown records with an unexpected key
 * @param transactions transactions (or at-least-once batches, or listener calls) completed
 * @param times the transactional producers' time totals, by cluster
 * @param failure what went wrong, or null
 * @param load the machine's 1-minute load average when the copy ended
 * @since 0.1.0
 */
record RoundResult(int round, double recordsPerSecond, double cpuMicrosPerRecord, double threadsPerThousand,
		long latencyP50Ms,
		long latencyP99Ms, long latencyMaxMs, long expected, long read, long distinct, long unknown,
		long transactions, Map<String, TransactionTimes> times, @Nullable String failure, double load) {

	/** Whether the target holds exactly the expected records, each once, and nothing failed. */
	boolean exact() {
		return this.failure == null && this.read == this.expected && this.distinct == this.expected
				&& this.unknown == 0;
	}

	/** Returns the count check's text. */
	String check() {
		if (exact()) {
			return "exact";
		}
		StringBuilder text = new StringBuilder();
		text.append(this.distinct).append('/').append(this.expected).append(" distinct");
		if (this.read != this.distinct) {
			text.append(", ").append(this.read - this.distinct - this.unknown).append(" duplicates");
		}
		if (this.unknown > 0) {
			text.append(", ").append(this.unknown).append(" unknown");
		}
		if (this.failure != null) {
			text.append(", ").append(this.failure);
		}
		return text.toString();
	}

}
