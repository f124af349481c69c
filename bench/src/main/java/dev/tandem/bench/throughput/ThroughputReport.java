package dev.tandem.bench.throughput;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * Renders the throughput run as Markdown: per round trip time, one row per contender with the
 * medians over rounds and the ratios of the medians to the fastest at-least-once copy and to Kafka's
 * single-cluster copy, then the transactional producers' time per transaction; with round trip
 * times, a summary across them first.
 *
 * @since 0.1.0
 */
final class ThroughputReport {

	private ThroughputReport() {
	}

	static String render(Instant startedAt, double loadAtStart, double loadAtEnd, String command, String setup,
			Duration wall, Map<Integer, Map<Contender, List<RoundResult>>> byRtt, boolean regions) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT, "# Throughput, %s (%d cores, load average %.2f at start, %.2f at end, wall time %d s)%n%n",
				startedAt, Runtime.getRuntime().availableProcessors(), loadAtStart, loadAtEnd, wall.toSeconds()));
		out.append("Command: `").append(command.trim()).append("`\n\n");
		out.append(setup).append('\n');
		if (regions) {
			appendSummary(out, byRtt);
		}
		byRtt.forEach((rtt, results) -> {
			if (regions) {
				out.append("### Round trip ").append(rtt).append(" ms\n\n");
			}
			appendTable(out, results);
			appendTimes(out, results);
		});
		out.append("records/s: the backlog over the time from the copier's first poll that returned records to the target's "
				+ "read_committed reader seeing the last backlog record, median over rounds; × ALO, × (b): ratio of that "
				+ "median to the fastest at-least-once copy's ((a) or (a'), named below each table) and to Kafka's "
				+ "single-cluster exactly-once copy's of the same run and round trip time. "
				+ "e2e: live records, the source broker's append time to read_committed visibility on the target, "
				+ "median over rounds of each round's p50 and p99. CPU: the process (with in-process clusters: brokers, "
				+ "controllers, copier, reader; with broker processes: copier, reader, proxies, coordinator) over the "
				+ "throughput window, per backlog record. threads/1k records: threads the process started in that window "
				+ "(copier, clients, Spring, JDK pools; ThreadMXBean) per 1,000 backlog records, including the copy's start. "
				+ "records/txn: records copied (backlog and live) per transaction committed (for (a) per acknowledged "
				+ "poll, for (a') per poll, for (e) per listener call). count check: the "
				+ "target read read_committed up to its last stable offset holds every backlog and live record exactly "
				+ "once, in how many rounds.\n\n");
		return out.toString();
	}

	/** One row per contender: at each round trip time, records/s, its ratio to the fastest at-least-once copy, p99. */
	private static void appendSummary(StringBuilder out, Map<Integer, Map<Contender, List<RoundResult>>> byRtt) {
		out.append("| contender | settings |");
		byRtt.keySet().forEach((rtt) -> out.append(" ").append(rtt).append(" ms: records/s | × ALO | e2e p99 ms |"));
		out.append('\n').append("|---|---|");
		byRtt.keySet().forEach((rtt) -> out.append("---:|---:|---:|"));
		out.append('\n');
		Map<Contender, List<RoundResult>> first = byRtt.values().iterator().next();
		for (Contender contender : first.keySet()) {
			out.append("| ").append(contender.title()).append(" | `").append(contender.spec()).append("` |");
			byRtt.forEach((rtt, results) -> {
				List<RoundResult> rounds = results.get(contender);
				double recordsPerSecond = median(rounds, RoundResult::recordsPerSecond);
				long exact = rounds.stream().filter(RoundResult::exact).count();
				out.append(String.format(Locale.ROOT, " %,.0f%s | %s | %.0f |", recordsPerSecond,
						(exact == rounds.size()) ? "" : " (" + (rounds.size() - exact) + " not exact)",
						ratio(recordsPerSecond, referenceMedian(results)), median(rounds, (r) -> r.latencyP99Ms())));
			});
			out.append('\n');
		}
		out.append('\n').append("× ALO: against the fastest at-least-once copy at the same round trip time (");
		out.append(byRtt.entrySet().stream().map((e) -> {
			Contender reference = reference(e.getValue());
			return e.getKey() + " ms: " + ((reference != null) ? "`" + reference.spec() + "`" : "none");
		}).collect(Collectors.joining(", "))).append("). Per round trip time below.\n\n");
	}

	private static void appendTable(StringBuilder out, Map<Contender, List<RoundResult>> results) {
		@Nullable Contender atLeastOnce = reference(results);
		@Nullable Contender kafka = best(results, Contender.KAFKA_EOS);
		double aloMedian = referenceMedian(results);
		double kafkaMedian = (kafka != null) ? median(results.get(kafka), RoundResult::recordsPerSecond) : 0;
		out.append("| contender | settings | records/s | × ALO | × (b) | e2e p50 ms | e2e p99 ms | CPU µs/record "
				+ "| threads/1k records | records/txn | count check | records/s per round |\n");
		out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
		results.forEach((contender, rounds) -> {
			double recordsPerSecond = median(rounds, RoundResult::recordsPerSecond);
			long exact = rounds.stream().filter(RoundResult::exact).count();
			long records = rounds.stream().mapToLong(RoundResult::expected).sum();
			long transactions = rounds.stream().mapToLong(RoundResult::transactions).sum();
			String check = (exact == rounds.size()) ? "exact " + exact + "/" + rounds.size()
					: rounds.stream().filter((r) -> !r.exact()).map((r) -> "r" + r.round() + ": " + r.check())
						.collect(Collectors.joining("; "));
			out.append(String.format(Locale.ROOT, "| %s | `%s` | %,.0f | %s | %s | %.0f | %.0f | %.1f | %.1f | %s | %s | %s |%n",
					contender.title(), contender.spec(), recordsPerSecond, ratio(recordsPerSecond, aloMedian),
					ratio(recordsPerSecond, kafkaMedian), median(rounds, (r) -> r.latencyP50Ms()),
					median(rounds, (r) -> r.latencyP99Ms()), median(rounds, RoundResult::cpuMicrosPerRecord), median(rounds, RoundResult::threadsPerThousand),
					(transactions > 0) ? String.format(Locale.ROOT, "%.0f", (double) records / transactions) : "-",
					check, rounds.stream().map((r) -> String.format(Locale.ROOT, "%,.0f", r.recordsPerSecond()))
						.collect(Collectors.joining(" / "))));
		});
		out.append('\n');
		if (atLeastOnce != null) {
			out.append("× ALO is against `").append(atLeastOnce.spec()).append("`, the fastest at-least-once copy. ");
		}
		if (kafka != null) {
			out.append("× (b) is against `").append(kafka.spec()).append("`, the fastest (b).");
		}
		out.append("\n\n");
	}

	private static void appendTimes(StringBuilder out, Map<Contender, List<RoundResult>> results) {
		List<String> rows = new ArrayList<>();
		results.forEach((contender, rounds) -> {
			Set<String> clusters = new LinkedHashSet<>();
			rounds.forEach((r) -> clusters.addAll(r.times().keySet()));
			long transactions = rounds.stream().mapToLong(RoundResult::transactions).sum();
			if (transactions == 0) {
				return;
			}
			for (String cluster : clusters) {
				TransactionTimes sum = TransactionTimes.NONE;
				for (RoundResult round : rounds) {
					sum = sum.plus(round.times().getOrDefault(cluster, TransactionTimes.NONE));
				}
				double per = 1e6 * transactions;
				rows.add(String.format(Locale.ROOT, "| %s | %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f |", contender.spec(),
						cluster, sum.producers(), sum.beginNanos() / per, sum.sendOffsetsNanos() / per,
						sum.flushNanos() / per, sum.commitNanos() / per, sum.abortNanos() / per));
			}
		});
		if (rows.isEmpty()) {
			return;
		}
		out.append("Transactional producers' own time per transaction, ms (kafka-clients `txn-begin`, `txn-send-offsets`, "
				+ "`flush`, `txn-commit`, `txn-abort` `-time-ns-total`, summed over the contender's producers of the "
				+ "cluster and every round, divided by its transactions):\n\n");
		out.append("| contender | cluster | producers | begin | send offsets | flush | commit | abort |\n");
		out.append("|---|---|---:|---:|---:|---:|---:|---:|\n");
		rows.forEach((row) -> out.append(row).append('\n'));
		out.append('\n');
	}

	/** Returns the at-least-once contender ((a) or (a')) with the highest median records/s. */
	private static @Nullable Contender reference(Map<Contender, List<RoundResult>> results) {
		return results.keySet().stream().filter(Contender::atLeastOnce)
			.max(java.util.Comparator.comparingDouble((c) -> median(results.get(c), RoundResult::recordsPerSecond)))
			.orElse(null);
	}

	private static double referenceMedian(Map<Contender, List<RoundResult>> results) {
		Contender reference = reference(results);
		return (reference != null) ? median(results.get(reference), RoundResult::recordsPerSecond) : 0;
	}

	/** Returns the contender of a kind with the highest median records/s (its best settings in the run). */
	private static @Nullable Contender best(Map<Contender, List<RoundResult>> results, String kind) {
		return results.keySet().stream().filter((c) -> c.kind().equals(kind))
			.max(java.util.Comparator.comparingDouble((c) -> median(results.get(c), RoundResult::recordsPerSecond)))
			.orElse(null);
	}

	private static String ratio(double value, double base) {
		return (base > 0) ? String.format(Locale.ROOT, "%.2f", value / base) : "-";
	}

	static double median(List<RoundResult> rounds, ToDoubleFunction<RoundResult> value) {
		double[] values = rounds.stream().mapToDouble(value).sorted().toArray();
		if (values.length == 0) {
			return 0;
		}
		Arrays.sort(values);
		int middle = values.length / 2;
		return (values.length % 2 == 1) ? values[middle] : (values[middle - 1] + values[middle]) / 2;
	}

}
