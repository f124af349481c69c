package dev.tandem.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

import dev.tandem.bench.LatencyLog.WindowStats;

/**
 * The tables of {@link FailoverBench}: per broker setting, round trip time and scenario, every
 * trial's p99.9 and max per client, the medians over clean trials, and per-trial ratios
 * against the defaults; then a summary of every (round trip time, scenario) with each ratio's
 * median, range and sign count, so the reader sees at once which differences exceed the
 * spread between trials.
 * <p>
 * A ratio's difference counts as outside the spread when every paired trial points the same
 * way (all ratios below 1, or all above): with {@code n} independent trials that happens by
 * chance with probability {@code 2 * 0.5^n} (a two-sided sign test: 0.25 for 3 trials, 0.06
 * for 5, 0.02 for 7), so a verdict from fewer than 5 trials is a hint, not a finding.
 *
 * @author Tandem
 * @since 0.1.0
 */
final class FailoverReport {

	/** A record slower than this counts as disturbed even if the client's p99 was lower. */
	private static final long MIN_SLOW_MICROS = 50_000;

	/** Producers with acks=all, and the same clients with acks=1. */
	private static final List<String> FAMILIES = List.of("", "-acks1");

	private final Consumer<String> out;

	private final long cleanP99Micros;

	private final Map<String, LatencyLog> logs;

	private final List<Section> sections = new ArrayList<>();

	FailoverReport(Consumer<String> out, long cleanP99Micros, Map<String, LatencyLog> logs) {
		this.out = out;
		this.cleanP99Micros = cleanP99Micros;
		this.logs = logs;
	}

	/**
	 * Print the tables of one (setting, round trip time, scenario) and keep its clean trials
	 * for {@link #summary(String)}.
	 */
	void section(String setting, int rttMs, String scenario, List<FailoverEvent> events) {
		if (events.isEmpty()) {
			return;
		}
		line("### " + title(scenario) + ", RTT " + rttMs + " ms");
		line("");
		Map<String, List<WindowStats>> stats = new LinkedHashMap<>();
		Map<String, List<WindowStats>> baselines = new LinkedHashMap<>();
		this.logs.forEach((client, log) -> {
			List<WindowStats> perTrial = new ArrayList<>();
			List<WindowStats> before = new ArrayList<>();
			for (FailoverEvent event : events) {
				WindowStats baseline = log.window(event.baselineStartMs(), event.startMs(), event.startMs(), 0);
				long slow = Math.max(MIN_SLOW_MICROS, 3 * baseline.p99());
				before.add(baseline);
				perTrial.add(log.window(event.startMs(), event.endMs(), event.startMs(), slow));
			}
			stats.put(client, perTrial);
			baselines.put(client, before);
		});
		// the round trip is part of every latency, so the noise threshold moves with it
		long cleanMicros = this.cleanP99Micros + rttMs * 1000L;
		boolean[] clean = new boolean[events.size()];
		int cleanCount = 0;
		for (int i = 0; i < events.size(); i++) {
			int trial = i;
			clean[i] = baselines.entrySet()
				.stream()
				.filter((entry) -> !entry.getKey().endsWith("consumer"))
				.allMatch((entry) -> entry.getValue().get(trial).p99() <= cleanMicros);
			cleanCount += clean[i] ? 1 : 0;
		}
		line("Per trial, p99.9 / max latency in ms (* = noisy trial: some producer's p99 before the disturbance was "
				+ "above " + cleanMicros / 1000 + " ms, the machine was busy; excluded from the medians below when at "
				+ "least one trial is clean); new = client connections the proxies accepted during the window:");
		line("");
		StringBuilder header = new StringBuilder("| trial | disturbance ms | new |");
		StringBuilder rule = new StringBuilder("|---|---|---|");
		stats.keySet().forEach((client) -> {
			header.append(' ').append(client).append(" |");
			rule.append("---|");
		});
		line(header.toString());
		line(rule.toString());
		for (int i = 0; i < events.size(); i++) {
			FailoverEvent event = events.get(i);
			StringBuilder row = new StringBuilder("| " + event.trial() + (clean[i] ? "" : "*") + " | "
					+ (event.eventEndMs() - event.startMs()) + " | "
					+ ((event.newConnections() >= 0) ? Long.toString(event.newConnections()) : "-") + " |");
			for (List<WindowStats> perTrial : stats.values()) {
				WindowStats window = perTrial.get(i);
				row.append(' ').append(ms(window.p999())).append(" / ").append(ms(window.max()));
				if (window.failures() > 0) {
					row.append(" (").append(window.failures()).append(" failed)");
				}
				row.append(" |");
			}
			line(row.toString());
		}
		line("");
		if (cleanCount > 0 && cleanCount < events.size()) {
			stats.replaceAll((client, perTrial) -> onlyClean(perTrial, clean));
			baselines.replaceAll((client, perTrial) -> onlyClean(perTrial, clean));
		}
		line("Median over " + ((cleanCount > 0) ? cleanCount + " clean" : "all " + events.size() + " (none clean)")
				+ " trials [min-max], latencies and recovery in ms:");
		line("");
		line("| client | records | before: p50 | before: p99 | p50 | p99 | p99.9 | max | recovery | failed |");
		line("|---|---|---|---|---|---|---|---|---|---|");
		stats.forEach((client, perTrial) -> line("| " + client + " | "
				+ perTrial.stream().mapToLong(WindowStats::records).sum() + " | "
				+ summary(baselines.get(client), WindowStats::p50, true) + " | "
				+ summary(baselines.get(client), WindowStats::p99, true) + " | "
				+ summary(perTrial, WindowStats::p50, true) + " | " + summary(perTrial, WindowStats::p99, true) + " | "
				+ summary(perTrial, WindowStats::p999, true) + " | " + summary(perTrial, WindowStats::max, true) + " | "
				+ summary(perTrial, WindowStats::recoveryMs, false) + " | "
				+ perTrial.stream().mapToLong(WindowStats::failures).sum() + " |"));
		line("");
		for (String family : FAMILIES) {
			ratios(stats, "defaults" + family, List.of("tandem" + family, "legacy" + family));
		}
		ratios(stats, "tandem", stats.keySet().stream().filter((c) -> c.startsWith("tandem-without-")).toList());
		ratios(stats, "defaults-consumer", List.of("tandem-consumer"));
		this.sections.add(new Section(setting, rttMs, scenario, stats));
	}

	/**
	 * Print, for one broker setting, every (round trip time, scenario) on one line per
	 * comparison.
	 */
	void summary(String setting) {
		line("## Summary, brokers " + setting);
		line("");
		line("Medians over clean trials, ms; a ratio is the median of per-trial ratios [min-max] and how many trials "
				+ "were below 1 (the first client faster); \"outside\" = every trial points the same way "
				+ "(see the class javadoc of FailoverReport for what that is worth with few trials).");
		line("");
		for (String family : FAMILIES) {
			summaryTable(setting, family);
		}
		List<String> others = new ArrayList<>();
		for (Section section : this.sections) {
			if (!section.setting().equals(setting)) {
				continue;
			}
			Map<String, List<WindowStats>> stats = section.stats();
			stats.keySet().stream().filter((client) -> client.startsWith("tandem-without-")).forEach((client) -> others
				.add("| " + section.rttMs() + " | " + section.scenario() + " | " + client + "/tandem | "
						+ pairedRatio(stats.get(client), stats.get("tandem"), WindowStats::p999) + " | "
						+ pairedRatio(stats.get(client), stats.get("tandem"), WindowStats::max) + " |"));
			if (stats.containsKey("tandem-consumer")) {
				others.add("| " + section.rttMs() + " | " + section.scenario() + " | tandem-consumer/defaults-consumer | "
						+ pairedRatio(stats.get("tandem-consumer"), stats.get("defaults-consumer"), WindowStats::p999)
						+ " | " + pairedRatio(stats.get("tandem-consumer"), stats.get("defaults-consumer"),
								WindowStats::max)
						+ " |");
			}
		}
		if (!others.isEmpty()) {
			line("| RTT ms | scenario | ratio | p99.9 | max |");
			line("|---|---|---|---|---|");
			others.forEach(this::line);
			line("");
		}
	}

	private void summaryTable(String setting, String family) {
		String defaults = "defaults" + family;
		String tandem = "tandem" + family;
		String legacy = "legacy" + family;
		if (this.sections.stream().noneMatch((section) -> section.setting().equals(setting)
				&& section.stats().containsKey(defaults))) {
			return;
		}
		if (!family.isEmpty()) {
			line("Producers with acks=1 (no idempotence): the leader acknowledges alone, so the followers' switch-over "
					+ "to a new leader is not part of the latency.");
			line("");
		}
		line("| RTT ms | scenario | n | " + defaults + " p99.9 / max | " + tandem + " p99.9 / max | " + legacy
				+ " p99.9 / max | tandem/defaults p99.9 | tandem/defaults max | legacy/defaults p99.9 "
				+ "| legacy/defaults max |");
		line("|---|---|---|---|---|---|---|---|---|---|");
		for (Section section : this.sections) {
			if (!section.setting().equals(setting)) {
				continue;
			}
			Map<String, List<WindowStats>> stats = section.stats();
			StringBuilder row = new StringBuilder("| " + section.rttMs() + " | " + section.scenario() + " | "
					+ stats.values().iterator().next().size() + " |");
			for (String client : List.of(defaults, tandem, legacy)) {
				List<WindowStats> perTrial = stats.get(client);
				row.append(' ').append((perTrial != null) ? medianMs(perTrial, WindowStats::p999) + " / "
						+ medianMs(perTrial, WindowStats::max) : "-").append(" |");
			}
			for (String client : List.of(tandem, legacy)) {
				row.append(' ').append(pairedRatio(stats.get(client), stats.get(defaults), WindowStats::p999)).append(" |");
				row.append(' ').append(pairedRatio(stats.get(client), stats.get(defaults), WindowStats::max)).append(" |");
			}
			line(row.toString());
		}
		line("");
	}

	private static String title(String scenario) {
		return switch (scenario) {
			case "move" -> "Leadership of all partitions moved (reassignment + preferred election)";
			case "shutdown" -> "Graceful shutdown of the broker leading the most partitions";
			default -> "SIGKILL of the broker leading the most partitions";
		};
	}

	private static List<WindowStats> onlyClean(List<WindowStats> perTrial, boolean[] clean) {
		List<WindowStats> kept = new ArrayList<>();
		for (int i = 0; i < perTrial.size(); i++) {
			if (clean[i]) {
				kept.add(perTrial.get(i));
			}
		}
		return kept;
	}

	private void ratios(Map<String, List<WindowStats>> stats, String baselineClient, List<String> clients) {
		List<WindowStats> baseline = stats.get(baselineClient);
		if (baseline == null || clients.stream().noneMatch(stats::containsKey)) {
			return;
		}
		line("Per-trial ratios against " + baselineClient + ": median [min-max], trials below 1:");
		line("");
		line("| client | p99 | p99.9 | max |");
		line("|---|---|---|---|");
		for (String client : clients) {
			List<WindowStats> perTrial = stats.get(client);
			if (perTrial != null) {
				line("| " + client + " | " + pairedRatio(perTrial, baseline, WindowStats::p99) + " | "
						+ pairedRatio(perTrial, baseline, WindowStats::p999) + " | "
						+ pairedRatio(perTrial, baseline, WindowStats::max) + " |");
			}
		}
		line("");
	}

	private static String summary(List<WindowStats> perTrial, ToLongFunction<WindowStats> metric, boolean micros) {
		long[] values = perTrial.stream().mapToLong(metric).map((value) -> micros ? value / 1000 : value).sorted().toArray();
		if (values.length == 0) {
			return "-";
		}
		return median(values) + " [" + values[0] + "-" + values[values.length - 1] + "]";
	}

	private static String medianMs(List<WindowStats> perTrial, ToLongFunction<WindowStats> metric) {
		long[] values = perTrial.stream().mapToLong(metric).map((value) -> value / 1000).sorted().toArray();
		return (values.length == 0) ? "-" : Long.toString(median(values));
	}

	/**
	 * Median of the per-trial ratios client/baseline, their range, how many are below 1, and
	 * whether all point the same way.
	 */
	static String pairedRatio(List<WindowStats> client, List<WindowStats> baseline,
			ToLongFunction<WindowStats> metric) {
		if (client == null || baseline == null || client.isEmpty()) {
			return "-";
		}
		double[] ratios = new double[client.size()];
		int below = 0;
		int above = 0;
		for (int i = 0; i < ratios.length; i++) {
			ratios[i] = (double) Math.max(1, metric.applyAsLong(client.get(i)))
					/ Math.max(1, metric.applyAsLong(baseline.get(i)));
			below += (ratios[i] < 1) ? 1 : 0;
			above += (ratios[i] > 1) ? 1 : 0;
		}
		Arrays.sort(ratios);
		double median = (ratios.length % 2 == 1) ? ratios[ratios.length / 2]
				: (ratios[ratios.length / 2 - 1] + ratios[ratios.length / 2]) / 2;
		boolean outside = ratios.length >= 3 && (below == ratios.length || above == ratios.length);
		return String.format(Locale.ROOT, "%.2f [%.2f-%.2f] %d/%d%s", median, ratios[0], ratios[ratios.length - 1],
				below, ratios.length, outside ? " outside" : "");
	}

	private static long median(long[] sorted) {
		return (sorted.length % 2 == 1) ? sorted[sorted.length / 2]
				: (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
	}

	private static String ms(long micros) {
		return Long.toString(micros / 1000);
	}

	private void line(String text) {
		this.out.accept(text);
	}

	/**
	 * The clean trials of one (setting, round trip time, scenario), per client.
	 */
	private record Section(String setting, int rttMs, String scenario, Map<String, List<WindowStats>> stats) {

	}

}
