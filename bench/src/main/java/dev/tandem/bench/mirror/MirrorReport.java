package dev.tandem.bench.mirror;

import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * The Markdown report of a {@link MirrorBench} run: one summary row per contender, every run's
 * raw numbers, and the ratios and bars of issue #14.
 */
final class MirrorReport {

	private final LocalDateTime startedAt;

	private final double loadAtStart;

	private final double loadAtEnd;

	private final List<Double> roundLoads;

	private final String setup;

	private final Duration took;

	private final List<RunResult> results;

	private final List<String> contenders;

	private final List<Integer> rtts;

	private final boolean regions;

	MirrorReport(LocalDateTime startedAt, double loadAtStart, double loadAtEnd, List<Double> roundLoads, String setup,
			Duration took, List<RunResult> results, List<String> contenders, List<Integer> rtts, boolean regions) {
		this.rtts = rtts;
		this.regions = regions;
		this.startedAt = startedAt;
		this.loadAtStart = loadAtStart;
		this.loadAtEnd = loadAtEnd;
		this.roundLoads = roundLoads;
		this.setup = setup;
		this.took = took;
		this.results = results;
		this.contenders = contenders;
	}

	static String progressLine(RunResult result, int rounds) {
		if (result.error() != null) {
			return String.format(Locale.ROOT, "round %d/%d RTT %d ms %-9s FAILED: %s", result.round(), rounds,
					result.rttMs(), result.contender(), result.error());
		}
		return String.format(Locale.ROOT, "round %d/%d RTT %d ms %-9s %8.0f records/s, start %.1f s, p50 %s ms, p99 %s ms, %s, "
				+ "lagging %s, tip %s", result.round(), rounds, result.rttMs(), result.contender(), result.recordsPerSecond(),
				result.startSeconds(), percentile(result.latency(), 50), percentile(result.latency(), 99), copy(result),
				failover(result.lagging()), failover(result.tip()));
	}

	String render() {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT,
				"# Mirror bench, %s (%d cores, load average %.2f at start, %.2f at end; per round: %s; %.1f min)%n%n",
				this.startedAt, Runtime.getRuntime().availableProcessors(), this.loadAtStart, this.loadAtEnd,
				this.roundLoads.stream().map((l) -> String.format(Locale.ROOT, "%.2f", l)).toList(),
				this.took.toMillis() / 60_000.0));
		out.append(this.setup).append('\n');
		if (this.regions) {
			summary(out);
		}
		for (int rtt : this.rtts) {
			if (this.regions) {
				out.append("### Round trip ").append(rtt).append(" ms\n\n");
			}
			table(out, rtt);
			ratios(out, rtt);
			out.append('\n');
		}
		long failedRuns = this.results.stream().filter((r) -> r.error() != null).count();
		out.append("Re-read / skipped: per round, records a consumer group reads again / never reads "
				+ "after moving from the source to the target (see the section's text; n/a: the contender translates no "
				+ "group). Failed runs: ").append(failedRuns).append(".\n\n");
		raw(out);
		return out.toString();
	}

	/** One row per contender: at each round trip time, records/s, its ratio to the fastest at-least-once copy, p99. */
	private void summary(StringBuilder out) {
		out.append("| contender |");
		this.rtts.forEach((rtt) -> out.append(" ").append(rtt).append(" ms: records/s | × ALO | e2e p99 ms |"));
		out.append("\n|---|");
		this.rtts.forEach((rtt) -> out.append("---:|---:|---:|"));
		out.append('\n');
		for (String contender : this.contenders) {
			out.append("| ").append(contender).append(" |");
			for (int rtt : this.rtts) {
				List<RunResult> runs = runs(contender, rtt);
				if (runs.isEmpty()) {
					out.append(" failed | | |");
					continue;
				}
				double rate = median(runs.stream().map(RunResult::recordsPerSecond).sorted().toList());
				long exact = runs.stream().filter((r) -> r.tally().exact()).count();
				String reference = reference(rtt);
				double base = (reference != null)
						? median(runs(reference, rtt).stream().map(RunResult::recordsPerSecond).sorted().toList()) : 0;
				out.append(String.format(Locale.ROOT, " %,.0f%s | %s | %s |", rate,
						(exact == runs.size()) ? "" : " (" + (runs.size() - exact) + " not exact)",
						(base > 0) ? String.format(Locale.ROOT, "%.2f", rate / base) : "-", percentile(merged(runs), 99)));
			}
			out.append('\n');
		}
		out.append("\n× ALO: against the fastest at-least-once copy at the same round trip time (");
		out.append(this.rtts.stream().map((rtt) -> rtt + " ms: " + Objects.requireNonNullElse(reference(rtt), "none"))
			.collect(Collectors.joining(", ")));
		out.append("); records/s and p99: medians over rounds and the rounds' merged histogram. Per round trip time "
				+ "below.\n\n");
	}

	/**
	 * Returns the at-least-once contender ({@code alo-async} or a variant of it, {@code mm2-alo})
	 * with the highest median at a round trip time.
	 */
	private @Nullable String reference(int rtt) {
		String best = null;
		double bestRate = 0;
		for (String contender : this.contenders) {
			if (!Contender.atLeastOnce(contender)) {
				continue;
			}
			List<RunResult> runs = runs(contender, rtt);
			if (runs.isEmpty()) {
				continue;
			}
			double rate = median(runs.stream().map(RunResult::recordsPerSecond).sorted().toList());
			if (rate > bestRate) {
				best = contender;
				bestRate = rate;
			}
		}
		return best;
	}

	private static Histogram merged(List<RunResult> runs) {
		Histogram merged = new Histogram(runs.get(0).latency().getHighestTrackableValue(), 3);
		runs.forEach((r) -> merged.add(r.latency()));
		return merged;
	}

	private void table(StringBuilder out, int rtt) {
		out.append("| contender | records/s (median [min-max]) | start s | e2e p50 ms | e2e p99 ms | e2e max ms "
				+ "| copy, read_committed | out of source order | lagging group: re-read / skipped | tip group: re-read / skipped "
				+ "| offsets settled s |\n");
		out.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
		for (String contender : this.contenders) {
			List<RunResult> runs = runs(contender, rtt);
			if (runs.isEmpty()) {
				List<RunResult> failed = this.results.stream()
					.filter((r) -> r.contender().equals(contender) && r.rttMs() == rtt).toList();
				out.append("| ").append(contender).append(" | failed: ")
					.append(failed.isEmpty() ? "not run" : escape(failed.get(0).error())).append(" | | | | | | | | | |\n");
				continue;
			}
			Histogram merged = merged(runs);
			List<Double> rates = runs.stream().map(RunResult::recordsPerSecond).sorted().toList();
			out.append(String.format(Locale.ROOT, "| %s | %,.0f [%,.0f-%,.0f] | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |%n",
					contender, median(rates), rates.get(0), rates.get(rates.size() - 1),
					median(runs.stream().map(RunResult::startSeconds).sorted().toList()), percentile(merged, 50),
					percentile(merged, 99), merged.getMaxValue(), copies(runs),
					perRound(runs, (r) -> Long.toString(r.tally().reordered())), perRound(runs, (r) -> failover(r.lagging())),
					perRound(runs, (r) -> failover(r.tip())),
					perRound(runs, (r) -> (r.lagging() == null) ? "n/a" : (r.syncSeconds() < 0) ? "did not settle"
							: String.format(Locale.ROOT, "%.1f", r.syncSeconds()))));
		}
		out.append('\n');
	}

	private void raw(StringBuilder out) {
		out.append("Raw runs:\n\n");
		out.append("| round | RTT ms | contender | records/s | start s | p50 | p99 | max | distinct | duplicates | missing "
				+ "| foreign | out of order | lagging committed | lagging translated | lagging re-read | lagging skipped "
				+ "| tip committed | tip translated | tip re-read | tip skipped | untranslated partitions | settled s | error |\n");
		out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
		FailoverCheck.Result none = new FailoverCheck.Result("-", -1, -1, -1, -1, -1, -1, -1, -1);
		for (RunResult r : this.results) {
			if (r.error() != null) {
				out.append(String.format(Locale.ROOT, "| %d | %d | %s |%s %s |%n", r.round(), r.rttMs(), r.contender(),
						" |".repeat(20), escape(r.error())));
				continue;
			}
			TargetReader.Tally tally = r.tally();
			FailoverCheck.Result lag = Objects.requireNonNullElse(r.lagging(), none);
			FailoverCheck.Result tip = Objects.requireNonNullElse(r.tip(), none);
			out.append(String.format(Locale.ROOT,
					"| %d | %d | %s | %.0f | %.1f | %s | %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.1f | |%n",
					r.round(), r.rttMs(), r.contender(), r.recordsPerSecond(), r.startSeconds(), percentile(r.latency(), 50),
					percentile(r.latency(), 99), r.latency().getMaxValue(), tally.distinct(), tally.duplicates(),
					tally.missing(), tally.foreign(), tally.reordered(), lag.committedSource(), lag.committedTarget(), lag.rereads(),
					lag.skips(), tip.committedSource(), tip.committedTarget(), tip.rereads(), tip.skips(),
					lag.untranslated() + tip.untranslated(), r.syncSeconds()));
		}
		out.append('\n');
		out.append("Latency in ms, live records only. Committed/translated: sums over partitions of the group's "
				+ "committed offset on the source and on the target (-1: the contender translates no group). Out of "
				+ "order: records read on the target after a record of the same partition with a higher source "
				+ "offset.\n\n");
	}

	private void ratios(StringBuilder out, int rtt) {
		String reference = reference(rtt);
		if (reference != null) {
			List<RunResult> base = runs(reference, rtt);
			double baseRate = median(base.stream().map(RunResult::recordsPerSecond).sorted().toList());
			out.append("Against the fastest at-least-once copy (").append(reference).append(", ")
				.append(String.format(Locale.ROOT, "%,.0f", baseRate)).append(" records/s): ");
			out.append(this.contenders.stream().filter((c) -> !runs(c, rtt).isEmpty()).map((c) -> c + " "
					+ String.format(Locale.ROOT, "%.2f×",
							median(runs(c, rtt).stream().map(RunResult::recordsPerSecond).sorted().toList()) / baseRate))
				.collect(Collectors.joining(", "))).append("\n");
		}
		List<RunResult> tandem = runs("tandem", rtt);
		if (tandem.isEmpty()) {
			out.append("No ratios: the tandem contender has no successful run.\n");
			return;
		}
		for (String[] bar : new String[][] { { "mm2-eos", "1.0" }, { "mm2-alo", "0.8" } }) {
			List<RunResult> other = runs(bar[0], rtt);
			if (other.isEmpty()) {
				continue;
			}
			List<Double> perRound = new ArrayList<>();
			for (RunResult t : tandem) {
				other.stream().filter((o) -> o.round() == t.round()).findFirst()
					.ifPresent((o) -> perRound.add(t.recordsPerSecond() / o.recordsPerSecond()));
			}
			double ratio = median(tandem.stream().map(RunResult::recordsPerSecond).sorted().toList())
					/ median(other.stream().map(RunResult::recordsPerSecond).sorted().toList());
			double needed = Double.parseDouble(bar[1]);
			out.append(String.format(Locale.ROOT,
					"Bar (issue #14): tandem / %s records/s = %.2f (medians; per round %s), at least %.1f asked: %s%n",
					bar[0], ratio, perRound.stream().map((d) -> String.format(Locale.ROOT, "%.2f", d)).toList(), needed,
					(ratio >= needed) ? "MET" : "NOT MET"));
		}
		boolean zero = tandem.stream().allMatch((r) -> r.lagging().rereads() == 0 && r.tip().rereads() == 0
				&& r.lagging().skips() == 0 && r.tip().skips() == 0);
		out.append("Bar (issue #14): tandem re-reads 0 and skips 0 for both groups in every round: ")
			.append(zero ? "MET" : "NOT MET").append('\n');
	}

	private List<RunResult> runs(String contender, int rtt) {
		return this.results.stream()
			.filter((r) -> r.contender().equals(contender) && r.rttMs() == rtt && r.error() == null)
			.toList();
	}

	private static String copies(List<RunResult> runs) {
		long exact = runs.stream().filter((r) -> r.tally().exact()).count();
		if (exact == runs.size()) {
			return String.format(Locale.ROOT, "exact, %d/%d runs (%,d each)", exact, runs.size(),
					runs.get(0).backlog() + runs.get(0).live());
		}
		return perRound(runs, MirrorReport::copy);
	}

	private static String copy(RunResult r) {
		TargetReader.Tally tally = r.tally();
		if (tally == null) {
			return "n/a";
		}
		return tally.exact() ? "exact (" + tally.distinct() + ")"
				: String.format(Locale.ROOT, "%d distinct, %d duplicates, %d missing, %d foreign", tally.distinct(),
						tally.duplicates(), tally.missing(), tally.foreign());
	}

	private static String failover(FailoverCheck.@Nullable Result result) {
		if (result == null) {
			return "n/a";
		}
		return result.rereads() + " / " + result.skips() + ((result.untranslated() > 0)
				? " (" + result.untranslated() + " partitions untranslated)" : "")
				+ ((result.unplaced() > 0) ? " (" + result.unplaced() + " unplaced)" : "")
				+ ((result.mismatches() > 0) ? " (" + result.mismatches() + " provenance mismatches)" : "")
				+ ((result.exactTarget() >= 0) ? " (translated " + result.committedTarget() + ", exact "
						+ result.exactTarget() + ")" : "");
	}

	private static String perRound(List<RunResult> runs, Function<RunResult, String> value) {
		return runs.stream().map(value).collect(Collectors.joining("; "));
	}

	private static String percentile(@Nullable Histogram histogram, double percentile) {
		return (histogram == null || histogram.getTotalCount() == 0) ? "n/a"
				: Long.toString(histogram.getValueAtPercentile(percentile));
	}

	private static double median(List<Double> sorted) {
		int n = sorted.size();
		return (n % 2 == 1) ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
	}

	private static String escape(@Nullable String text) {
		return (text == null) ? "" : text.replace("|", "\\|").replace("\n", " ");
	}

}
