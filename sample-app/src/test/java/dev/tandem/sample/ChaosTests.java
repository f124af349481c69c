package dev.tandem.sample;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import dev.tandem.sample.ChaosEnvironment.CoordinatorPeer;
import dev.tandem.test.Directories;
import dev.tandem.test.LatencyProxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The chaos suite (profile {@code chaos}, not in the default build): real processes, one fault
 * per run, an independent check after every run. Kafka cluster east runs in a JVM of its own
 * ({@link ClusterHost}), cluster west as a controller and three brokers in JVMs of their own
 * (tandem-test's {@code KafkaProcessCluster}, so a broker can be killed with {@code SIGKILL}), a
 * 3-peer coordinator runs as three JVMs ({@link CoordinatorHost}), and
 * the flight router ({@link FlightRouterApplication}, the starter app) runs as a separate JVM
 * between them. Each run creates its own topics, writes its input in source transactions of
 * which some abort ({@link InputLoader}), starts the router, injects one {@link Fault}, lets a
 * clean router finish where one was killed, and hands everything to {@link Verification}: lost,
 * duplicated, aborted-but-visible, out-of-order per key, mirrored aborted source records,
 * committed source offsets versus input, {@code read_committed} counts by the Java client and by
 * kcat, what the killed transaction must and must not have left, where the restarted router
 * resumed, and whether a heuristic outcome was reported exactly when expected.
 * <p>
 * Link: a {@link LatencyProxy} of 20 ms each way sits in front of every west broker's client
 * listener; the router of a {@link Fault#LINK_CUT_WEST} run reaches west through them (a
 * 40 ms round trip, as between regions), every other client reaches west directly.
 * <p>
 * Coordinator: the router uses the remote 3-peer coordinator on even repetitions of a fault and
 * its default embedded peer (whose Raft log must survive the router's {@code kill -9}) on odd
 * ones; {@link Fault#COORDINATOR_LEADER_KILL}, {@link Fault#INSTANCE_NEVER_RETURNS} and
 * {@link Fault#DUPLICATE_INSTANCE_ID} always use the remote one (takeover and the duplicate-id
 * check need the log the instances share).
 * <p>
 * {@code mvn -B -Pchaos -pl sample-app verify -Dchaos.runs=40}; runs are spread evenly over the
 * faults. {@code -Dchaos.faults=HALT_MID_COMMIT,KILL_AT_RANDOM} picks faults,
 * {@code -Dchaos.faults=DATABASE} every database fault: Tandem's router with a database participant
 * (a row per flight, {@link FlightLedger}) and the same kills against {@link BestEffortRouter}
 * (Spring's chained managers), checked by {@link DatabaseCheck} as well (rows without records,
 * records without rows, duplicates); the database faults run only when named. A best-effort run
 * passes when its router halted where asked and a second one finished: its anomalies are counted,
 * not failed. {@code -Dchaos.seed} the random seed, {@code -Dchaos.records} the records of an app-kill run,
 * {@code -Dchaos.link-cut-seconds} how long {@link Fault#LINK_CUT_WEST} cuts the link (15).
 */
@Tag("chaos")
class ChaosTests {

	private static final int RECORDS = Integer.getInteger("chaos.records", 120);

	/** Records per source transaction of an app-kill run's input. */
	private static final int LOAD_CHUNK = 40;

	private static final int PARTITIONS = 3;

	/** Every how many input records one is poison in a POISON_RECORD run. */
	private static final int POISON_EVERY = 20;

	/** Records per poll, so per transaction at most. */
	private static final int MAX_POLL = 20;

	/** Transaction slots of a router: two for the pipeline (depth 2), one to spare. */
	private static final int SLOTS = 5;

	private static final Duration TIMEOUT = Duration.ofMinutes(3);

	private static final Duration POLL = Duration.ofMillis(200);

	/**
	 * How long {@link Fault#LINK_CUT_WEST} keeps the link cut: longer than the clients'
	 * {@code request.timeout.ms} (10 s in Tandem's failover profile), so requests in flight time
	 * out and the clients reconnect into the cut; shorter than the commit timeout (30 s).
	 */
	private static final Duration LINK_CUT = Duration.ofSeconds(Long.getLong("chaos.link-cut-seconds", 15));

	/**
	 * West producers' {@code delivery.timeout.ms} in the {@link Fault#LINK_CUT_WEST} runs whose
	 * router gives up on the cut link: above {@code request.timeout.ms} (10 s), as Kafka
	 * requires, below {@link #LINK_CUT}.
	 */
	private static final Duration GIVE_UP = Duration.ofSeconds(12);

	private static final Path RUNS = ChaosEnvironment.WORK.resolve("runs");

	private static final Regions REGIONS = Regions.load();

	private static ChaosEnvironment env;

	private static InputLoader loader;

	enum Kind {

		/** The router's JVM dies; a clean router is started after it. */
		APP,

		/** Brokers or coordinator peers fail while one router runs on. */
		INFRA

	}

	/** What the router writes, and with what. */
	enum Setup {

		/** Tandem's router, records on the clusters only. */
		KAFKA,

		/** Tandem's router with a database participant: a row per flight in the same transaction. */
		DATABASE,

		/** {@link BestEffortRouter}: rows and records by Spring's chained managers, no Tandem. */
		BEST_EFFORT

	}

	enum Fault {

		HALT_BEFORE_PREPARE(Kind.APP, "BEFORE_PREPARE", "router kill -9 after sending offsets, before prepare"),

		HALT_AFTER_PREPARE(Kind.APP, "AFTER_PREPARE", "router kill -9 after prepare, before the decision"),

		HALT_AFTER_DECISION(Kind.APP, "AFTER_DECISION", "router kill -9 after the decision, before any commit"),

		HALT_MID_COMMIT(Kind.APP, "MID_COMMIT", "router kill -9 with one participant committed"),

		HALT_AFTER_COMMIT(Kind.APP, "AFTER_COMMIT", "router kill -9 after every commit (the decision is replayed)"),

		KILL_AT_RANDOM(Kind.APP, null, "router SIGKILL at a random moment"),

		HEURISTIC_TIMEOUT(Kind.APP, "AFTER_DECISION",
				"router down longer than transaction.timeout.ms after its decision"),

		LEADER_BROKER_RESTART(Kind.INFRA, null, "leader broker of an output partition stopped and restarted"),

		LEADER_BROKER_KILL(Kind.INFRA, null, "leader broker of an output partition kill -9, restarted later"),

		ROLLING_RESTART_WEST(Kind.INFRA, null, "controller and every broker of west restarted in turn"),

		COORDINATOR_LEADER_KILL(Kind.INFRA, null, "coordinator leader peer kill -9, restarted later"),

		INSTANCE_NEVER_RETURNS(Kind.APP, "AFTER_DECISION",
				"router kill -9 (after prepare, after the decision or mid-commit, in turn); it never returns: a second "
						+ "instance with its own id takes it over when its lease expires"),

		DUPLICATE_INSTANCE_ID(Kind.INFRA, null,
				"a second router with the running router's instance id starts: it must be refused at start-up"),

		POISON_RECORD(Kind.APP, null, "every 20th input record fails the batch listener: it alone goes to the "
				+ "dead-letter topic with its offset, every good record of its batch is written once"),

		LINK_CUT_WEST(Kind.INFRA, null, "the router reaches west over a 40 ms link; mid-run the link is cut for "
				+ "chaos.link-cut-seconds (15 s), stalled (connections kept, nothing passes) or dropped (every connection "
				+ "reset, new ones silent) in turn, then healed; repetitions 2 and 3 of 4 with west's delivery.timeout.ms "
				+ "12 s (a pending send fails, its transaction rewinds): the router must resume by itself"),

		DB_HALT_AFTER_PREPARE(Kind.APP, "AFTER_PREPARE", Setup.DATABASE,
				"router with a database: kill -9 after every participant prepared (the database's XA branch too), before "
						+ "the decision"),

		DB_HALT_AFTER_DECISION(Kind.APP, "AFTER_DECISION", Setup.DATABASE,
				"router with a database: kill -9 after the decision, the database's branch prepared, nothing committed"),

		DB_HALT_MID_COMMIT(Kind.APP, "MID_COMMIT", Setup.DATABASE,
				"router with a database: kill -9 with one cluster committed, the database's branch still prepared"),

		DB_KILL_AT_RANDOM(Kind.APP, null, Setup.DATABASE, "router with a database: SIGKILL at a random moment"),

		DB_RESTART(Kind.INFRA, null, Setup.DATABASE, "router with a database: once it committed, the database is stopped "
				+ "(its sessions dropped, prepared branches kept) and started again; branches mid-commit are committed by "
				+ "the in-doubt retries"),

		BEST_EFFORT_AFTER_DATABASE_COMMIT(Kind.APP, "AFTER_DATABASE_COMMIT", Setup.BEST_EFFORT,
				"best-effort one-phase router (Spring's chained managers, no Tandem): kill -9 after the database "
						+ "committed, before either cluster"),

		BEST_EFFORT_MID_COMMIT(Kind.APP, "MID_COMMIT", Setup.BEST_EFFORT,
				"best-effort one-phase router: kill -9 after the database and west committed, before east (its records "
						+ "and the offsets)"),

		BEST_EFFORT_KILL_AT_RANDOM(Kind.APP, null, Setup.BEST_EFFORT,
				"best-effort one-phase router: SIGKILL at a random moment");

		final Kind kind;

		final @Nullable String step;

		final Setup setup;

		final String description;

		Fault(Kind kind, @Nullable String step, String description) {
			this(kind, step, Setup.KAFKA, description);
		}

		Fault(Kind kind, @Nullable String step, Setup setup, String description) {
			this.kind = kind;
			this.step = step;
			this.setup = setup;
			this.description = description;
		}

	}

	enum Mode {

		REMOTE, EMBEDDED,

		/** No Tandem, so no coordinator: the best-effort router. */
		NONE

	}

	@BeforeAll
	static void startProcesses() throws Exception {
		long start = System.nanoTime();
		env = ChaosEnvironment.start();
		loader = new InputLoader(env.east.bootstrap);
		System.out.printf("chaos: clusters and 3 coordinator peers up in %.1f s (load %s)%n", seconds(start), loadAverage());
		warmUp();
	}

	@AfterAll
	static void stopProcesses() {
		if (loader != null) {
			loader.close();
		}
		if (env != null) {
			env.close();
		}
	}

	/**
	 * A run without a fault: records the router's CDS archive if needed, and runs the checker
	 * as a command, which must pass (exit 0) and fail on a group that committed nothing (exit 1).
	 */
	private static void warmUp() throws Exception {
		long start = System.nanoTime();
		boolean record = !env.routers.archived();
		Run run = new Run(-1, null, Mode.EMBEDDED);
		run.createTopics();
		run.loaded = loader.load(run.input, PARTITIONS, run.runId, 60, LOAD_CHUNK);
		Process router = run.startRouter(env.routers.launch(run.log("a"), record), "a", List.of());
		run.awaitDone(router);
		router.destroy();
		assertThat(router.waitFor(2, TimeUnit.MINUTES)).as("router stopped").isTrue();
		if (record) {
			env.routers.keepArchive();
		}
		List<String> cli = new ArrayList<>(List.of(ChaosEnvironment.javaBin(), "-cp", System.getProperty("java.class.path"),
				Verification.class.getName(), "--cluster", "east=" + env.east.bootstrap, "--cluster",
				"west=" + env.west.bootstrapServers(), "--run-id", run.runId, "--input", run.input, "--output", run.output,
				"--records", String.valueOf(run.loaded.committed), "--router-log", run.log("a").toString()));
		List<String> wrongGroup = new ArrayList<>(cli);
		cli.addAll(List.of("--group", run.group));
		wrongGroup.addAll(List.of("--group", "nobody"));
		Process pass = new ProcessBuilder(cli).redirectErrorStream(true).redirectOutput(run.dir.resolve("check.txt").toFile())
			.start();
		Process fail = new ProcessBuilder(wrongGroup).redirectErrorStream(true)
			.redirectOutput(run.dir.resolve("check-wrong-group.txt").toFile())
			.start();
		assertThat(pass.waitFor(3, TimeUnit.MINUTES) && fail.waitFor(3, TimeUnit.MINUTES)).isTrue();
		assertThat(pass.exitValue()).as(Files.readString(run.dir.resolve("check.txt"))).isZero();
		assertThat(fail.exitValue()).as(Files.readString(run.dir.resolve("check-wrong-group.txt"))).isEqualTo(1);
		System.out.printf("chaos: warm-up run passed (checker command: exit 0; on a wrong group: exit 1)%s in %.1f s%n",
				record ? ", CDS archive recorded" : "", seconds(start));
	}

	@Test
	void everyFaultRunEndsWithNothingLostDuplicatedOrAbortedVisible() throws Exception {
		List<Fault> faults = faults();
		int runs = Integer.getInteger("chaos.runs", faults.size() * 2);
		Random random = new Random(Long.getLong("chaos.seed", 42L));
		Map<String, Row> table = new LinkedHashMap<>();
		Map<String, double[]> phases = new LinkedHashMap<>();
		List<String> failures = new ArrayList<>();
		long start = System.nanoTime();
		CompletableFuture<Run> next = prepare(0, faults);
		for (int index = 0; index < runs; index++) {
			int following = index + 1;
			long waiting = System.nanoTime();
			Run run = next.join();
			run.timeline.put("wait for preparation", seconds(waiting));
			// The next run's topics, input and router JVM are prepared while this run is checked.
			CompletableFuture<Run> prepared = new CompletableFuture<>();
			next = prepared;
			run.execute(random, () -> {
				if (following < runs) {
					prepare(following, faults).whenComplete((r, ex) -> {
						if (ex != null) {
							prepared.completeExceptionally(ex);
						}
						else {
							prepared.complete(r);
						}
					});
				}
			});
			Fault fault = run.fault;
			Mode mode = run.mode;
			Row row = table.computeIfAbsent(fault + " " + mode.name().toLowerCase(Locale.ROOT), (k) -> new Row());
			row.add(run);
			run.timeline.forEach((phase, seconds) -> {
				double[] sum = phases.computeIfAbsent(phase, (p) -> new double[2]);
				sum[0] += seconds;
				sum[1]++;
			});
			run.prepareTimeline.forEach((phase, seconds) -> {
				double[] sum = phases.computeIfAbsent("ahead: " + phase, (p) -> new double[2]);
				sum[0] += seconds;
				sum[1]++;
			});
			if (!run.problems.isEmpty()) {
				failures.add("run " + index + " " + fault + " " + mode + ": " + run.problems);
			}
			String line = run.summary();
			System.out.println(line);
			Files.writeString(ChaosEnvironment.WORK.resolve("runs.log"), line + System.lineSeparator(),
					StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
			// Rewritten after every run, so an interrupted lot still leaves its table.
			Files.writeString(ChaosEnvironment.WORK.resolve("chaos-table.md"), report(table, phases, index + 1,
					seconds(start)), StandardCharsets.UTF_8);
		}
		String report = report(table, phases, runs, seconds(start));
		System.out.println(report);
		assertThat(failures).isEmpty();
	}

	private static CompletableFuture<Run> prepare(int index, List<Fault> faults) {
		Fault fault = faults.get(index % faults.size());
		int repetition = index / faults.size();
		// Takeover and the duplicate-id check need the coordinator the instances share.
		boolean remoteOnly = EnumSet.of(Fault.COORDINATOR_LEADER_KILL, Fault.INSTANCE_NEVER_RETURNS,
				Fault.DUPLICATE_INSTANCE_ID).contains(fault);
		Mode mode = (fault.setup == Setup.BEST_EFFORT) ? Mode.NONE
				: (remoteOnly || repetition % 2 == 0) ? Mode.REMOTE : Mode.EMBEDDED;
		Run run = new Run(index, fault, mode);
		// how many runs of this fault came before: a fault may be listed several times in chaos.faults
		int position = index % faults.size();
		run.repetition = repetition * Collections.frequency(faults, fault)
				+ Collections.frequency(faults.subList(0, position), fault);
		return CompletableFuture.supplyAsync(() -> {
			run.prepare();
			return run;
		}, ChaosEnvironment.BACKGROUND);
	}

	private static List<Fault> faults() {
		String selected = System.getProperty("chaos.faults", "");
		if (selected.isBlank()) {
			// the database faults run only when named (or with DATABASE, every one of them)
			return Arrays.stream(Fault.values()).filter((fault) -> fault.setup == Setup.KAFKA).toList();
		}
		return Arrays.stream(selected.split(",")).map(String::trim).flatMap((name) -> name.equals("DATABASE")
				? Arrays.stream(Fault.values()).filter((fault) -> fault.setup != Setup.KAFKA)
				: java.util.stream.Stream.of(Fault.valueOf(name))).toList();
	}

	private static String report(Map<String, Row> table, Map<String, double[]> phases, int runs, double seconds) {
		StringBuilder out = new StringBuilder();
		boolean database = table.keySet().stream().anyMatch((name) -> Fault.valueOf(name.split(" ")[0]).setup != Setup.KAFKA);
		out.append(String.format("%n| fault | coordinator | runs | passed | lost | duplicated | aborted-but-visible | "
				+ "out-of-order keys | aborted source mirrored | heuristics reported | %smean s/run |%n",
				database ? "rows without records | records without rows | duplicate rows | torn transactions' records + rows | " : ""));
		out.append(database ? "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n" : "|---|---|---|---|---|---|---|---|---|---|---|\n");
		Row total = new Row();
		Map<String, Row> sorted = new TreeMap<>(java.util.Comparator
			.comparing((String name) -> Fault.valueOf(name.split(" ")[0]).ordinal())
			.thenComparing((String name) -> name.split(" ")[1], java.util.Comparator.reverseOrder()));
		sorted.putAll(table);
		sorted.forEach((name, row) -> {
			String[] parts = name.split(" ");
			out.append(String.format("| %s | %s | %s |%n", parts[0], parts[1], row.cells(database)));
			total.merge(row);
		});
		out.append(String.format("| all | | %s |%n", total.cells(database)));
		out.append(String.format("%nfaults:%n"));
		for (Fault fault : Fault.values()) {
			if (fault.setup == Setup.KAFKA || database) {
				out.append(String.format("  %-24s %s%n", fault, fault.description));
			}
		}
		out.append(String.format("%n%d runs in %.0f s (%.1f s per run); load average at the end %s%n", runs, seconds,
				seconds / Math.max(1, runs), loadAverage()));
		out.append("mean seconds per phase (over the runs that have it; 'ahead:' phases overlap the previous run's check):\n");
		phases.forEach((phase, sum) -> out.append(String.format("  %-34s %6.1f  (%d runs)%n", phase, sum[0] / sum[1],
				(int) sum[1])));
		return out.toString();
	}

	static String loadAverage() {
		try {
			return Files.readString(Path.of("/proc/loadavg")).trim();
		}
		catch (IOException ex) {
			return "unknown";
		}
	}

	private static double seconds(long startNanos) {
		return (System.nanoTime() - startNanos) / 1e9;
	}

	/**
	 * Counts of one table row.
	 */
	private static final class Row {

		int runs;

		int passed;

		long lost;

		long duplicated;

		long abortedVisible;

		long outOfOrder;

		long mirrored;

		long heuristics;

		long rowsWithoutRecords;

		long recordsWithoutRows;

		long duplicateRows;

		long torn;

		double seconds;

		void add(Run run) {
			this.runs++;
			this.passed += run.problems.isEmpty() ? 1 : 0;
			this.lost += run.fact("lost");
			this.duplicated += run.fact("duplicated");
			this.abortedVisible += run.fact("aborted-but-visible transactions");
			this.outOfOrder += run.fact("keys out of input order");
			this.mirrored += run.fact("mirrored records of aborted source transactions");
			this.heuristics += run.fact("heuristic outcomes reported");
			this.rowsWithoutRecords += run.fact(DatabaseCheck.ROWS_WITHOUT_RECORDS);
			this.recordsWithoutRows += run.fact(DatabaseCheck.RECORDS_WITHOUT_ROWS);
			this.duplicateRows += run.fact(DatabaseCheck.DUPLICATE_ROWS);
			this.torn += run.fact(DatabaseCheck.TORN_RECORDS) + run.fact(DatabaseCheck.TORN_ROWS);
			this.seconds += run.seconds;
		}

		void merge(Row row) {
			this.runs += row.runs;
			this.passed += row.passed;
			this.lost += row.lost;
			this.duplicated += row.duplicated;
			this.abortedVisible += row.abortedVisible;
			this.outOfOrder += row.outOfOrder;
			this.mirrored += row.mirrored;
			this.heuristics += row.heuristics;
			this.rowsWithoutRecords += row.rowsWithoutRecords;
			this.recordsWithoutRows += row.recordsWithoutRows;
			this.duplicateRows += row.duplicateRows;
			this.torn += row.torn;
			this.seconds += row.seconds;
		}

		String cells(boolean database) {
			return String.format("%d | %d | %d | %d | %d | %d | %d | %d | %s%.1f", this.runs, this.passed, this.lost,
					this.duplicated, this.abortedVisible, this.outOfOrder, this.mirrored, this.heuristics,
					database ? this.rowsWithoutRecords + " | " + this.recordsWithoutRows + " | " + this.duplicateRows + " | "
							+ this.torn + " | " : "",
					this.seconds / Math.max(1, this.runs));
		}

	}

	/**
	 * One fault run: its topics, group, router incarnations, timeline and findings.
	 */
	private static final class Run {

		final int index;

		final @Nullable Fault fault;

		final Mode mode;

		final String runId;

		final String input;

		final String output;

		final String group;

		final String instanceId;

		final Path dir;

		final Map<String, Double> timeline = new LinkedHashMap<>();

		/** Phases prepared while the previous run was checked (off the critical path). */
		final Map<String, Double> prepareTimeline = new LinkedHashMap<>();

		final List<String> problems = new ArrayList<>();

		final List<String> incarnations = new ArrayList<>();

		final List<Process> routers = new ArrayList<>();

		ChaosEnvironment.@Nullable Standby standby;

		@Nullable Exception preparation;

		final Map<String, Object> facts = new LinkedHashMap<>();

		final List<String> notes = new ArrayList<>();

		InputLoader.Loaded loaded;

		/** How many runs of the same fault came before this one. */
		int repetition;

		double seconds;

		private long mark = System.nanoTime();

		Run(int index, @Nullable Fault fault, Mode mode) {
			this.index = index;
			this.fault = fault;
			this.mode = mode;
			String name = (index < 0) ? "warmup" : String.format("%03d", index);
			this.runId = "run-" + name + "-" + Long.toHexString(System.nanoTime() & 0xffffff);
			this.input = "in-" + name;
			this.output = "out-" + name;
			this.group = "router-" + name;
			this.instanceId = "chaos-" + name;
			this.dir = RUNS.resolve("run-" + name);
		}

		/**
		 * Creates the run's topics and, for an app fault, writes its input and launches the
		 * first router's JVM; failures are kept for {@link #execute}.
		 */
		void prepare() {
			try {
				// A run of the same number in an earlier lot kept its directory: its coordinator log
				// would be this run's, with that run's transactions and instance lease.
				Directories.deleteRecursively(this.dir);
				createTopics();
				if (this.fault.kind == Kind.APP) {
					this.loaded = loader.load(this.input, PARTITIONS, this.runId, RECORDS, LOAD_CHUNK,
							(this.fault == Fault.POISON_RECORD) ? POISON_EVERY : 0);
					mark("load");
				}
				if (this.fault.setup != Setup.BEST_EFFORT) {
					this.standby = env.routers.launch(log("a"), false);
					mark("router JVM launch");
				}
			}
			catch (Exception ex) {
				this.preparation = ex;
			}
			this.prepareTimeline.putAll(this.timeline);
			this.timeline.clear();
		}

		void execute(Random random, Runnable whenChecking) {
			long start = System.nanoTime();
			this.mark = start;
			boolean checking = false;
			try {
				if (this.preparation != null) {
					throw this.preparation;
				}
				if (this.fault.kind == Kind.APP) {
					appFault(random);
				}
				else {
					infraFault(random);
				}
				this.routers.forEach(Process::destroy); // graceful stop, while the checker reads
				checking = true;
				whenChecking.run();
				verify();
				for (Process router : this.routers) {
					if (!router.waitFor(2, TimeUnit.MINUTES)) {
						this.problems.add("a router did not stop within 2 minutes of SIGTERM");
					}
				}
				mark("router stop");
				if (this.problems.isEmpty()) {
					deleteTopics();
				}
			}
			catch (Exception | AssertionError ex) {
				this.problems.add("run aborted: " + ex);
			}
			finally {
				this.routers.forEach(Process::destroyForcibly);
				if (this.standby != null) {
					this.standby.process.destroyForcibly();
				}
				this.seconds = seconds(start) + this.timeline.getOrDefault("wait for preparation", 0.0);
				if (!checking) {
					whenChecking.run();
				}
			}
		}

		void createTopics() {
			CompletableFuture<Void> east = CompletableFuture.runAsync(() -> {
				env.createTopic(Regions.EAST, this.input, PARTITIONS);
				env.createTopic(Regions.EAST, this.output, PARTITIONS);
			}, ChaosEnvironment.BACKGROUND);
			env.createTopic(Regions.WEST, this.output, PARTITIONS);
			if (this.fault == Fault.POISON_RECORD) {
				env.createTopic(Regions.EAST, this.input + "-dlt", PARTITIONS);
			}
			east.join();
			mark("topics");
		}

		private void deleteTopics() {
			// Kept when the run failed, for inspection; deleted otherwise so brokers stay small.
			env.eastAdmin.deleteTopics((this.fault == Fault.POISON_RECORD) ? List.of(this.input, this.output, this.input + "-dlt")
					: List.of(this.input, this.output));
			env.westAdmin.deleteTopics(List.of(this.output));
		}

		private void appFault(Random random) throws Exception {
			if (this.fault.setup == Setup.BEST_EFFORT) {
				bestEffortFault(random);
				return;
			}
			if (this.fault == Fault.POISON_RECORD) {
				Process router = startRouter(this.standby, "a", List.of("--tandem.listener.failed-record=dead-letter",
						"--tandem.listener.attempts=2", "--tandem.listener.back-off=50ms"));
				this.standby = null;
				awaitDone(router);
				mark("router a: every batch, poison ones narrowed");
				return;
			}
			List<String> extra = new ArrayList<>();
			int haltAt = 2 + random.nextInt(4);
			String step = haltStep();
			if (step != null) {
				extra.add("--flights.halt-at-step=" + step);
				extra.add("--flights.halt-at-transaction=" + haltAt);
				// One delivery per transaction: a transaction spanning deliveries (the default) can
				// route the whole input in fewer than haltAt transactions, and the halt would never
				// come. The other faults run with the default.
				extra.add("--tandem.listener.max-records=" + MAX_POLL);
				extra.add("--tandem.listener.growth=1");
			}
			if (this.fault == Fault.HEURISTIC_TIMEOUT) {
				extra.add("--tandem.transaction.timeout=5s");
			}
			Process first = startRouter(this.standby, "a", extra);
			// The second router's JVM starts now, so it is up when the first one dies.
			this.standby = env.routers.launch(log("b"), false);
			if (step != null) {
				await().atMost(TIMEOUT).pollInterval(POLL).until(() -> !first.isAlive() || done());
				if (first.isAlive()) {
					this.problems.add("router did not reach " + step + " " + haltAt + " times (too few transactions)");
					return;
				}
				if (first.exitValue() != 137 || !Files.readString(log("a")).contains("HALT at " + step)) {
					this.problems.add("router exited " + first.exitValue() + " instead of halting at " + step);
					return;
				}
				mark("router a: start to halt");
			}
			else {
				await().atMost(TIMEOUT).pollInterval(POLL).until(() -> progress(first) > 0);
				// The fault itself: SIGKILL at a random moment of the run, not a wait for a condition.
				Thread.sleep(random.nextInt(1500));
				first.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
				this.notes.add("killed with " + env.committed(this.group, this.loaded.afterLastRecord.keySet()) + " of "
						+ this.loaded.target() + " offsets committed");
				mark("router a: start to kill");
			}
			if (this.fault == Fault.HEURISTIC_TIMEOUT) {
				awaitBrokersAbortedTransactions();
				mark("transaction timeout");
			}
			// An instance that never returns: the second router is another instance of the app.
			String secondInstance = (this.fault == Fault.INSTANCE_NEVER_RETURNS) ? this.instanceId + "-other"
					: this.instanceId;
			Process second = startRouter(this.standby, "b", List.of(), secondInstance);
			this.standby = null;
			awaitDone(second);
			mark((this.fault == Fault.INSTANCE_NEVER_RETURNS) ? "router b: takeover, rest"
					: "router b: start, recovery, rest");
		}

		/**
		 * The same kills against {@link BestEffortRouter}: the first one halts at the fault's step
		 * of a transaction (or is killed at a random moment), a second one finishes the input.
		 */
		private void bestEffortFault(Random random) throws Exception {
			int haltAt = 2 + random.nextInt(4);
			String step = this.fault.step;
			Process first = startBestEffort("a", (step != null) ? List.of("--halt-at-step=" + step,
					"--halt-at-transaction=" + haltAt) : List.of());
			if (step != null) {
				await().atMost(TIMEOUT).pollInterval(POLL).until(() -> !first.isAlive() || done());
				if (first.isAlive()) {
					this.problems.add("router did not reach " + step + " " + haltAt + " times (too few transactions)");
					return;
				}
				if (first.exitValue() != 137 || !Files.readString(log("a")).contains("HALT at " + step)) {
					this.problems.add("router exited " + first.exitValue() + " instead of halting at " + step);
					return;
				}
				mark("router a: start to halt");
			}
			else {
				await().atMost(TIMEOUT).pollInterval(POLL).until(() -> progress(first) > 0);
				// The fault itself: SIGKILL at a random moment of the run, not a wait for a condition.
				Thread.sleep(random.nextInt(1500));
				first.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
				mark("router a: start to kill");
			}
			Process second = startBestEffort("b", List.of());
			awaitDone(second);
			mark("router b: start, rest");
		}

		Process startBestEffort(String incarnation, List<String> extra) throws Exception {
			List<String> args = new ArrayList<>(List.of("--east=" + env.east.bootstrap, "--west=" + env.west.bootstrapServers(),
					"--input=" + this.input, "--output=" + this.output, "--group=" + this.group, "--run-id=" + this.runId,
					"--incarnation=" + incarnation, "--instance=" + this.instanceId, "--database-url=" + env.databaseUrl()));
			args.addAll(extra);
			Process router = env.routers.bestEffort(log(incarnation), args);
			this.routers.add(router);
			this.incarnations.add(incarnation);
			return router;
		}

		/** The protocol step the first router halts at; INSTANCE_NEVER_RETURNS takes three in turn. */
		private @Nullable String haltStep() {
			if (this.fault != Fault.INSTANCE_NEVER_RETURNS) {
				return this.fault.step;
			}
			List<String> steps = List.of("AFTER_PREPARE", "AFTER_DECISION", "MID_COMMIT");
			return steps.get(this.repetition % steps.size());
		}

		private void infraFault(Random random) throws Exception {
			AtomicBoolean stop = new AtomicBoolean();
			CompletableFuture<InputLoader.Loaded> trickle = loader.trickle(this.input, PARTITIONS, this.runId, 5,
					Duration.ofMillis(100), stop);
			try {
				Process router = startRouter(this.standby, "a", linkGivesUp()
						? List.of("--tandem.clusters.west.producer.delivery.timeout.ms=" + GIVE_UP.toMillis()) : List.of());
				this.standby = null;
				await().atMost(TIMEOUT).pollInterval(POLL).until(() -> progress(router) > 0);
				mark("router a: start to first commit");
				switch (this.fault) {
					case LEADER_BROKER_RESTART, LEADER_BROKER_KILL -> {
						TopicPartition partition = new TopicPartition(this.output, random.nextInt(PARTITIONS));
						int leader = env.west.leader(partition);
						if (this.fault == Fault.LEADER_BROKER_KILL) {
							env.west.kill(leader);
						}
						else {
							env.west.stop(leader);
						}
						awaitMoreProgress(router);
						env.west.restart(leader);
						awaitFullIsr();
						this.notes.add("west broker " + leader + " (leader of " + partition + ") "
								+ ((this.fault == Fault.LEADER_BROKER_KILL) ? "killed" : "stopped") + " and restarted");
					}
					case ROLLING_RESTART_WEST -> env.west.rollingRestart(Map.of());
					case DUPLICATE_INSTANCE_ID -> {
						ChaosEnvironment.Standby standby = env.routers.launch(log("dup"), false);
						Process duplicate = startRouter(standby, "dup", List.of());
						if (!duplicate.waitFor(2, TimeUnit.MINUTES)) {
							this.problems.add("the router with a duplicate instance id did not stop within 2 minutes");
						}
						else if (duplicate.exitValue() == 0
								|| !Files.readString(log("dup")).contains("tandem.transaction.instance-id")) {
							this.problems.add("the router with a duplicate instance id exited " + duplicate.exitValue()
									+ " without naming tandem.transaction.instance-id");
						}
						else {
							this.notes.add("duplicate instance refused at start-up, naming tandem.transaction.instance-id");
						}
						this.routers.remove(duplicate);
						this.incarnations.remove("dup");
					}
					case LINK_CUT_WEST -> cutLink(router);
					case DB_RESTART -> {
						double down = env.restartDatabase();
						this.notes.add(String.format(Locale.ROOT, "database stopped and started again in %.1f s", down));
					}
					case COORDINATOR_LEADER_KILL -> {
						CoordinatorPeer leader = env.coordinatorLeader();
						leader.kill();
						awaitMoreProgress(router);
						leader.start();
						await().atMost(TIMEOUT).pollInterval(POLL).until(leader::joined);
						this.notes.add("coordinator leader " + leader.id + " killed and restarted");
					}
					default -> throw new IllegalStateException("not an infrastructure fault: " + this.fault);
				}
				mark("fault");
				awaitMoreProgress(router);
				stop.set(true);
				this.loaded = trickle.join();
				awaitDone(router);
				mark("finish");
			}
			finally {
				stop.set(true);
			}
		}

		/**
		 * Whether this {@link Fault#LINK_CUT_WEST} run's router gives up on west during the cut:
		 * repetitions 2 and 3 of every 4 set west's producers' {@code delivery.timeout.ms} to
		 * {@link #GIVE_UP}, below the cut, so a send pending on the cut link fails, its transaction
		 * aborts and the pipeline rewinds; with the defaults (120 s) the sends wait for the heal.
		 */
		private boolean linkGivesUp() {
			return this.fault == Fault.LINK_CUT_WEST && (this.repetition / 2) % 2 == 1;
		}

		/**
		 * Cuts the router's link to west (every broker's proxy) for {@link #LINK_CUT}, then heals
		 * it: even repetitions stall it (connections stay open, nothing passes either way, as in a
		 * partition), odd ones reset every connection and leave new ones silent. Records how long
		 * after the heal the router's group committed again.
		 */
		private void cutLink(Process router) throws Exception {
			boolean drop = this.repetition % 2 == 1;
			List<LatencyProxy> link = env.west.brokerIds().stream().map(env.west::latencyProxy).toList();
			long before = progress(router);
			long logBefore = Files.size(log("a"));
			link.forEach(LatencyProxy::stall);
			int dropped = drop ? link.stream().mapToInt(LatencyProxy::dropConnections).sum() : 0;
			mark("router a: first commit to cut");
			// The fault itself: the link stays cut this long, not until a condition.
			Thread.sleep(LINK_CUT.toMillis());
			long atHeal = progress(router);
			link.forEach(LatencyProxy::resume);
			long healed = System.nanoTime();
			mark("cut");
			await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50)).until(() -> progress(router) > atHeal);
			double toCommit = seconds(healed);
			byte[] written = Files.readAllBytes(log("a"));
			String during = new String(written, (int) logBefore, written.length - (int) logBefore, StandardCharsets.UTF_8);
			long warnings = during.lines().filter((line) -> line.contains(" WARN ") || line.contains(" ERROR ")).count();
			this.facts.put("offsets committed during the cut", atHeal - before);
			this.facts.put("seconds from heal to commit", toCommit);
			this.facts.put("router warnings and errors from cut to commit", warnings);
			this.notes.add(String.format(Locale.ROOT, "link to west %s for %d s (%d connection(s) reset; west's "
					+ "delivery.timeout.ms %s), %d offsets committed during the cut, first commit %.2f s after the heal, "
					+ "%d router WARN/ERROR lines", drop ? "dropped" : "stalled", LINK_CUT.toSeconds(), dropped,
					linkGivesUp() ? GIVE_UP.toMillis() + " ms: the router gives up" : "default: sends wait",
					atHeal - before, toCommit, warnings));
		}

		private void verify() throws Exception {
			if (this.fault.setup != Setup.KAFKA) {
				DatabaseCheck check = new DatabaseCheck(env.bootstrapServers(), this.runId, this.output, env.databaseUrl(),
						this.loaded.committed);
				this.facts.putAll(check.facts());
				if (this.fault.setup == Setup.BEST_EFFORT) {
					// the baseline's anomalies are what it is measured for, not a failure of the run
					this.facts.put("lost", check.facts().get(DatabaseCheck.MISSING));
					this.facts.put("duplicated", check.facts().get(DatabaseCheck.DUPLICATE_RECORDS));
					this.notes.add("best-effort anomalies: " + check.anomalies() + " " + check.facts());
					mark("verify");
					return;
				}
				if (check.anomalies() > 0) {
					this.problems.add("database check: " + check.facts() + (check.torn().isEmpty() ? ""
							: "; torn transactions (what has no counterpart): " + check.torn()));
				}
			}
			Verification verification = new Verification(env.bootstrapServers(), this.runId, this.input, this.output)
				.routerLogs(this.incarnations.stream().map(this::log).toList(), this.fault == Fault.HEURISTIC_TIMEOUT)
				.incarnations(this.incarnations);
			if (this.fault == Fault.POISON_RECORD) {
				verification.deadLetters(this.input + "-dlt");
			}
			// poison records are consumed but never routed (the checker counts them apart)
			verification.verify(REGIONS, this.loaded.committed - this.loaded.poison, Verification.endOffsets(env.east.bootstrap, this.input),
					this.group);
			this.facts.putAll(verification.facts());
			this.problems.addAll(verification.problems());
			this.notes.addAll(verification.explained());
			mark("verify");
		}

		Path log(String incarnation) {
			return this.dir.resolve("router-" + incarnation + ".log");
		}

		Process startRouter(ChaosEnvironment.Standby standby, String incarnation, List<String> extra) throws IOException {
			return startRouter(standby, incarnation, extra, this.instanceId);
		}

		Process startRouter(ChaosEnvironment.Standby standby, String incarnation, List<String> extra, String instance)
				throws IOException {
			List<String> args = new ArrayList<>(List.of("--tandem.clusters.east.bootstrap-servers=" + env.east.bootstrap,
					// over the 40 ms link (the proxies) only where the fault cuts it
					"--tandem.clusters.west.bootstrap-servers=" + ((this.fault == Fault.LINK_CUT_WEST)
							? env.west.clientBootstrapServers() : env.west.bootstrapServers()),
					"--tandem.clusters.east.consumer.max.poll.records=" + MAX_POLL,
					// Static membership (KIP-345): a restarted router takes its partitions back at once
					"--tandem.clusters.east.consumer.group.instance.id=" + instance,
					// A static member that never returns keeps its partitions until its session times out.
					"--tandem.clusters.east.consumer.session.timeout.ms=6000",
					// pipelined as by default (tandem.listener.pipeline-depth=4), with a slot to spare
					"--tandem.transaction.slots=" + SLOTS, "--tandem.transaction.instance-id=" + instance,
					// A restart after kill -9 waits at most this long for its previous run's lease.
					"--tandem.transaction.lease-timeout=3s",
					"--flights.group=" + this.group, "--flights.run-id=" + this.runId,
					"--flights.input-topic=" + this.input, "--flights.output-topic=" + this.output,
					"--flights.incarnation=" + incarnation, "--spring.main.web-application-type=none",
					"--logging.level.root=WARN", "--logging.level.dev.tandem=INFO"));
			if (this.fault != null && this.fault.setup == Setup.DATABASE) {
				try {
					args.add("--flights.database-url=" + env.databaseUrl());
				}
				catch (java.sql.SQLException ex) {
					throw new IOException("The suite's database did not start", ex);
				}
			}
			if (this.mode == Mode.REMOTE) {
				args.add("--tandem.coordinator.mode=remote");
				args.add("--tandem.coordinator.peers=" + env.peerList());
				// the chaos peers run in plain text on loopback
				args.add("--tandem.coordinator.plaintext-allowed=true");
			}
			else {
				args.add("--tandem.coordinator.data-dir=" + this.dir.resolve("coordinator"));
			}
			args.addAll(extra);
			Process router = standby.go(args);
			this.routers.add(router);
			this.incarnations.add(incarnation);
			return router;
		}

		private long progress(Process router) {
			if (!router.isAlive()) {
				throw new IllegalStateException("the router exited with " + router.exitValue() + " (see its log in "
						+ this.dir + ")");
			}
			return env.committed(this.group, partitions());
		}

		private Set<TopicPartition> partitions() {
			return java.util.stream.IntStream.range(0, PARTITIONS)
				.mapToObj((p) -> new TopicPartition(this.input, p))
				.collect(Collectors.toSet());
		}

		private void awaitMoreProgress(Process router) {
			long now = progress(router);
			await().atMost(TIMEOUT).pollInterval(POLL).until(() -> progress(router) > now);
		}

		/**
		 * Every input offset committed, and no transaction of this run's instance open on either
		 * cluster. The offsets alone are not enough: they commit with the source's participant, so
		 * a router halted or killed in the middle of the last transaction's commit leaves them
		 * complete while the target's part waits for recovery (two runs of a lot of 100 verified
		 * such a state, before the second router had recovered it or, once, before it was started).
		 */
		private boolean done() throws Exception {
			var offsets = env.committedOffsets(this.group);
			return this.loaded.afterLastRecord.entrySet().stream().allMatch((end) -> end.getValue() == 0
					|| (offsets.get(end.getKey()) != null && offsets.get(end.getKey()).offset() >= end.getValue()))
					&& noTransactionOpen();
		}

		/** No transaction of this instance open on either cluster. */
		private boolean noTransactionOpen() throws Exception {
			for (String cluster : List.of(Regions.EAST, Regions.WEST)) {
				// every slot's transactional id of this instance, of any run (<prefix>.<cluster>.<instance>.<slot>[.<run-id>])
				String ids = "flight-router." + cluster + "." + this.instanceId + ".";
				boolean open = env.admin(cluster).listTransactions().all().get(30, TimeUnit.SECONDS).stream()
					.filter((listing) -> listing.transactionalId().startsWith(ids))
					.anyMatch((listing) -> EnumSet.of(TransactionState.ONGOING, TransactionState.PREPARE_ABORT,
							TransactionState.PREPARE_COMMIT).contains(listing.state()));
				if (open) {
					return false;
				}
			}
			return true;
		}

		void awaitDone(Process router) {
			await().atMost(TIMEOUT).pollInterval(POLL).until(() -> {
				progress(router); // fails fast if the router died
				return done();
			});
		}

		private void awaitFullIsr() {
			await().atMost(TIMEOUT).pollInterval(POLL).until(() -> env.westUnderReplicated() == 0);
		}

		/**
		 * The router was killed after its decision: waits until each cluster's broker has
		 * aborted the open transaction because its transaction.timeout.ms expired.
		 */
		private void awaitBrokersAbortedTransactions() {
			await().atMost(TIMEOUT).pollInterval(POLL).until(this::noTransactionOpen);
		}

		long fact(String name) {
			Object value = this.facts.get(name);
			return (value instanceof Number number) ? number.longValue() : 0;
		}

		private void mark(String phase) {
			long now = System.nanoTime();
			this.timeline.merge(phase, (now - this.mark) / 1e9, Double::sum);
			this.mark = now;
		}

		String summary() {
			String phases = this.timeline.entrySet().stream()
				.map((e) -> e.getKey() + " " + String.format("%.1f", e.getValue()))
				.collect(Collectors.joining(", "))
					+ this.prepareTimeline.entrySet().stream()
						.map((e) -> e.getKey() + " " + String.format("%.1f", e.getValue()))
						.collect(Collectors.joining(", ", "; ahead: ", ""));
			Map<String, Object> counts = new TreeMap<>();
			for (String name : List.of("lost", "duplicated", "aborted-but-visible transactions", "keys out of input order",
					"dead-lettered records",
					"heuristic outcomes reported")) {
				counts.put(name, fact(name));
			}
			for (String name : (this.fault != null && this.fault.setup != Setup.KAFKA) ? List.of(DatabaseCheck.ROWS,
					DatabaseCheck.ROWS_WITHOUT_RECORDS, DatabaseCheck.RECORDS_WITHOUT_ROWS, DatabaseCheck.DUPLICATE_ROWS,
					DatabaseCheck.TORN_RECORDS, DatabaseCheck.TORN_ROWS, DatabaseCheck.PREPARED)
					: List.<String>of()) {
				counts.put(name, fact(name));
			}
			return String.format("chaos run %3d %-24s %-8s %s %5.1f s (load %s) [%s] %s%s%s", this.index, this.fault,
					this.mode.name().toLowerCase(Locale.ROOT), this.problems.isEmpty() ? "PASS" : "FAIL", this.seconds,
					loadAverage().split(" ")[0], phases, counts, this.notes.isEmpty() ? "" : " " + this.notes,
					this.problems.isEmpty() ? "" : " PROBLEMS " + this.problems);
		}

	}

}
