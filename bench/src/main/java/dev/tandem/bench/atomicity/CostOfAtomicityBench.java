package dev.tandem.bench.atomicity;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.bench.BenchOptions;
import dev.tandem.bench.FlightRecords;
import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.test.EmbeddedKafkaClusters;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;
import dev.tandem.transaction.TandemException;

/**
 * The cost of atomicity (issue #6): what a Tandem cross-cluster transaction costs against a
 * single-cluster Kafka transaction of the same size, measured on the same clusters, with the
 * same real records, in one run. Scenarios:
 * <ul>
 * <li>{@code single}: a plain transactional {@code KafkaProducer} on one cluster (the floor);</li>
 * <li>{@code tandem-2}, {@code tandem-3}: a {@link CrossClusterTransactionManager} across 2 and
 * 3 clusters with the decision log an app gets by default, the embedded Ratis coordinator
 * (one peer, log on disk), the records of each transaction spread round-robin over the
 * clusters;</li>
 * <li>{@code chained}: best effort, what users do today: two independent Kafka transactions
 * on two clusters, one committed after the other (no atomicity: a crash in between leaves
 * one committed and not the other), half of the records each.</li>
 * </ul>
 * A transaction of {@code n} records carries {@code n} records in total; a scenario that writes
 * {@code k} clusters puts at least one record on each, so below {@code k} records a transaction
 * carries {@code k} (the {@code rec/txn} column). Every producer uses the same client settings
 * ({@code acks=all}, idempotent, Kafka's default batching); records are keyed by sequence number
 * so they spread over the topic's partitions.
 * <p>
 * Method: a closed loop ({@code --concurrency} threads, each transaction after the previous one
 * committed); every (scenario, size) cell is warmed up, then measured in {@code --rounds}
 * slices of {@code --slice}; within a round all scenarios of a size run back to back in an order
 * rotated every round, so drift of a shared machine hits all alike. Reported per cell:
 * records/s and transactions/s over the measured time, transaction latency (first send to
 * commit returned) and commit latency (the commit call(s) only: for {@code chained} both
 * commits) p50/p99; then the ratios to {@code single} at each size, over the whole run and per
 * round (median and range), commit p99 against {@code single}'s, and the bar: {@code tandem-2} records/s at 100 records per
 * transaction at least 0.8x {@code single}.
 * <p>
 * Clusters: Kafka's KRaft test kit in this JVM, three clusters ({@code east}, {@code west},
 * {@code north}) of {@code --brokers} brokers and one controller each; topic {@code atomicity}
 * with {@code --partitions} partitions, replication factor {@code min(3, brokers)},
 * {@code min.insync.replicas} {@code min(2, brokers)}. Three brokers per cluster is the
 * production shape (replication and the transaction state log's min ISR are part of the cost);
 * on 2 cores the twelve nodes of the three clusters are mostly idle between transactions.
 * <p>
 * Run from the repository root on a quiet machine (about 11 minutes with the defaults: start-up
 * about 1 minute, warm-up 16 x 2 s, 5 rounds x 16 cells x 6 s):
 * <pre>
 * mvn -B -q -Pbench -pl bench -am -DskipTests package dependency:build-classpath -Dmdep.outputFile=target/classpath.txt &amp;&amp; java -Xmx2g -cp bench/target/classes:$(cat bench/target/classpath.txt) dev.tandem.bench.atomicity.CostOfAtomicityBench [--data flights.json]
 * </pre>
 * Options ({@code --name value}): {@code --data} flights JSON file (the repository's {@code flights-20k.json}), {@code --brokers}
 * per cluster (3), {@code --partitions} (6), {@code --sizes} records per transaction
 * ({@code 1,10,100,1000}), {@code --scenarios} ({@code single,tandem-2,tandem-3,chained}; also
 * {@code tandem-1}: Tandem on one cluster, the one-phase path with its marker record),
 * {@code --rounds} (5), {@code --slice} measured time per cell and round (6s), {@code --warmup}
 * per cell (2s), {@code --concurrency} transactions in flight (1), {@code --spread} {@code total}
 * (the default, as above) or {@code per-cluster} ({@code n} records on every cluster written, so
 * that every cluster does the work of the single-cluster transaction), {@code --client-config}
 * {@code key=value,...} producer settings for every scenario alike (none: Kafka's defaults),
 * {@code --report} (default
 * {@code bench/target/cost-of-atomicity.txt}). Durations take {@code ms} or {@code s}.
 * Numbers taken on a busy machine say nothing: check the load average in the report.
 *
 * @author Tandem
 * @since 0.1.0
 */
public final class CostOfAtomicityBench {

	private static final Logger logger = LoggerFactory.getLogger(CostOfAtomicityBench.class);

	private static final String TOPIC = "atomicity";

	private static final List<String> CLUSTERS = List.of("east", "west", "north");

	private static final String SINGLE = "single";

	private static final String TANDEM_2 = "tandem-2";

	private final Map<String, String> options;

	private final List<Integer> sizes;

	private final List<String> scenarioNames;

	private final int rounds;

	private final Duration slice;

	private final Duration warmup;

	private final int concurrency;

	private final boolean perCluster;

	private final Map<String, Cell> cells = new LinkedHashMap<>();

	private final List<Double> roundLoads = new ArrayList<>();

	private byte[][] values = new byte[0][];

	private final AtomicLong sequence = new AtomicLong();

	private CostOfAtomicityBench(Map<String, String> options) {
		this.options = options;
		this.sizes = Arrays.stream(option("sizes", "1,10,100,1000").split(",")).map(String::trim)
			.map(Integer::valueOf).toList();
		this.scenarioNames = Arrays.stream(option("scenarios", "single,tandem-2,tandem-3,chained").split(","))
			.map(String::trim).toList();
		this.rounds = Integer.parseInt(option("rounds", "5"));
		this.slice = BenchOptions.duration(option("slice", "6s"));
		this.warmup = BenchOptions.duration(option("warmup", "2s"));
		this.concurrency = Integer.parseInt(option("concurrency", "1"));
		String spread = option("spread", "total");
		if (!spread.equals("total") && !spread.equals("per-cluster")) {
			throw new IllegalArgumentException("--spread takes total or per-cluster, not " + spread);
		}
		this.perCluster = spread.equals("per-cluster");
		if (this.sizes.stream().anyMatch((n) -> n < 1) || this.rounds < 1 || this.concurrency < 1) {
			throw new IllegalArgumentException("--sizes, --rounds and --concurrency must be 1 or more");
		}
	}

	/**
	 * Runs every scenario and prints the report (also written to {@code --report}).
	 * @param args options, see the class documentation
	 * @throws Exception if the clusters or the coordinator cannot start, or a scenario fails
	 */
	public static void main(String[] args) throws Exception {
		Map<String, String> options = BenchOptions.parse(args);
		CostOfAtomicityBench bench = new CostOfAtomicityBench(options);
		String report = bench.run();
		BenchOptions.printAndWrite(report, Path.of(bench.option("report", "bench/target/cost-of-atomicity.txt")));
		System.exit(0);
	}

	private String option(String name, String defaultValue) {
		return this.options.getOrDefault(name, defaultValue);
	}

	private String run() throws Exception {
		Path data = FlightRecords.locate(this.options.get("data"));
		FlightRecords flights = FlightRecords.read(data);
		this.values = new byte[flights.size()][];
		long valueBytes = 0;
		for (int i = 0; i < flights.size(); i++) {
			this.values[i] = flights.value(i).getBytes(StandardCharsets.UTF_8);
			valueBytes += this.values[i].length;
		}
		int brokers = Integer.parseInt(option("brokers", "3"));
		int partitions = Integer.parseInt(option("partitions", "6"));
		short replication = (short) Math.min(3, brokers);
		double loadAtStart = loadAverage();
		LocalDateTime startedAt = LocalDateTime.now().withNano(0);
		long runStart = System.nanoTime();
		Path work = Files.createTempDirectory("tandem-atomicity-bench");
		StringBuilder setup = new StringBuilder();
		try {
			EmbeddedKafkaClusters.Builder builder = EmbeddedKafkaClusters.builder()
				.brokerProperty("log.retention.check.interval.ms", "30000")
				.operationTimeout(Duration.ofMinutes(2));
			for (String cluster : CLUSTERS) {
				builder.cluster(cluster, brokers);
			}
			progress("Starting " + CLUSTERS.size() + " clusters of " + brokers + " broker(s)");
			long clustersStart = System.nanoTime();
			try (EmbeddedKafkaClusters kafka = builder.build().start()) {
				long clustersMs = Duration.ofNanos(System.nanoTime() - clustersStart).toMillis();
				for (String cluster : CLUSTERS) {
					// Old segments go, so a long run does not fill the disk.
					kafka.cluster(cluster).createTopic(TOPIC, partitions, replication,
							Map.of("segment.bytes", String.valueOf(16 * 1024 * 1024), "retention.bytes",
									String.valueOf(64L * 1024 * 1024)));
				}
				long coordinatorStart = System.nanoTime();
				// one coordinator for every manager here: a shared log, whose leases see a duplicate instance
				try (EmbeddedCoordinator coordinator = EmbeddedCoordinator.builder(work.resolve("coordinator"))
						.client((log) -> log.sharedByInstances(true))
						.start()) {
					setup.append(String.format(Locale.ROOT,
							"Clusters: %s, each %d broker(s) + 1 controller (Kafka's KRaft test kit, this JVM), started in %.1f s; "
									+ "topic '%s': %d partitions, replication factor %d, min.insync.replicas %d; acks=all, idempotent, default batching%n",
							CLUSTERS, brokers, clustersMs / 1000.0, TOPIC, partitions, replication, Math.min(2, brokers)));
					setup.append(String.format(Locale.ROOT,
							"Decision log: embedded Ratis coordinator (1 peer, log on disk under %s), started in %.1f s%n",
							work, Duration.ofNanos(System.nanoTime() - coordinatorStart).toMillis() / 1000.0));
					setup.append("Producer settings beyond Kafka's defaults, every scenario: ")
						.append(clientConfig().isEmpty() ? "none" : clientConfig()).append('\n');
					setup.append(String.format(Locale.ROOT, "Records: %d flights from %s, values %.0f bytes on average, keyed by sequence number%n",
							flights.size(), data, (double) valueBytes / flights.size()));
					List<Scenario> scenarios = new ArrayList<>();
					try {
						for (String name : this.scenarioNames) {
							scenarios.add(scenario(name, kafka, coordinator));
						}
						measure(scenarios);
					}
					finally {
						for (Scenario scenario : scenarios) {
							try {
								scenario.close();
							}
							catch (Exception ex) {
								logger.warn("Closing {} failed: {}", scenario.name(), ex.toString());
							}
						}
					}
				}
			}
		}
		finally {
			BenchOptions.deleteRecursively(work);
		}
		return report(startedAt, loadAtStart, setup.toString(), Duration.ofNanos(System.nanoTime() - runStart));
	}

	private Scenario scenario(String name, EmbeddedKafkaClusters kafka, EmbeddedCoordinator coordinator) {
		Map<String, Map<String, Object>> configs = new LinkedHashMap<>();
		for (String cluster : CLUSTERS) {
			Map<String, Object> config = new HashMap<>(clientConfig());
			config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster(cluster).bootstrapServers());
			configs.put(cluster, config);
		}
		return switch (name) {
			case SINGLE -> new KafkaTransactions(name, List.of(configs.get("east")));
			case "chained" -> new KafkaTransactions(name, List.of(configs.get("east"), configs.get("west")));
			case "tandem-1" -> new TandemTransactions(name, configs, 1, coordinator, this.concurrency);
			case TANDEM_2 -> new TandemTransactions(name, configs, 2, coordinator, this.concurrency);
			case "tandem-3" -> new TandemTransactions(name, configs, 3, coordinator, this.concurrency);
			default -> throw new IllegalArgumentException("Unknown scenario '" + name
					+ "'; use single, tandem-1, tandem-2, tandem-3, chained");
		};
	}

	/**
	 * Producer settings of {@code --client-config k=v,k=v}, the same for every scenario.
	 */
	private Map<String, Object> clientConfig() {
		Map<String, Object> config = new LinkedHashMap<>();
		String text = option("client-config", "");
		for (String pair : text.split(",")) {
			if (pair.isBlank()) {
				continue;
			}
			int equals = pair.indexOf('=');
			if (equals < 1) {
				throw new IllegalArgumentException("--client-config takes key=value pairs, not '" + pair + "'");
			}
			config.put(pair.substring(0, equals).trim(), pair.substring(equals + 1).trim());
		}
		return config;
	}

	private void measure(List<Scenario> scenarios) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(this.concurrency, (runnable) -> {
			Thread thread = new Thread(runnable, "bench-worker");
			thread.setDaemon(true);
			return thread;
		});
		Map<Scenario, List<Worker>> workers = new LinkedHashMap<>();
		try {
			for (Scenario scenario : scenarios) {
				List<Worker> own = new ArrayList<>();
				for (int i = 0; i < this.concurrency; i++) {
					own.add(scenario.worker(i));
				}
				workers.put(scenario, own);
				for (int size : this.sizes) {
					this.cells.put(key(scenario.name(), size), new Cell(scenario.name(), size, this.rounds));
				}
			}
			progress("Warm-up: " + this.warmup.toMillis() + " ms per cell");
			for (int size : this.sizes) {
				for (Scenario scenario : scenarios) {
					slice(threads, workers.get(scenario), size, this.warmup, null, 0);
				}
			}
			for (int round = 0; round < this.rounds; round++) {
				this.roundLoads.add(loadAverage());
				for (int size : this.sizes) {
					for (int i = 0; i < scenarios.size(); i++) {
						Scenario scenario = scenarios.get((i + round) % scenarios.size());
						Cell cell = this.cells.get(key(scenario.name(), size));
						slice(threads, workers.get(scenario), size, this.slice, cell, round);
						progress(String.format(Locale.ROOT, "round %d/%d, %4d records/txn, %-8s %8.0f records/s %6.1f txns/s",
								round + 1, this.rounds, size, scenario.name(), cell.roundRecordsPerSecond[round],
								cell.roundTransactionsPerSecond[round]));
					}
				}
			}
		}
		finally {
			for (List<Worker> own : workers.values()) {
				for (Worker worker : own) {
					try {
						worker.close();
					}
					catch (Exception ex) {
						logger.warn("Closing a worker failed: {}", ex.toString());
					}
				}
			}
			threads.shutdownNow();
		}
	}

	/**
	 * Runs transactions of one size on every worker until the slice ends (the transactions in
	 * progress then finish and count); measures into the cell, or only warms up if it is null.
	 */
	private void slice(ExecutorService threads, List<Worker> workers, int size, Duration length, @Nullable Cell cell,
			int round) throws Exception {
		long start = System.nanoTime();
		long deadline = start + length.toNanos();
		List<Future<Sample>> futures = new ArrayList<>();
		for (Worker worker : workers) {
			futures.add(threads.submit(() -> {
				Sample sample = new Sample();
				while (System.nanoTime() < deadline) {
					long before = System.nanoTime();
					Timing timing;
					try {
						timing = worker.transaction(size);
					}
					catch (TandemException | KafkaException ex) {
						sample.failed++;
						logger.warn("A transaction of {} records failed: {}", size, ex.toString());
						continue;
					}
					sample.add(timing.records(), System.nanoTime() - before, timing.commitNanos());
				}
				return sample;
			}));
		}
		Sample total = new Sample();
		for (Future<Sample> future : futures) {
			total.addAll(future.get());
		}
		long elapsed = System.nanoTime() - start;
		if (cell != null) {
			cell.add(total, elapsed, round);
		}
	}

	private String report(LocalDateTime startedAt, double loadAtStart, String setup, Duration wall) {
		StringBuilder out = new StringBuilder();
		out.append("# Cost of atomicity, ").append(startedAt).append(String.format(Locale.ROOT,
				" (%d cores, load average %.2f at start, %.2f at end; per round: %s)%n", Runtime.getRuntime()
					.availableProcessors(), loadAtStart, loadAverage(),
				this.roundLoads.stream().map((l) -> String.format(Locale.ROOT, "%.2f", l)).toList()));
		out.append("Command: ").append(String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()))
			.append(' ').append(this.options).append('\n');
		out.append(setup);
		out.append(String.format(Locale.ROOT,
				"Method: closed loop, %d transaction(s) in flight; warm-up %d ms per cell, then %d round(s) of %d ms per cell, "
						+ "scenario order rotated every round; %s; wall time %d s%n%n",
				this.concurrency, this.warmup.toMillis(), this.rounds, this.slice.toMillis(),
				this.perCluster ? "size = records on EACH cluster written (--spread per-cluster)"
						: "size = records in total, spread round-robin over the clusters written, at least 1 each",
				wall.toSeconds()));
		out.append(String.format(Locale.ROOT, "%6s  %-9s %7s %7s %10s %8s %9s %9s %10s %10s %6s%n", "size", "scenario",
				"rec/txn", "txns", "records/s", "txns/s", "txn p50", "txn p99", "commit p50", "commit p99", "failed"));
		for (int size : this.sizes) {
			for (String name : this.scenarioNames) {
				Cell cell = this.cells.get(key(name, size));
				if (cell == null) {
					continue;
				}
				out.append(String.format(Locale.ROOT, "%6d  %-9s %7s %7d %10.0f %8.1f %9.1f %9.1f %10.1f %10.1f %6d%n", size,
						name, cell.recordsPerTransaction(), cell.transactions, cell.recordsPerSecond(),
						cell.transactionsPerSecond(), cell.transactionLatency.percentile(0.50) / 1e6,
						cell.transactionLatency.percentile(0.99) / 1e6, cell.commitLatency.percentile(0.50) / 1e6,
						cell.commitLatency.percentile(0.99) / 1e6, cell.failed));
			}
		}
		out.append("Latencies in ms. txn: first send to commit returned; commit: the commit call(s) only.\n\n");
		if (this.scenarioNames.contains(SINGLE)) {
			List<String> others = this.scenarioNames.stream().filter((name) -> !name.equals(SINGLE)).toList();
			for (boolean records : new boolean[] { true, false }) {
				out.append("Ratios to single, ").append(records ? "records/s" : "transactions/s")
					.append(" over the whole run, then per round: median [min-max]\n");
				appendVersusSingle(out, others, "  %-26s", (cell, single) -> ratios(cell, single, records));
				out.append('\n');
			}
			out.append("The two ratios differ where a scenario carries a different number of records per transaction "
					+ "(rec/txn column).\n\n");
			out.append("Commit p99 minus single's commit p99, ms\n");
			appendVersusSingle(out, others, "  %10s", (cell, single) -> (cell == null || single == null) ? "-"
					: String.format(Locale.ROOT, "%+.1f",
							(cell.commitLatency.percentile(0.99) - single.commitLatency.percentile(0.99)) / 1e6));
			Cell single = this.cells.get(key(SINGLE, 100));
			Cell tandem = this.cells.get(key(TANDEM_2, 100));
			if (single != null && tandem != null && single.recordsPerSecond() > 0 && !this.perCluster) {
				double ratio = tandem.recordsPerSecond() / single.recordsPerSecond();
				out.append(String.format(Locale.ROOT,
						"%nBar (issue #6): tandem-2 / single records/s at 100 records per transaction = %.2f (at least 0.80 asked): %s%n",
						ratio, (ratio >= 0.8) ? "MET" : "NOT MET"));
			}
		}
		return out.toString();
	}

	/**
	 * Appends a table of one value per size (rows) and scenario other than single (columns), each
	 * computed from that scenario's cell and single's cell of the same size (either may be null).
	 */
	private void appendVersusSingle(StringBuilder out, List<String> others, String columnFormat,
			java.util.function.BiFunction<@Nullable Cell, @Nullable Cell, String> value) {
		out.append(String.format(Locale.ROOT, "%6s", "size"));
		for (String name : others) {
			out.append(String.format(Locale.ROOT, columnFormat, name));
		}
		out.append('\n');
		for (int size : this.sizes) {
			Cell single = this.cells.get(key(SINGLE, size));
			out.append(String.format(Locale.ROOT, "%6d", size));
			for (String name : others) {
				out.append(String.format(Locale.ROOT, columnFormat, value.apply(this.cells.get(key(name, size)), single)));
			}
			out.append('\n');
		}
	}

	private String ratios(@Nullable Cell cell, @Nullable Cell single, boolean records) {
		if (cell == null || single == null || single.recordsPerSecond() == 0) {
			return "-";
		}
		double[] ours = records ? cell.roundRecordsPerSecond : cell.roundTransactionsPerSecond;
		double[] floor = records ? single.roundRecordsPerSecond : single.roundTransactionsPerSecond;
		double[] perRound = new double[this.rounds];
		for (int r = 0; r < this.rounds; r++) {
			perRound[r] = (floor[r] > 0) ? ours[r] / floor[r] : 0;
		}
		Arrays.sort(perRound);
		double median = (perRound.length % 2 == 1) ? perRound[perRound.length / 2]
				: (perRound[perRound.length / 2 - 1] + perRound[perRound.length / 2]) / 2;
		double whole = records ? cell.recordsPerSecond() / single.recordsPerSecond()
				: cell.transactionsPerSecond() / single.transactionsPerSecond();
		return String.format(Locale.ROOT, "%.2f (%.2f [%.2f-%.2f])", whole, median, perRound[0],
				perRound[perRound.length - 1]);
	}

	private ProducerRecord<byte[], byte[]> nextRecord() {
		long n = this.sequence.getAndIncrement();
		return new ProducerRecord<>(TOPIC, Long.toString(n).getBytes(StandardCharsets.UTF_8),
				this.values[(int) (n % this.values.length)]);
	}

	/**
	 * Spreads {@code n} records over {@code clusters} clusters round-robin, at least one each; or,
	 * with {@code --spread per-cluster}, puts {@code n} on each.
	 */
	int[] split(int n, int clusters) {
		int[] counts = new int[clusters];
		if (this.perCluster) {
			Arrays.fill(counts, n);
			return counts;
		}
		int total = Math.max(n, clusters);
		for (int i = 0; i < total; i++) {
			counts[i % clusters]++;
		}
		return counts;
	}

	private static String key(String scenario, int size) {
		return scenario + "/" + size;
	}

	private static double loadAverage() {
		return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
	}

	private static void progress(String message) {
		System.err.println(LocalDateTime.now().withNano(0) + " " + message);
	}

	/** One transaction's result: records carried and nanoseconds spent in commit calls. */
	private record Timing(int records, long commitNanos) {
	}

	/** A way of writing records transactionally. */
	private interface Scenario extends AutoCloseable {

		String name();

		/** A worker with its own producers (a transactional producer runs one transaction at a time). */
		Worker worker(int index);

	}

	private interface Worker extends AutoCloseable {

		/**
		 * Runs one transaction of about {@code size} records and returns when it is committed.
		 * @throws TandemException or KafkaException if the transaction failed (it is aborted)
		 */
		Timing transaction(int size);

	}

	/**
	 * Plain Kafka transactions: one cluster ({@code single}), or several committed one after the
	 * other, each independently ({@code chained}).
	 */
	private final class KafkaTransactions implements Scenario {

		private final String name;

		private final List<Map<String, Object>> clusters;

		KafkaTransactions(String name, List<Map<String, Object>> clusters) {
			this.name = name;
			this.clusters = clusters;
		}

		@Override
		public String name() {
			return this.name;
		}

		@Override
		public Worker worker(int index) {
			List<KafkaProducer<byte[], byte[]>> producers = new ArrayList<>();
			for (int i = 0; i < this.clusters.size(); i++) {
				Map<String, Object> config = new HashMap<>(this.clusters.get(i));
				config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "bench-" + this.name + "-" + i + "-" + index);
				config.put(ProducerConfig.ACKS_CONFIG, "all");
				KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
						new ByteArraySerializer());
				producer.initTransactions();
				producers.add(producer);
			}
			return new Worker() {

				@Override
				public Timing transaction(int size) {
					int[] counts = split(size, producers.size());
					long commitNanos = 0;
					int records = 0;
					for (int i = 0; i < producers.size(); i++) {
						KafkaProducer<byte[], byte[]> producer = producers.get(i);
						producer.beginTransaction();
						try {
							for (int j = 0; j < counts[i]; j++) {
								producer.send(nextRecord());
							}
							long before = System.nanoTime();
							producer.commitTransaction();
							commitNanos += System.nanoTime() - before;
							records += counts[i];
						}
						catch (KafkaException ex) {
							producer.abortTransaction();
							throw ex;
						}
					}
					return new Timing(records, commitNanos);
				}

				@Override
				public void close() {
					producers.forEach((producer) -> producer.close(Duration.ofSeconds(5)));
				}

			};
		}

		@Override
		public void close() {
		}

	}

	/**
	 * Tandem transactions across the first {@code clusterCount} clusters, decided in the
	 * embedded coordinator.
	 */
	private final class TandemTransactions implements Scenario {

		private final String name;

		private final List<String> clusters;

		private final CrossClusterTransactionManager manager;

		TandemTransactions(String name, Map<String, Map<String, Object>> configs, int clusterCount,
				EmbeddedCoordinator coordinator, int slots) {
			this.name = name;
			this.clusters = CLUSTERS.subList(0, clusterCount);
			CrossClusterTransactionManagerBuilder builder = CrossClusterTransactionManager.builder()
				.idPrefix("bench")
				.instanceId(name)
				.slots(slots)
				.decisionLog(coordinator.decisionLog());
			for (String cluster : this.clusters) {
				builder.cluster(cluster, configs.get(cluster));
			}
			this.manager = builder.build();
			this.manager.start();
		}

		@Override
		public String name() {
			return this.name;
		}

		@Override
		public Worker worker(int index) {
			return new Worker() {

				@Override
				public Timing transaction(int size) {
					int[] counts = split(size, TandemTransactions.this.clusters.size());
					CrossClusterTransaction txn = TandemTransactions.this.manager.begin();
					int records = 0;
					try {
						for (int i = 0; i < counts.length; i++) {
							String cluster = TandemTransactions.this.clusters.get(i);
							for (int j = 0; j < counts[i]; j++) {
								txn.send(cluster, nextRecord());
							}
							records += counts[i];
						}
					}
					catch (RuntimeException ex) {
						txn.abort();
						throw ex;
					}
					long before = System.nanoTime();
					txn.commit();
					return new Timing(records, System.nanoTime() - before);
				}

				@Override
				public void close() {
				}

			};
		}

		@Override
		public void close() {
			this.manager.close();
		}

	}

	/** What one slice of one worker measured. */
	private static final class Sample {

		long transactions;

		long records;

		long failed;

		final Latencies transactionLatency = new Latencies();

		final Latencies commitLatency = new Latencies();

		void add(int records, long transactionNanos, long commitNanos) {
			this.transactions++;
			this.records += records;
			this.transactionLatency.add(transactionNanos);
			this.commitLatency.add(commitNanos);
		}

		void addAll(Sample other) {
			this.transactions += other.transactions;
			this.records += other.records;
			this.failed += other.failed;
			this.transactionLatency.addAll(other.transactionLatency);
			this.commitLatency.addAll(other.commitLatency);
		}

	}

	/** One (scenario, size) cell over every round. */
	private static final class Cell {

		final String scenario;

		final int size;

		long transactions;

		long records;

		long failed;

		long elapsedNanos;

		final Latencies transactionLatency = new Latencies();

		final Latencies commitLatency = new Latencies();

		final double[] roundRecordsPerSecond;

		final double[] roundTransactionsPerSecond;

		Cell(String scenario, int size, int rounds) {
			this.scenario = scenario;
			this.size = size;
			this.roundRecordsPerSecond = new double[rounds];
			this.roundTransactionsPerSecond = new double[rounds];
		}

		void add(Sample sample, long elapsed, int round) {
			this.transactions += sample.transactions;
			this.records += sample.records;
			this.failed += sample.failed;
			this.elapsedNanos += elapsed;
			this.transactionLatency.addAll(sample.transactionLatency);
			this.commitLatency.addAll(sample.commitLatency);
			this.roundRecordsPerSecond[round] = sample.records / (elapsed / 1e9);
			this.roundTransactionsPerSecond[round] = sample.transactions / (elapsed / 1e9);
		}

		double recordsPerSecond() {
			return (this.elapsedNanos > 0) ? this.records / (this.elapsedNanos / 1e9) : 0;
		}

		double transactionsPerSecond() {
			return (this.elapsedNanos > 0) ? this.transactions / (this.elapsedNanos / 1e9) : 0;
		}

		String recordsPerTransaction() {
			if (this.transactions == 0) {
				return "-";
			}
			long per = this.records / this.transactions;
			return (per * this.transactions == this.records) ? Long.toString(per)
					: String.format(Locale.ROOT, "%.1f", (double) this.records / this.transactions);
		}

	}

	/** Latencies in nanoseconds; not thread-safe. */
	private static final class Latencies {

		private long[] values = new long[1024];

		private int count;

		void add(long nanos) {
			if (this.count == this.values.length) {
				this.values = Arrays.copyOf(this.values, this.count * 2);
			}
			this.values[this.count++] = nanos;
		}

		void addAll(Latencies other) {
			for (int i = 0; i < other.count; i++) {
				add(other.values[i]);
			}
		}

		long percentile(double quantile) {
			if (this.count == 0) {
				return 0;
			}
			long[] sorted = Arrays.copyOf(this.values, this.count);
			Arrays.sort(sorted);
			return sorted[Math.min(sorted.length - 1, (int) Math.ceil(quantile * sorted.length) - 1)];
		}

	}

}
