package dev.tandem.mirror.chaos;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import dev.tandem.mirror.app.ChaosMirrorMain;
import dev.tandem.test.Directories;
import dev.tandem.test.KafkaProcessCluster;
import dev.tandem.test.KafkaProcessClustersExtension;
import dev.tandem.test.LatencyProxy;
import dev.tandem.transaction.ProtocolStep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The mirror's chaos suite (profile {@code chaos} of the mirror module, not in the default
 * build): a source cluster ({@code east}) and a target cluster ({@code west}), each a
 * {@link KafkaProcessCluster} of one controller and three brokers in JVMs of their own; the
 * mirror app ({@link ChaosMirrorMain}) in a JVM of its own with its embedded coordinator (whose
 * Raft log must survive the mirror's {@code kill -9}). Each run writes real flight records (the
 * sample app's {@code flights-20k.json}) to a fresh source topic in source transactions, one of
 * which aborts; group {@code lag-*} consumes a third of every partition and commits, group
 * {@code tip-*} consumes to the end and commits; then the mirror starts, one {@link Fault} hits
 * it, a second mirror with the same instance id runs until caught up, and
 * {@link MirrorChaosChecker} reads both clusters: lost, duplicated, aborted source records
 * mirrored, per-partition order, translated group offsets past the data or behind the group's
 * committed position, records a consumer of each group re-reads on the target.
 * <p>
 * {@code mvn -B -Pchaos -pl mirror verify -Dchaos.runs=16}; runs cycle through the faults.
 * {@code -Dchaos.faults=MIRROR_HALT_MID_COMMIT,MIRROR_KILL_AT_RANDOM} picks faults,
 * {@code -Dchaos.seed} the random seed, {@code -Dchaos.records} the records loaded before the
 * mirror starts, {@code -Dchaos.link-cut-seconds} how long the link-cut faults cut the link (15). Results: {@code target/chaos/chaos-table.md} and {@code target/chaos/runs.log}.
 */
@Tag("chaos")
class MirrorChaosTests {

	static final String SOURCE = "east";

	static final String TARGET = "west";

	private static final int RECORDS = Integer.getInteger("chaos.records", 2000);

	/** Records per source transaction. */
	private static final int CHUNK = 200;

	/** The index of the source transaction that aborts. */
	private static final int ABORTED_CHUNK = 2;

	static final int PARTITIONS = 3;

	/** Records per mirror transaction at most, so that a run has tens of transactions. */
	private static final int MAX_RECORDS = 100;

	private static final Duration TIMEOUT = Duration.ofMinutes(3);

	/**
	 * How long {@link Fault#LINK_CUT_SOURCE} and {@link Fault#LINK_CUT_TARGET} keep the link cut:
	 * longer than the mirror's session timeouts here (6 s), so its group memberships expire.
	 */
	private static final Duration LINK_CUT = Duration.ofSeconds(Long.getLong("chaos.link-cut-seconds", 15));

	/** One-way delay of the link the link-cut faults cut (a 40 ms round trip). */
	private static final Duration LINK_ONE_WAY = Duration.ofMillis(20);

	private static final Duration POLL = Duration.ofMillis(200);

	private static final Path WORK = Path.of("target/chaos").toAbsolutePath();

	/** Admin calls may time out while a broker is down: such a poll counts as no progress. */
	private static final java.util.function.Predicate<Throwable> TRANSIENT = (ex) -> !(ex instanceof IllegalStateException);

	@RegisterExtension
	static final KafkaProcessClustersExtension kafka = new KafkaProcessClustersExtension(
			// a proxy in front of each broker's client listener: the links the link-cut faults cut
			// (only their runs' mirrors bootstrap through them)
			KafkaProcessCluster.builder().name(SOURCE).brokers(3).latencyProxies(true),
			KafkaProcessCluster.builder().name(TARGET).brokers(3).latencyProxies(true));

	private static KafkaProcessCluster source;

	private static KafkaProcessCluster target;

	private static Admin sourceAdmin;

	private static Admin targetAdmin;

	private static List<String> flights;

	enum Fault {

		MIRROR_HALT_BEFORE_PREPARE(ProtocolStep.BEFORE_PREPARE, "mirror halts after its sends, before prepare"),

		MIRROR_HALT_AFTER_PREPARE(ProtocolStep.AFTER_PREPARE, "mirror halts after prepare, before the decision"),

		MIRROR_HALT_AFTER_DECISION(ProtocolStep.AFTER_DECISION,
				"mirror with its positions on the source halts after the decision, before any commit"),

		MIRROR_HALT_MID_COMMIT(ProtocolStep.MID_COMMIT,
				"mirror with its positions on the source halts with one participant committed"),

		MIRROR_HALT_AFTER_COMMIT(ProtocolStep.AFTER_COMMIT, "mirror halts after every commit"),

		MIRROR_KILL_AT_RANDOM(null, "mirror JVM SIGKILL at a random moment"),

		SOURCE_BROKER_KILL(null, "source leader broker of an input partition kill -9 during the copy, restarted later"),

		TARGET_ROLLING_RESTART(null, "controller and every target broker restarted in turn during the copy"),

		LINK_CUT_SOURCE(null, "the mirror reaches the source over a 40 ms link, cut mid-copy (stalled or reset in turn) "
				+ "for longer than its session timeout, then healed; it must commit again without a restart"),

		LINK_CUT_TARGET(null, "the mirror reaches the target over a 40 ms link, cut mid-copy (stalled or reset in turn) "
				+ "for longer than its session timeout, then healed; it must commit again without a restart");

		final @Nullable ProtocolStep step;

		/**
		 * Whether the mirror keeps its positions on the source (a cross-cluster transaction per
		 * mirror transaction): only there do the decision and a partial commit exist; every other
		 * fault runs the default, positions on the one target (one Kafka transaction, one-phase).
		 */
		boolean positionsOnSource() {
			return this.step == ProtocolStep.AFTER_DECISION || this.step == ProtocolStep.MID_COMMIT;
		}

		final String description;

		Fault(@Nullable ProtocolStep step, String description) {
			this.step = step;
			this.description = description;
		}

		boolean infrastructure() {
			return this == SOURCE_BROKER_KILL || this == TARGET_ROLLING_RESTART || linkCut();
		}

		boolean linkCut() {
			return this == LINK_CUT_SOURCE || this == LINK_CUT_TARGET;
		}

	}

	@BeforeAll
	static void prepare() throws Exception {
		long start = System.nanoTime();
		Files.createDirectories(WORK);
		for (String previous : List.of("runs.log", "chaos-table.md")) {
			Path file = WORK.resolve(previous);
			if (Files.exists(file)) {
				Files.move(file, WORK.resolve(previous.replace(".", "-" + Files.getLastModifiedTime(file).toMillis() + ".")));
			}
		}
		source = kafka.cluster(SOURCE);
		target = kafka.cluster(TARGET);
		source.clientLatency(LINK_ONE_WAY, Duration.ZERO);
		target.clientLatency(LINK_ONE_WAY, Duration.ZERO);
		sourceAdmin = Admin.create(Map.of("bootstrap.servers", source.bootstrapServers()));
		targetAdmin = Admin.create(Map.of("bootstrap.servers", target.bootstrapServers()));
		JsonNode array = JsonMapper.builder().build()
			.readTree(Path.of("../sample-app/src/main/resources/data/flights-20k.json").toFile());
		flights = new ArrayList<>();
		array.forEach((flight) -> flights.add(flight.toString()));
		// the extension logs how long the clusters took to start
		System.out.printf("mirror chaos: 2 clusters of 3 brokers up, %d flights loaded in %.1f s%n", flights.size(),
				seconds(start));
	}

	@AfterAll
	static void closeAdmins() {
		if (sourceAdmin != null) {
			sourceAdmin.close(Duration.ofSeconds(5));
			targetAdmin.close(Duration.ofSeconds(5));
		}
	}

	@Test
	void everyFaultRunEndsWithNothingLostDuplicatedAndGroupOffsetsExact() throws Exception {
		List<Fault> faults = faults();
		int runs = Integer.getInteger("chaos.runs", faults.size());
		Random random = new Random(Long.getLong("chaos.seed", 42L));
		Map<Fault, Row> table = new LinkedHashMap<>();
		List<String> failures = new ArrayList<>();
		long start = System.nanoTime();
		for (int index = 0; index < runs; index++) {
			Fault fault = faults.get(index % faults.size());
			Row done = table.get(fault);
			Run run = new Run(index, fault, (done != null) ? done.runs : 0);
			run.execute(random);
			table.computeIfAbsent(run.fault, (f) -> new Row()).add(run);
			if (!run.problems.isEmpty()) {
				failures.add("run " + index + " " + run.fault + ": " + run.problems);
			}
			String line = run.summary();
			System.out.println(line);
			Files.writeString(WORK.resolve("runs.log"), line + System.lineSeparator(), StandardCharsets.UTF_8,
					StandardOpenOption.CREATE, StandardOpenOption.APPEND);
			Files.writeString(WORK.resolve("chaos-table.md"), report(table, index + 1, seconds(start)),
					StandardCharsets.UTF_8);
		}
		System.out.println(report(table, runs, seconds(start)));
		assertThat(failures).isEmpty();
	}

	private static List<Fault> faults() {
		String selected = System.getProperty("chaos.faults", "");
		if (selected.isBlank()) {
			return List.of(Fault.values());
		}
		return Arrays.stream(selected.split(",")).map(String::trim).map(Fault::valueOf).toList();
	}

	private static String report(Map<Fault, Row> table, int runs, double seconds) {
		StringBuilder out = new StringBuilder();
		out.append(String.format("%n| fault | runs | passed | lost | duplicated | aborted-mirrored | out-of-order | "
				+ "offsets past data | offsets behind | mean s/run |%n"));
		out.append("|---|---|---|---|---|---|---|---|---|---|\n");
		Row total = new Row();
		for (Fault fault : Fault.values()) {
			Row row = table.get(fault);
			if (row != null) {
				out.append(String.format("| %s | %s |%n", fault, row.cells()));
				total.merge(row);
			}
		}
		out.append(String.format("| all | %s |%n", total.cells()));
		out.append(String.format("%nfaults:%n"));
		for (Fault fault : Fault.values()) {
			out.append(String.format("  %-28s %s%n", fault, fault.description));
		}
		out.append(String.format("%n%d runs in %.0f s (%.1f s per run); load average at the end %s%n", runs, seconds,
				seconds / Math.max(1, runs), loadAverage()));
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

	static double seconds(long startNanos) {
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

		long abortedMirrored;

		long outOfOrder;

		long past;

		long behind;

		double seconds;

		void add(Run run) {
			this.runs++;
			this.passed += run.problems.isEmpty() ? 1 : 0;
			this.lost += run.fact("lost");
			this.duplicated += run.fact("duplicated");
			this.abortedMirrored += run.fact("aborted mirrored");
			this.outOfOrder += run.fact("out of order");
			this.past += run.fact("offsets past data");
			this.behind += run.fact("offsets behind");
			this.seconds += run.seconds;
		}

		void merge(Row row) {
			this.runs += row.runs;
			this.passed += row.passed;
			this.lost += row.lost;
			this.duplicated += row.duplicated;
			this.abortedMirrored += row.abortedMirrored;
			this.outOfOrder += row.outOfOrder;
			this.past += row.past;
			this.behind += row.behind;
			this.seconds += row.seconds;
		}

		String cells() {
			return String.format("%d | %d | %d | %d | %d | %d | %d | %d | %.1f", this.runs, this.passed, this.lost,
					this.duplicated, this.abortedMirrored, this.outOfOrder, this.past, this.behind,
					this.seconds / Math.max(1, this.runs));
		}

	}

	/**
	 * One run: its topic, groups, mirror processes and findings.
	 */
	private static final class Run {

		final int index;

		final Fault fault;

		/** How many runs of the same fault came before this one. */
		final int repetition;

		final String topic;

		final String lagGroup;

		final String tipGroup;

		final String mirrorGroup;

		final String instanceId;

		final Path dir;

		final List<Process> mirrors = new ArrayList<>();

		final List<String> problems = new ArrayList<>();

		final List<String> notes = new ArrayList<>();

		final Map<String, Long> facts = new LinkedHashMap<>();

		final Map<String, Double> timeline = new LinkedHashMap<>();

		int nextSeq;

		/** Which time mirror a reaches the fault's step when it halts (0: no halt). */
		int haltAt;

		double seconds;

		private long mark;

		Run(int index, Fault fault, int repetition) {
			this.index = index;
			this.fault = fault;
			this.repetition = repetition;
			String name = String.format("%03d", index);
			this.topic = "flights-" + name + "-" + Long.toHexString(System.nanoTime() & 0xffffff);
			this.lagGroup = "lag-" + name;
			this.tipGroup = "tip-" + name;
			this.mirrorGroup = "mirror-" + name;
			this.instanceId = "mirror-chaos-" + name;
			this.dir = WORK.resolve("runs/run-" + name);
		}

		void execute(Random random) {
			long start = System.nanoTime();
			AtomicReference<Integer> killed = new AtomicReference<>();
			this.mark = start;
			AtomicBoolean stop = new AtomicBoolean();
			CompletableFuture<Void> trickle = CompletableFuture.completedFuture(null);
			try {
				// A run of the same number in an earlier lot kept its directory (a failed run's is kept
				// for its logs): its coordinator log would be this run's, with that run's transactions.
				Directories.deleteRecursively(this.dir);
				Files.createDirectories(this.dir);
				source.createTopic(this.topic, PARTITIONS, (short) 3, Map.of("min.insync.replicas", "2"));
				try (KafkaProducer<String, String> producer = producer("load")) {
					for (int chunk = 0; chunk * CHUNK < RECORDS; chunk++) {
						writeChunk(producer, CHUNK, chunk == ABORTED_CHUNK);
					}
				}
				mark("load");
				consumeGroups();
				mark("groups consume");
				if (this.fault.infrastructure()) {
					// more input while the fault runs, so that it hits the copy
					trickle = CompletableFuture.runAsync(() -> trickle(stop));
				}
				Process first = startMirror("a", random);
				if (this.fault.step != null) {
					// A mirror that copied everything without reaching its halt would wait here forever.
					await().atMost(TIMEOUT).pollInterval(POLL).ignoreExceptionsMatching(TRANSIENT)
						.until(() -> !first.isAlive() || mirroredToTheEnd());
					String log = Files.readString(log("a"));
					if (first.isAlive()) {
						long reached = log.lines().filter((line) -> line.contains("Reached " + this.fault.step)).count();
						this.problems.add("mirror a mirrored every record without halting: it reached " + this.fault.step
								+ " " + reached + " time(s), its halt was set at the " + this.haltAt + "th");
						return;
					}
					if (first.exitValue() != 137 || !log.contains("HALT at " + this.fault.step)) {
						this.problems.add("mirror a exited " + first.exitValue() + " instead of halting at " + this.fault.step);
						return;
					}
					this.notes.add(log.lines().filter((line) -> line.contains("HALT at")).findFirst().orElse("")
						.replaceAll(".*HALT", "HALT"));
					mark("mirror a: start to halt");
				}
				else if (this.fault == Fault.MIRROR_KILL_AT_RANDOM) {
					await().atMost(TIMEOUT).pollInterval(POLL).ignoreExceptionsMatching(TRANSIENT).until(() -> progress(first) > 0);
					Thread.sleep(random.nextInt(1500));
					first.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
					this.notes.add("killed with " + progress(null) + " source offsets committed by the mirror");
					mark("mirror a: start to kill");
				}
				else {
					await().atMost(TIMEOUT).pollInterval(POLL).ignoreExceptionsMatching(TRANSIENT).until(() -> progress(first) > 0);
					mark("mirror a: start to first commit");
					if (this.fault == Fault.SOURCE_BROKER_KILL) {
						TopicPartition partition = new TopicPartition(this.topic, random.nextInt(PARTITIONS));
						int leader = source.leader(partition);
						source.kill(leader);
						killed.set(leader);
						awaitMoreProgress(first);
						source.restart(leader);
						killed.set(null);
						await().atMost(TIMEOUT).pollInterval(POLL).until(() -> underReplicated(sourceAdmin) == 0);
						this.notes.add("source broker " + leader + " (leader of " + partition + ") killed and restarted");
					}
					else if (this.fault.linkCut()) {
						cutLink(first);
					}
					else {
						target.rollingRestart(Map.of());
						this.notes.add("target rolling restart");
					}
					mark("fault");
					awaitMoreProgress(first);
					stop.set(true);
					trickle.join();
					first.destroy();
					if (!first.waitFor(2, TimeUnit.MINUTES)) {
						this.problems.add("mirror a did not stop within 2 minutes of SIGTERM");
					}
					mark("mirror a: to graceful stop");
				}
				Process second = startMirror("b", null);
				awaitCaughtUp(second, log("b"));
				mark("mirror b: start to caught up");
				second.destroy();
				if (!second.waitFor(2, TimeUnit.MINUTES)) {
					this.problems.add("mirror b did not stop within 2 minutes of SIGTERM");
				}
				mark("mirror b stop");
				MirrorChaosChecker checker = new MirrorChaosChecker(source.bootstrapServers(), target.bootstrapServers(),
						this.topic, SOURCE + "." + this.topic, PARTITIONS);
				checker.check(List.of(this.lagGroup, this.tipGroup));
				this.facts.putAll(checker.facts());
				this.problems.addAll(checker.problems());
				this.notes.addAll(checker.notes());
				mark("check");
				if (this.problems.isEmpty()) {
					sourceAdmin.deleteTopics(List.of(this.topic));
					targetAdmin.deleteTopics(List.of(SOURCE + "." + this.topic));
				}
			}
			catch (Exception | AssertionError ex) {
				this.problems.add("run aborted: " + ex);
			}
			finally {
				stop.set(true);
				this.mirrors.forEach(Process::destroyForcibly);
				if (killed.get() != null) {
					// a failed run leaves the cluster whole for the next one
					source.restart(killed.get());
				}
				this.seconds = seconds(start);
			}
		}

		private KafkaProducer<String, String> producer(String name) {
			Map<String, Object> config = new HashMap<>();
			config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers());
			config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "chaos-" + name + "-" + this.topic);
			config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
			config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
			config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
			KafkaProducer<String, String> producer = new KafkaProducer<>(config);
			producer.initTransactions();
			return producer;
		}

		/** One source transaction of {@code count} flights, each with a unique key {@code <topic>-<seq>}. */
		private void writeChunk(KafkaProducer<String, String> producer, int count, boolean abort) {
			producer.beginTransaction();
			for (int i = 0; i < count; i++) {
				int seq = this.nextSeq++;
				producer.send(new ProducerRecord<>(this.topic, seq % PARTITIONS, this.topic + "-" + seq,
						flights.get(seq % flights.size())));
			}
			if (abort) {
				// flushed first: the aborted records are on the source's log, only marked aborted
				producer.flush();
				producer.abortTransaction();
			}
			else {
				producer.commitTransaction();
			}
		}

		/** Transactions of 20 flights every 200 ms until stopped; a failed one is left to the source to abort. */
		private void trickle(AtomicBoolean stop) {
			KafkaProducer<String, String> producer = null;
			try {
				while (!stop.get()) {
					try {
						if (producer == null) {
							producer = producer("trickle");
						}
						writeChunk(producer, 20, false);
					}
					catch (RuntimeException ex) {
						// the outcome is whatever the source says: the checker reads it read_committed
						if (producer != null) {
							producer.close(Duration.ZERO);
						}
						producer = null;
					}
					Thread.sleep(200);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				if (producer != null) {
					producer.close(Duration.ofSeconds(5));
				}
			}
		}

		/**
		 * Group lag consumes the first third of every partition and commits; group tip consumes
		 * to the end and commits its position.
		 */
		private void consumeGroups() {
			List<TopicPartition> partitions = new ArrayList<>();
			for (int p = 0; p < PARTITIONS; p++) {
				partitions.add(new TopicPartition(this.topic, p));
			}
			try (KafkaConsumer<String, String> lag = consumer(this.lagGroup);
					KafkaConsumer<String, String> tip = consumer(this.tipGroup)) {
				for (KafkaConsumer<String, String> consumer : List.of(lag, tip)) {
					consumer.assign(partitions);
					consumer.seekToBeginning(partitions);
				}
				Map<TopicPartition, Long> ends = lag.endOffsets(partitions);
				Map<TopicPartition, Integer> read = new HashMap<>();
				Map<TopicPartition, OffsetAndMetadata> lagOffsets = new HashMap<>();
				int third = (RECORDS - CHUNK) / PARTITIONS / 3;
				while (lagOffsets.size() < PARTITIONS) {
					for (ConsumerRecord<String, String> record : lag.poll(Duration.ofMillis(200))) {
						TopicPartition partition = new TopicPartition(record.topic(), record.partition());
						if (read.merge(partition, 1, Integer::sum) == third) {
							lagOffsets.put(partition, new OffsetAndMetadata(record.offset() + 1));
						}
					}
				}
				lag.commitSync(lagOffsets);
				while (partitions.stream().anyMatch((partition) -> tip.position(partition) < ends.get(partition))) {
					tip.poll(Duration.ofMillis(200));
				}
				Map<TopicPartition, OffsetAndMetadata> tipOffsets = new HashMap<>();
				partitions.forEach((partition) -> tipOffsets.put(partition, new OffsetAndMetadata(tip.position(partition))));
				tip.commitSync(tipOffsets);
				this.notes.add("lag " + offsets(lagOffsets) + ", tip " + offsets(tipOffsets));
			}
		}

		private static String offsets(Map<TopicPartition, OffsetAndMetadata> offsets) {
			return new java.util.TreeMap<>(offsets.entrySet().stream()
				.collect(java.util.stream.Collectors.toMap((e) -> e.getKey().partition(), (e) -> e.getValue().offset())))
				.toString();
		}

		private KafkaConsumer<String, String> consumer(String group) {
			Map<String, Object> config = new HashMap<>();
			config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, source.bootstrapServers());
			config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
			config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
			config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
			config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
			config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
			return new KafkaConsumer<>(config);
		}

		Path log(String incarnation) {
			return this.dir.resolve("mirror-" + incarnation + ".log");
		}

		/** Starts the mirror in its own JVM; with a random generator, halts it at the fault's step. */
		Process startMirror(String incarnation, @Nullable Random random) throws IOException {
			List<String> command = new ArrayList<>(List.of(javaBin(), "-Xmx384m", "-XX:TieredStopAtLevel=1",
					"-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), ChaosMirrorMain.class.getName(),
					"--tandem.clusters." + SOURCE + ".bootstrap-servers="
							+ ((this.fault == Fault.LINK_CUT_SOURCE) ? source.clientBootstrapServers() : source.bootstrapServers()),
					"--tandem.clusters." + TARGET + ".bootstrap-servers="
							+ ((this.fault == Fault.LINK_CUT_TARGET) ? target.clientBootstrapServers() : target.bootstrapServers()),
					// Static membership (KIP-345): a restarted mirror takes its partitions back at once
					"--tandem.clusters." + SOURCE + ".consumer.group.instance.id=" + this.instanceId,
					"--tandem.clusters." + SOURCE + ".consumer.session.timeout.ms=6000",
					// the same for the mirror's group on the target (positions on the target, the default)
					"--tandem.clusters." + TARGET + ".consumer.group.instance.id=" + this.instanceId,
					"--tandem.clusters." + TARGET + ".consumer.session.timeout.ms=6000",
					"--tandem.transaction.instance-id=" + this.instanceId, "--tandem.transaction.slots=5",
					// a restart after kill -9 waits at most this long for its previous run's lease
					"--tandem.transaction.lease-timeout=3s",
					"--tandem.coordinator.data-dir=" + this.dir.resolve("coordinator"),
					"--tandem.mirror.source=" + SOURCE, "--tandem.mirror.targets=" + TARGET,
					"--tandem.mirror.topics=" + this.topic, "--tandem.mirror.groups=" + this.lagGroup + "," + this.tipGroup,
					"--tandem.mirror.consumer-group=" + this.mirrorGroup, "--tandem.mirror.max-records=" + MAX_RECORDS,
					"--tandem.mirror.replication-factor=3", "--spring.main.web-application-type=none",
					"--logging.level.root=WARN", "--logging.level.dev.tandem=INFO",
					"--logging.level.dev.tandem.mirror.Mirror=DEBUG"));
			if (this.fault.positionsOnSource()) {
				command.add("--tandem.mirror.positions=source");
			}
			if (random != null && this.fault.step != null) {
				this.haltAt = 2 + random.nextInt(4);
				command.add("--chaos.halt-at-step=" + this.fault.step);
				command.add("--chaos.halt-at-transaction=" + this.haltAt);
				// The halt falls on the 2nd to 5th transaction that reaches the step: transactions that
				// grow past max-records while the previous one prepares (the default) can copy the whole
				// backlog in fewer, and the mirror would never halt (docs/benchmarks.md, "Mirror chaos
				// lot"). The other faults run with the default growth.
				command.add("--tandem.mirror.growth=1");
			}
			Process mirror = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log(incarnation).toFile())
				.start();
			this.mirrors.add(mirror);
			return mirror;
		}

		/**
		 * Cuts mirror a's link to the fault's cluster (every broker's proxy) for {@link #LINK_CUT},
		 * then heals it: even repetitions stall it (connections stay open, nothing passes either way,
		 * as in a partition), odd ones reset every connection and leave new ones silent. The run
		 * then waits for the mirror to commit again, without restarting it.
		 */
		private void cutLink(Process mirror) throws Exception {
			KafkaProcessCluster cluster = (this.fault == Fault.LINK_CUT_SOURCE) ? source : target;
			boolean drop = this.repetition % 2 == 1;
			List<LatencyProxy> link = cluster.brokerIds().stream().map(cluster::latencyProxy).toList();
			long before = progress(mirror);
			link.forEach(LatencyProxy::stall);
			int dropped = drop ? link.stream().mapToInt(LatencyProxy::dropConnections).sum() : 0;
			// The fault itself: the link stays cut this long, not until a condition.
			Thread.sleep(LINK_CUT.toMillis());
			long atHeal = progress(mirror);
			link.forEach(LatencyProxy::resume);
			long healed = System.nanoTime();
			await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(100)).ignoreExceptionsMatching(TRANSIENT)
				.until(() -> progress(mirror) > atHeal);
			this.notes.add(String.format(Locale.ROOT, "link to %s %s for %d s (%d connection(s) reset), %d offsets "
					+ "committed during the cut, first commit %.2f s after the heal", cluster.name(),
					drop ? "dropped" : "stalled", LINK_CUT.toSeconds(), dropped, atHeal - before, seconds(healed)));
		}

		/** The sum of the mirror's committed source offsets; fails fast if the given mirror died. */
		private long progress(@Nullable Process mirror) throws Exception {
			if (mirror != null && !mirror.isAlive()) {
				throw new IllegalStateException("the mirror exited with " + mirror.exitValue() + " (see " + this.dir + ")");
			}
			return mirrorPositions().values().stream().mapToLong(Long::longValue).sum();
		}

		private void awaitMoreProgress(Process mirror) throws Exception {
			long now = await().atMost(TIMEOUT).pollInterval(POLL).ignoreExceptionsMatching(TRANSIENT)
				.until(() -> progress(mirror), (sum) -> true);
			await().atMost(TIMEOUT).pollInterval(POLL).ignoreExceptionsMatching(TRANSIENT).until(() -> progress(mirror) > now);
		}

		/** Whether the mirror's committed source offsets reached the source's end offsets. */
		private boolean mirroredToTheEnd() throws Exception {
			Map<Integer, Long> ends = MirrorChaosChecker.endOffsets(sourceAdmin, this.topic, PARTITIONS);
			Map<Integer, Long> mirrored = mirrorPositions();
			// the mirror's offset may stop just before the last transaction's commit marker
			return ends.entrySet().stream().allMatch((end) -> mirrored.getOrDefault(end.getKey(), -1L) >= end.getValue() - 1);
		}

		/**
		 * Until the mirror has started and been assigned its partitions (its log says so: one
		 * that fails to start is not caught up, even when what an earlier mirror did already looks
		 * complete, and one not yet assigned translates nothing), its committed source offsets
		 * reach the source's end offsets, and both groups' translated offsets on the target are
		 * there and unchanged over three reads a second apart: longer than two of the mirror's
		 * group reads (every second by default), so that a translation the mirror has yet to write
		 * is not taken for the final one.
		 */
		private void awaitCaughtUp(Process mirror, Path log) {
			AtomicReference<Map<String, Map<Integer, Long>>> previous = new AtomicReference<>();
			AtomicInteger unchanged = new AtomicInteger();
			await().atMost(TIMEOUT).pollInterval(Duration.ofSeconds(1)).ignoreExceptionsMatching(TRANSIENT).until(() -> {
				progress(mirror);
				if (!Files.exists(log)) {
					return false;
				}
				String text = Files.readString(log);
				if (!text.contains("Started ChaosMirrorMain") || !text.contains(" partition(s) through group ")) {
					return false;
				}
				if (!mirroredToTheEnd()) {
					return false;
				}
				Map<Integer, Long> mirrored = mirrorPositions();
				Map<String, Map<Integer, Long>> translated = new HashMap<>();
				translated.put(this.mirrorGroup, mirrored);
				for (String group : List.of(this.lagGroup, this.tipGroup)) {
					Map<Integer, Long> offsets = committed(targetAdmin, group);
					if (offsets.size() < PARTITIONS) {
						return false;
					}
					translated.put(group, offsets);
				}
				if (!translated.equals(previous.getAndSet(translated))) {
					unchanged.set(0);
					return false;
				}
				return unchanged.incrementAndGet() >= 2;
			});
		}

		/** The mirror's committed source positions by partition: its group on the source or on the target. */
		private Map<Integer, Long> mirrorPositions() throws Exception {
			return committed(this.fault.positionsOnSource() ? sourceAdmin : targetAdmin, this.mirrorGroup);
		}

		private static Map<Integer, Long> committed(Admin admin, String group) throws Exception {
			Map<Integer, Long> offsets = new java.util.TreeMap<>();
			admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)
				.forEach((partition, offset) -> {
					if (offset != null) {
						offsets.put(partition.partition(), offset.offset());
					}
				});
			return offsets;
		}

		long fact(String name) {
			return this.facts.getOrDefault(name, 0L);
		}

		private void mark(String phase) {
			long now = System.nanoTime();
			this.timeline.merge(phase, (now - this.mark) / 1e9, Double::sum);
			this.mark = now;
		}

		String summary() {
			String phases = this.timeline.entrySet().stream()
				.map((e) -> e.getKey() + " " + String.format("%.1f", e.getValue()))
				.collect(java.util.stream.Collectors.joining(", "));
			return String.format("mirror chaos run %3d %-28s %s %5.1f s (load %s) [%s] %s %s%s", this.index, this.fault,
					this.problems.isEmpty() ? "PASS" : "FAIL", this.seconds, loadAverage().split(" ")[0], phases,
					this.facts, this.notes, this.problems.isEmpty() ? "" : " PROBLEMS " + this.problems);
		}

	}

	static long underReplicated(Admin admin) throws Exception {
		var topics = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(30, TimeUnit.SECONDS);
		return admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).values().stream()
			.flatMap((topic) -> topic.partitions().stream())
			.filter((partition) -> partition.isr().size() < partition.replicas().size())
			.count();
	}

	static String javaBin() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString() + (File.separatorChar == '\\' ? ".exe" : "");
	}

}
