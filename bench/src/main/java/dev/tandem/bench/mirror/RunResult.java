package dev.tandem.bench.mirror;

import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * One contender's run in one round.
 *
 * @param rttMs the round trip time between the contender and the source, in ms
 * @param recordsPerSecond backlog records over the time from the first to the last backlog
 * record visible on the target (the copy rate, start-up excluded)
 * @param startSeconds from starting the mirror to the first record visible on the target
 * @param latency live records' end-to-end latency, ms (source append to {@code read_committed}
 * visibility on the target)
 * @param syncSeconds from the tip group's last commit on the source to the last change of the
 * translated offsets on the target; negative if they never settled
 * @param error why the run failed, or null
 */
record RunResult(int round, int rttMs, String contender, long backlog, long live, double recordsPerSecond, double startSeconds,
		@Nullable Histogram latency, TargetReader.@Nullable Tally tally, FailoverCheck.@Nullable Result lagging,
		FailoverCheck.@Nullable Result tip, double syncSeconds, @Nullable String error) {

	static RunResult failed(int round, int rttMs, String contender, long backlog, long live, String error) {
		return new RunResult(round, rttMs, contender, backlog, live, Double.NaN, Double.NaN, null, null, null, null, Double.NaN,
				error);
	}

}
