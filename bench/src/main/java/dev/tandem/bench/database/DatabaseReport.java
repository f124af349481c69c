package dev.tandem.bench.database;

import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import org.HdrHistogram.Histogram;

import dev.tandem.bench.database.DatabaseBench.Tally;

/**
 * The Markdown report of a {@link DatabaseBench} run: the setup, one table of throughput and
 * latency, one of delay, one of the exact counts, and the bars.
 */
final class DatabaseReport {

	private DatabaseReport() {
	}

	static String render(Instant startedAt, double loadAtStart, String steal, String arguments, String setup,
			DatabaseBench bench, double seconds) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT,
				"# DatabaseBench, %s (%d cores, load average %.2f at start, %.2f at end; CPU steal %s; %.0f s)%n%n",
				startedAt, Runtime.getRuntime().availableProcessors(), loadAtStart, loadAverage(), steal, seconds));
		out.append("- Arguments: ").append(arguments).append('\n');
		out.append(setup);
		out.append(String.format(Locale.ROOT,
				"- %d workers per contender, each with its own database connection (Tandem: %d slot(s), one XA connection each); %d round(s) of a %d s closed-loop slice "
						+ "then a %d s slice at %d units/s, contenders in an order rotated every round; outbox relay poll "
						+ "interval %d ms (at once again after a full batch of 500)%n%n",
				bench.workers(), bench.tandemSlots(), bench.rounds(), bench.slice().toSeconds(), bench.paced().toSeconds(), bench.rate(),
				bench.outboxPoll().toMillis()));
		Map<String, Tally> tallies = bench.tallies();
		Tally reference = tallies.get(BestEffortContender.NAME);
		double referenceRate = (reference != null) ? median(reference.commitsPerSecond) : Double.NaN;
		out.append("Throughput (closed loop; commits/s = median of the rounds; latencies over every round's units, ms)\n\n");
		out.append("| contender | commits/s | × best-effort | per round | commit p50 | commit p99 | unit p50 | unit p99 "
				+ "| catch-up s (max) |\n|---|---:|---:|---|---:|---:|---:|---:|---:|\n");
		for (String name : bench.names()) {
			Tally tally = tallies.get(name);
			double rate = median(tally.commitsPerSecond);
			out.append(String.format(Locale.ROOT, "| %s | %.1f | %s | %s | %.1f | %.1f | %.1f | %.1f | %.2f |%n", name, rate,
					Double.isNaN(referenceRate) ? "–" : String.format(Locale.ROOT, "%.2f", rate / referenceRate),
					tally.commitsPerSecond.stream().map((r) -> String.format(Locale.ROOT, "%.0f", r))
						.collect(Collectors.joining(", ")),
					ms(tally.commitLatency, 50), ms(tally.commitLatency, 99), ms(tally.unitLatency, 50),
					ms(tally.unitLatency, 99), tally.catchUpSeconds.stream().mapToDouble(Double::doubleValue).max().orElse(0)));
		}
		out.append("\nWhere the commit call goes (every unit of the run, warm-up included; ms p50 / p99)\n\n");
		for (String name : bench.names()) {
			Map<String, Histogram> phases = bench.phases().get(name);
			if (phases == null || phases.isEmpty()) {
				continue;
			}
			out.append("- ").append(name).append(": ").append(phases.entrySet().stream()
				.map((phase) -> String.format(Locale.ROOT, "%s %.1f / %.1f", phase.getKey(), ms(phase.getValue(), 50),
						ms(phase.getValue(), 99)))
				.collect(Collectors.joining(", "))).append('\n');
		}
		out.append(String.format(Locale.ROOT, "%nEnd-to-end delay: from the unit's commit call to its record readable by a "
				+ "read_committed consumer on both clusters, ms (paced: %d units/s; loaded: the closed-loop slices)%n%n",
				bench.rate()));
		out.append("| contender | paced p50 | paced p99 | paced max | loaded p50 | loaded p99 |\n|---|---:|---:|---:|---:|---:|\n");
		for (String name : bench.names()) {
			Tally tally = tallies.get(name);
			out.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.1f | %.1f | %.1f |%n", name,
					ms(tally.pacedDelay, 50), ms(tally.pacedDelay, 99), tally.pacedDelay.getMaxValue() / 1000.0,
					ms(tally.loadedDelay, 50), ms(tally.loadedDelay, 99)));
		}
		out.append("\nCounts, exact (warm-up included): rows and records read_committed after the readers reached the last "
				+ "stable offsets\n\n");
		out.append("| contender | committed | failed | rows | records east | records west | rows without records "
				+ "| records without rows | duplicates | committed without row | outbox left | exact |\n"
				+ "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
		for (String name : bench.names()) {
			Tally tally = tallies.get(name);
			out.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %s |%n", name,
					tally.committed.size(), tally.failed.size(), tally.rows, tally.records.getOrDefault(DatabaseBench.EAST, 0L),
					tally.records.getOrDefault(DatabaseBench.WEST, 0L), tally.rowsWithoutRecords, tally.recordsWithoutRows,
					tally.duplicates, tally.committedWithoutRow, tally.backlogAtEnd, tally.exact() ? "yes" : "NO"));
		}
		Tally tandem = tallies.get(TandemContender.NAME);
		Tally outbox = tallies.get(OutboxContender.NAME);
		out.append('\n');
		if (tandem != null && reference != null) {
			double ratio = median(tandem.commitsPerSecond) / referenceRate;
			out.append(String.format(Locale.ROOT, "- Bar: tandem commits/s ≥ 0.8 × best-effort: %.2f × — %s%n", ratio,
					(ratio >= 0.8) ? "met" : "NOT met"));
		}
		if (tandem != null && outbox != null) {
			boolean below = ms(tandem.pacedDelay, 50) < ms(outbox.pacedDelay, 50)
					&& ms(tandem.pacedDelay, 99) < ms(outbox.pacedDelay, 99);
			out.append(String.format(Locale.ROOT,
					"- Bar: tandem's delay below the outbox's: paced p50 %.1f vs %.1f ms, p99 %.1f vs %.1f ms — %s%n",
					ms(tandem.pacedDelay, 50), ms(outbox.pacedDelay, 50), ms(tandem.pacedDelay, 99),
					ms(outbox.pacedDelay, 99), below ? "met" : "NOT met"));
		}
		boolean exact = tallies.values().stream().allMatch(Tally::exact);
		out.append("- Counts: ").append(exact ? "exact for every contender" : "NOT exact (see the table)").append('\n');
		return out.toString();
	}

	static double loadAverage() {
		return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
	}

	private static double ms(Histogram histogram, double percentile) {
		return (histogram.getTotalCount() == 0) ? Double.NaN : histogram.getValueAtPercentile(percentile) / 1000.0;
	}

	private static double median(List<Double> values) {
		if (values.isEmpty()) {
			return Double.NaN;
		}
		List<Double> sorted = new ArrayList<>(values);
		Collections.sort(sorted);
		int middle = sorted.size() / 2;
		return (sorted.size() % 2 == 1) ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
	}

}
