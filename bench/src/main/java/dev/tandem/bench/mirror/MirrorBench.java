package dev.tandem.bench.mirror;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.bench.BenchOptions;
import dev.tandem.bench.FlightRecords;
import dev.tandem.bench.RegionClusters;
import dev.tandem.mirror.MirrorSettings;

/**
 * Mirroring between clusters (issue #14): MirrorMaker 2 in dedicated mode, exactly-once and
 * at-least-once, against Tandem's mirror, on the same clusters, with the same real flight
 * records, in one run. Each round runs every contender once, in an order rotated every round,
 * each on fresh topics and groups:
 * <ol>
 * <li>the backlog ({@code --records} flights, keyed by an 8-byte record id, partition
 * {@code id % partitions}) is produced to topic {@code flights-r<round>-<contender>} on the
 * source, whose timestamps are the broker's append time ({@code LogAppendTime});</li>
 * <li>two consumer groups consume it on the source and commit: {@code lagging-...} stops at
 * {@code --lag-fraction} of every partition, {@code tip-...} consumes everything;</li>
 * <li>the contender starts, with a {@code read_committed} reader on the target's remote topic
 * ({@code <source-alias>.<topic>}, created beforehand with the same partitions): the copy rate
 * is the backlog over the time from its first to its last record visible there;</li>
 * <li>live phase: {@code --live-rate} records/s for {@code --live-duration} while the mirror
 * runs; their end-to-end latency (source append time to {@code read_committed} visibility on
 * the target, HdrHistogram) gives p50/p99; then the tip group consumes to the end and commits
 * again;</li>
 * <li>once the translated offsets on the target have settled (unchanged for {@code --settle},
 * at most {@code --sync-wait}), the contender stops and the reader checks the copy: every id
 * exactly once ({@code read_committed} count, no duplicate ids);</li>
 * <li>failover: each group moves to the target ({@link FailoverCheck}): records re-read
 * (source offset below its committed source offset) and skipped (must be 0).</li>
 * </ol>
 * Clusters: Kafka's KRaft test kit in this JVM, {@code east} (source) and {@code west} (target),
 * {@code --brokers} brokers and one controller each, topics of {@code --partitions} partitions,
 * replication factor {@code min(3, brokers)}, {@code min.insync.replicas} {@code min(2, brokers)}.
 * MirrorMaker 2 runs in a JVM of its own ({@link MirrorMaker2Contender}).
 * <p>
 * <b>Across regions</b> ({@code --rtt 0,40,80}, issue 25): {@code east} and {@code west} run as
 * broker processes ({@code KafkaProcessCluster} of {@code tandem-test}, {@code --brokers} 1 by
 * default), {@code east}'s client listeners behind a {@code LatencyProxy} each; the contenders sit
 * beside the target and reach the source through the proxies ("consume remote, produce local"),
 * while the source's producer and groups, the target's reader and the failover check connect
 * directly. Every contender runs at each round trip time in every round (orders rotated), and the
 * default contenders add {@code alo-async} ({@link AtLeastOnceMirrorContender}), the best
 * at-least-once copy a user would write, which translates no group; every ratio of the report is
 * against the fastest at-least-once copy ({@code alo-async} or {@code mm2-alo}) at the same round
 * trip time.
 * <p>
 * Run from the repository root on a quiet machine (about 10 minutes with the defaults):
 * <pre>
 * mvn -B -Pbench,mirror-bench -pl bench -am -DskipTests verify [-Dmirror.args="--rounds 3"]
 * </pre>
 * Options ({@code --name value}): {@code --data} flights JSON file (required; the profile passes
 * the sample app's {@code flights-20k.json}, cycled), {@code --mm2-classpath} file holding
 * MirrorMaker 2's class path (required for the {@code mm2-*} contenders; the profile resolves
 * it), {@code --contenders} ({@code mm2-eos,mm2-alo,tandem}; with {@code --rtt}
 * {@code alo-async,mm2-eos,mm2-alo,tandem}; also {@code tandem-source}, the mirror with its
 * positions on the source, and variants of the mirror with settings of their own, for example
 * {@code tandem[max-records=40000,producer.batch.size=131072]}: {@code max-records},
 * {@code max-interval} (ms), {@code depth}, {@code growth}, {@code producer.<key>} for the target's
 * producers and {@code consumer.<key>} for the source's consumer; and variants of the
 * at-least-once copy, {@code alo-async[producer.<key>=...,consumer.<key>=...]}, so that the
 * reference stays the best copy under the same settings), {@code --rtt} round trip times in ms (none: in-process
 * clusters), {@code --rounds} (3), {@code --warmup-rounds} rounds run first and not reported (0),
 * {@code --records} backlog per run (150000), {@code --live-rate} (2000), {@code --live-duration}
 * (10s), {@code --lag-fraction} (0.3), {@code --settle} (5s), {@code --sync-wait} (60s),
 * {@code --brokers} (3; with {@code --rtt} 1), {@code --partitions} (6), {@code --tandem-max-records} the Tandem mirror's
 * {@code max-records} (its settings' default), {@code --report}
 * ({@code bench/target/mirror-bench.md}), {@code --log-dir} for MirrorMaker 2's configuration
 * files and logs ({@code bench/target/mirror-bench-logs}). The report goes to stdout and the file.
 *
 * @since 0.1.0
 */
public final class MirrorBench {

	private static final Logger logger = LoggerFactory.getLogger(MirrorBench.class);

	static final String SOURCE = "east";

	static final String TARGET = "west";

	private final Map<String, String> options;

	private final int rounds;

	private final int warmupRounds;

	private final long backlog;

	private final int liveRate;

	private final Duration liveDuration;

	private final double lagFraction;

	private final Duration settle;

	private final Duration syncWait;

	private final int brokers;

	private final int partitions;

	private final Path logs;

	private final boolean regions;

	private final List<Integer> rtts;

	private MirrorBench(Map<String, String> options) {
		this.options = options;
		this.regions = options.containsKey("rtt");
		this.rtts = RegionClusters.roundTrips(option("rtt", "0"), "--rtt");
		this.rounds = Integer.parseInt(option("rounds", "3"));
		this.warmupRounds = Integer.parseInt(option("warmup-rounds", "0"));
		this.backlog = Long.parseLong(option("records", "150000"));
		this.liveRate = Integer.parseInt(option("live-rate", "2000"));
		this.liveDuration = BenchOptions.duration(option("live-duration", "10s"));
		this.lagFraction = Double.parseDouble(option("lag-fraction", "0.3"));
		this.settle = BenchOptions.duration(option("settle", "5s"));
		this.syncWait = BenchOptions.duration(option("sync-wait", "60s"));
		this.brokers = Integer.parseInt(option("brokers", this.regions ? "1" : "3"));
		this.partitions = Integer.parseInt(option("partitions", "6"));
		this.logs = Path.of(option("log-dir", "bench/target/mirror-bench-logs"));
		if (this.warmupRounds < 0) {
			throw new IllegalArgumentException("--warmup-rounds must be 0 or more");
		}
		if (this.rounds < 1 || this.backlog < 1 || this.liveRate < 1 || this.brokers < 1 || this.partitions < 1) {
			throw new IllegalArgumentException("--rounds, --records, --live-rate, --brokers and --partitions must be 1 or more");
		}
		if (this.lagFraction < 0 || this.lagFraction >= 1) {
			throw new IllegalArgumentException("--lag-fraction takes a number from 0 (inclusive) to 1 (exclusive), not "
					+ this.lagFraction);
		}
	}

	/**
	 * Runs every round and prints the report (also written to {@code --report}).
	 * @param args options, see the class documentation
	 * @throws Exception if the clusters cannot start or the report cannot be written
	 */
	public static void main(String[] args) throws Exception {
		MirrorBench bench = new MirrorBench(BenchOptions.parse(args));
		String report = bench.run();
		BenchOptions.printAndWrite(report, Path.of(bench.option("report", "bench/target/mirror-bench.md")));
		System.exit(0);
	}

	private String option(String name, String defaultValue) {
		return this.options.getOrDefault(name, defaultValue);
	}

	private String run() throws Exception {
		Path data = Path.of(Objects.requireNonNull(this.options.get("data"), "--data <flights JSON file> is required"));
		FlightRecords flights = FlightRecords.read(data);
		long live = this.liveRate * this.liveDuration.toMillis() / 1000;
		double loadAtStart = loadAverage();
		LocalDateTime startedAt = LocalDateTime.now().withNano(0);
		long runStart = System.nanoTime();
		Path work = Files.createTempDirectory("tandem-mirror-bench");
		List<Contender> contenders = new ArrayList<>();
		List<RunResult> results = new ArrayList<>();
		List<Double> roundLoads = new ArrayList<>();
		StringBuilder setup = new StringBuilder();
		short replication = (short) Math.min(3, this.brokers);
		try {
			for (String name : BenchOptions.specs(option("contenders", this.regions ? "alo-async,mm2-eos,mm2-alo,tandem"
					: "mm2-eos,mm2-alo,tandem"))) {
				contenders.add(contender(name, work));
			}
			progress("Starting clusters " + SOURCE + " and " + TARGET + " of " + this.brokers + " broker(s)"
					+ (this.regions ? ", as processes, " + SOURCE + " behind latency proxies" : ""));
			long clustersStart = System.nanoTime();
			try (RegionClusters kafka = this.regions ? RegionClusters.processes(SOURCE, TARGET, this.brokers, Map.of())
					: RegionClusters.inProcess(SOURCE, TARGET, this.brokers, Map.of())) {
				setup.append(String.format(java.util.Locale.ROOT,
						"Clusters: %s (source) and %s (target), each %d broker(s) + 1 controller, started in %.1f s; "
								+ "topics of %d partitions, replication factor %d, min.insync.replicas %d; source topic "
								+ "timestamps LogAppendTime; %s%n",
						SOURCE, TARGET, this.brokers,
						Duration.ofNanos(System.nanoTime() - clustersStart).toMillis() / 1000.0, this.partitions,
						replication, Math.min(2, this.brokers), kafka.describe()));
				if (this.regions) {
					setup.append("Round trip times between the contenders and the source: ").append(this.rtts)
						.append(" ms, every contender at each, the order of the round trip times and of the contenders "
								+ "rotated every round\n");
				}
				setup.append(String.format(java.util.Locale.ROOT,
						"Records per run: %,d backlog + %,d live (%d/s for %d s) flights from %s (%d distinct values, "
								+ "cycled), keyed by an 8-byte record id; producer acks=all, idempotent, linger.ms=5%n",
						this.backlog, live, this.liveRate, this.liveDuration.toSeconds(), data.getFileName(),
						flights.size()));
				setup.append(String.format(java.util.Locale.ROOT,
						"Groups per run: lagging (committed at %.0f%% of the backlog, before the mirror starts), tip "
								+ "(committed at the backlog's end before, and at the very end after the live phase)%n",
						this.lagFraction * 100));
				for (Contender contender : contenders) {
					setup.append("- `").append(contender.id()).append("`: ").append(contender.settings()).append('\n');
				}
				if (this.warmupRounds > 0) {
					setup.append(String.format(java.util.Locale.ROOT,
							"Warm-up: %d round(s) of every contender at each round trip time first, in the same rotation, "
									+ "not reported (the first runs of a fresh JVM are cold)%n",
							this.warmupRounds));
				}
				// warm-up rounds are numbered up to 0, the reported ones from 1
				for (int round = 1 - this.warmupRounds; round <= this.rounds; round++) {
					boolean warmup = round < 1;
					if (!warmup) {
						roundLoads.add(loadAverage());
					}
					for (int j = 0; j < this.rtts.size(); j++) {
						int rtt = this.rtts.get(Math.floorMod(j + round - 1, this.rtts.size()));
						kafka.roundTrip(rtt);
						for (int i = 0; i < contenders.size(); i++) {
							Contender contender = contenders.get(Math.floorMod(i + round - 1, contenders.size()));
							RunResult result = runOne(kafka, contender, round, rtt, flights, live, work, replication);
							if (warmup) {
								progress("warm-up: " + MirrorReport.progressLine(result, this.rounds));
							}
							else {
								results.add(result);
								progress(MirrorReport.progressLine(result, this.rounds));
							}
						}
					}
				}
			}
		}
		finally {
			for (Contender contender : contenders) {
				try {
					contender.close();
				}
				catch (Exception ex) {
					logger.warn("Closing {} failed: {}", contender.id(), ex.toString());
				}
			}
			BenchOptions.deleteRecursively(work);
		}
		return new MirrorReport(startedAt, loadAtStart, loadAverage(), roundLoads, setup.toString(),
				Duration.ofNanos(System.nanoTime() - runStart), results, contenders.stream().map(Contender::id).toList(),
				this.rtts, this.regions)
			.render();
	}

	private Contender contender(String spec, Path work) throws Exception {
		int bracket = spec.indexOf('[');
		if (bracket > 0) {
			String kind = spec.substring(0, bracket);
			if (!(kind.equals("tandem") || kind.equals("alo-async")) || !spec.endsWith("]")) {
				throw new IllegalArgumentException("--contenders: only tandem and alo-async take settings, as "
						+ "tandem[key=value,...], not '" + spec + "'");
			}
			Map<String, String> overrides = BenchOptions.pairs(spec.substring(bracket + 1, spec.length() - 1),
					"--contenders " + spec);
			if (kind.equals("alo-async")) {
				return new AtLeastOnceMirrorContender(spec, overrides);
			}
			return new TandemMirrorContender(work.resolve("coordinator-" + spec.replaceAll("[^A-Za-z0-9.-]", "_")),
					maxRecordsOption(), null, spec, overrides);
		}
		String name = spec;
		return switch (name) {
			case "mm2-eos", "mm2-alo" -> new MirrorMaker2Contender(name.equals("mm2-eos"), Path.of(Objects.requireNonNull(
					this.options.get("mm2-classpath"), "--mm2-classpath <file> is required for the " + name + " contender")));
			case "alo-async" -> new AtLeastOnceMirrorContender();
			case "tandem", "tandem-source" -> new TandemMirrorContender(work.resolve("coordinator-" + name),
					maxRecordsOption(), name.equals("tandem-source") ? MirrorSettings.Positions.SOURCE : null, name, Map.of());
			default -> throw new IllegalArgumentException("Unknown contender '" + name + "' in --contenders; use "
					+ "alo-async, mm2-eos, mm2-alo, tandem, tandem-source");
		};
	}

	private @Nullable Integer maxRecordsOption() {
		return this.options.containsKey("tandem-max-records") ? Integer.parseInt(this.options.get("tandem-max-records"))
				: null;
	}

	private RunResult runOne(RegionClusters kafka, Contender contender, int round, int rtt, FlightRecords flights,
			long live, Path work, short replication) {
		RegionClusters.Cluster source = kafka.source();
		RegionClusters.Cluster target = kafka.target();
		// a variant's id has brackets, '=' and ',': not in a topic name
		String tag = "r" + round + "-rtt" + rtt + "-" + contender.id().replaceAll("[^A-Za-z0-9._-]", "_");
		String topic = "flights-" + tag;
		String remoteTopic = contender.remoteTopic(SOURCE, topic);
		String lagging = "lagging-" + tag;
		String tip = "tip-" + tag;
		long total = this.backlog + live;
		progress("Round " + round + ", RTT " + rtt + " ms: " + contender.id() + " on " + topic + " -> " + remoteTopic);
		try {
			source.createTopic(topic, this.partitions, replication, Map.of("message.timestamp.type", "LogAppendTime"));
			target.createTopic(remoteTopic, this.partitions, replication, Map.of());
			SourceLog log = new SourceLog(this.partitions, Math.toIntExact(total));
			SourceTraffic traffic = new SourceTraffic(source, topic, log, flights);
			traffic.produce(0, this.backlog, 0);
			traffic.consumeAndCommit(lagging, this.backlog, this.lagFraction);
			traffic.consumeAndCommit(tip, this.backlog, 1.0);
			Path runWork = Files.createDirectories(work.resolve(tag));
			MirrorRun run = new MirrorRun(tag, SOURCE, TARGET, source.copierBootstrapServers(),
					target.copierBootstrapServers(), topic, remoteTopic, List.of(lagging, tip), this.partitions, runWork,
					Files.createDirectories(this.logs), replication, rtt);
			TargetReader.Tally tally;
			double syncSeconds;
			long startNanos;
			long firstNanos;
			long backlogNanos;
			try (TargetReader reader = new TargetReader(target, remoteTopic, log, this.backlog, total)) {
				startNanos = System.nanoTime();
				contender.start(run);
				try {
					reader.await(this.backlog, Duration.ofMinutes(5), contender::failure);
					firstNanos = reader.firstSeenNanos();
					backlogNanos = reader.backlogDoneNanos();
					traffic.produce(this.backlog, total, this.liveRate);
					reader.await(total, Duration.ofMinutes(2), contender::failure);
					traffic.consumeAndCommit(tip, total, 1.0);
					long tipCommitted = System.nanoTime();
					syncSeconds = contender.translatesGroups()
							? awaitTranslation(target, List.of(lagging, tip), remoteTopic, tipCommitted, contender) : 0;
				}
				finally {
					contender.stop();
				}
				tally = reader.finish();
			}
			FailoverCheck.Result laggingResult = contender.translatesGroups()
					? FailoverCheck.measure(source, target, lagging, topic, remoteTopic, log, total, contender) : null;
			FailoverCheck.Result tipResult = contender.translatesGroups()
					? FailoverCheck.measure(source, target, tip, topic, remoteTopic, log, total, contender) : null;
			double copySeconds = (backlogNanos - firstNanos) / 1e9;
			return new RunResult(round, rtt, contender.id(), this.backlog, live,
					(copySeconds > 0) ? (this.backlog - 1) / copySeconds : Double.NaN, (firstNanos - startNanos) / 1e9,
					tally.latency(), tally, laggingResult, tipResult, syncSeconds, null);
		}
		catch (Exception ex) {
			logger.error("Round {} of {} failed", round, contender.id(), ex);
			try {
				contender.stop();
			}
			catch (Exception stopFailure) {
				ex.addSuppressed(stopFailure);
			}
			return RunResult.failed(round, rtt, contender.id(), this.backlog, live, ex.getClass().getSimpleName() + ": "
					+ ex.getMessage());
		}
		finally {
			try {
				source.admin().deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
				target.admin().deleteTopics(List.of(remoteTopic)).all().get(30, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				logger.warn("Could not delete the topics of {}: {}", tag, ex.toString());
			}
		}
	}

	/**
	 * Waits until every group has a translated offset on every partition of the remote topic on
	 * the target and none changed for {@code --settle}, at most {@code --sync-wait}.
	 * @return seconds from {@code since} to the last change seen, or -1 if they did not settle
	 */
	private double awaitTranslation(RegionClusters.Cluster target, List<String> groups, String remoteTopic, long since,
			Contender contender) throws Exception {
		long deadline = since + this.syncWait.toNanos();
		Map<String, Map<TopicPartition, Long>> last = new HashMap<>();
		long lastChange = since;
		while (System.nanoTime() < deadline) {
			String failure = contender.failure();
			if (failure != null) {
				throw new IllegalStateException(failure);
			}
			Map<String, Map<TopicPartition, Long>> now = new HashMap<>();
			boolean complete = true;
			for (String group : groups) {
				Map<TopicPartition, Long> offsets = FailoverCheck.committed(target, group, remoteTopic);
				complete &= offsets.size() == this.partitions;
				now.put(group, offsets);
			}
			if (!now.equals(last)) {
				last = now;
				lastChange = System.nanoTime();
			}
			else if (complete && System.nanoTime() - lastChange >= this.settle.toNanos()) {
				return Math.max(0, lastChange - since) / 1e9;
			}
			Thread.sleep(250);
		}
		logger.warn("Translated offsets of {} on {} did not settle in {} s: {}", groups, remoteTopic,
				this.syncWait.toSeconds(), last);
		return -1;
	}

	static double loadAverage() {
		return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
	}

	static void progress(String message) {
		System.err.println(LocalDateTime.now().withNano(0) + " " + message);
	}

}
