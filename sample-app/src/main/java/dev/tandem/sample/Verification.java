package dev.tandem.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

import dev.tandem.sample.VerificationChecks.InputRecord;
import dev.tandem.sample.VerificationChecks.OutputRecord;
import dev.tandem.test.ReadCommitted;

/**
 * The independent checker of a routing run: reads the input, every output and every cluster's
 * marker topic with {@code read_committed} consumers, cross-checks the output counts with
 * {@code kcat} (librdkafka, a client that is not Kafka's Java client) when it is installed, and
 * hands what it saw to {@link VerificationChecks} (lost, duplicated, aborted-but-visible,
 * out-of-order per key, records of aborted source transactions, committed source offsets versus
 * input, and what a killed router must and must not have left).
 * <p>
 * Also a command-line tool that exits 0 when the run is correct, 1 on any anomaly and 2 when it
 * cannot check (bad arguments, a cluster unreachable):
 * <pre>
 * java -cp ... dev.tandem.sample.Verification --cluster east=HOST:PORT --cluster west=HOST:PORT \
 *     --run-id RUN --input TOPIC --output TOPIC --group GROUP [--records N] \
 *     [--router-log FILE]... [--incarnations a,b] [--expect-heuristic]
 * </pre>
 * {@code --router-log} takes the router's logs: the line the chaos halt writes ({@code HALT at
 * STEP of transaction ID}) and Tandem's {@code HEURISTIC OUTCOME} errors are the app's own
 * reports; {@code --expect-heuristic} says the halted transaction must end as a reported
 * heuristic outcome (the router was down longer than {@code transaction.timeout.ms} after its
 * decision).
 */
public final class Verification {

	private static final ObjectMapper JSON = JsonMapper.builder().build();

	private static final Duration READ_TIMEOUT = Duration.ofMinutes(2);

	/** The line {@code FlightRouterApplication.Halt} logs before halting. */
	static final Pattern HALT_LINE = Pattern.compile("HALT at (\\w+) of transaction (\\S+)");

	/** The ERROR line Tandem logs for a heuristic outcome. */
	static final Pattern HEURISTIC_LINE = Pattern.compile("HEURISTIC OUTCOME: decided transaction (\\S+) ");

	private final Map<String, String> bootstrapServers;

	private final String runId;

	private @Nullable String deadLetterTopic;

	private final String inputTopic;

	private final String outputTopic;

	private String markerTopic = "tandem-markers";

	private @Nullable String haltedTransaction;

	private @Nullable String haltedStep;

	private Set<String> expectedHeuristics = Set.of();

	private Set<String> reportedHeuristics = Set.of();

	private List<String> incarnations = List.of();

	private final List<String> problems = new ArrayList<>();

	private final List<String> explained = new ArrayList<>();

	private final Map<String, Object> facts = new LinkedHashMap<>();

	/** The fact that says the independent kcat cross-check did not run. */
	static final String KCAT_SKIPPED = "kcat cross-check skipped";

	/** Whether kcat could not be started (not installed); set by the reader threads. */
	private volatile boolean kcatMissing;

	Verification(Map<String, String> bootstrapServers, String runId) {
		this(bootstrapServers, runId, FlightRouterApplication.INPUT, FlightRouterApplication.OUTPUT);
	}

	Verification(Map<String, String> bootstrapServers, String runId, String inputTopic, String outputTopic) {
		this.bootstrapServers = bootstrapServers;
		this.runId = runId;
		this.inputTopic = inputTopic;
		this.outputTopic = outputTopic;
	}

	/**
	 * Takes what the router's logs report: the transaction a chaos halt cut off, and heuristic
	 * outcomes.
	 * @param logs router logs, in the order the router was started
	 * @param expectHeuristic whether the halted transaction must end as a reported heuristic outcome
	 * @return this
	 */
	Verification routerLogs(List<Path> logs, boolean expectHeuristic) {
		Set<String> heuristics = new LinkedHashSet<>();
		for (Path log : logs) {
			try {
				for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
					Matcher halt = HALT_LINE.matcher(line);
					if (halt.find()) {
						this.haltedStep = halt.group(1);
						this.haltedTransaction = halt.group(2);
					}
					Matcher heuristic = HEURISTIC_LINE.matcher(line);
					if (heuristic.find()) {
						heuristics.add(heuristic.group(1));
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot read router log " + log, ex);
			}
		}
		this.reportedHeuristics = heuristics;
		this.expectedHeuristics = (expectHeuristic && this.haltedTransaction != null) ? Set.of(this.haltedTransaction)
				: Set.of();
		return this;
	}

	/**
	 * Sets the order in which router incarnations started ({@code flights.incarnation}).
	 * @param incarnations incarnation names, first start first
	 * @return this
	 */
	Verification incarnations(List<String> incarnations) {
		this.incarnations = List.copyOf(incarnations);
		return this;
	}

	/**
	 * Sets the dead-letter topic (on east) where every poison input record of the run must be,
	 * exactly once, and nothing else of the run.
	 * @param topic the dead-letter topic
	 * @return this
	 */
	Verification deadLetters(String topic) {
		this.deadLetterTopic = topic;
		return this;
	}

	/**
	 * Checks the dead-letter topic against the poison records of the input: each once, nothing
	 * else. Facts: poison records, dead-lettered records.
	 */
	private void checkDeadLetters() {
		String topic = this.deadLetterTopic;
		if (topic == null) {
			return;
		}
		List<Long> poison = new ArrayList<>();
		for (ConsumerRecord<byte[], byte[]> record : ReadCommitted.records(this.bootstrapServers.get(Regions.EAST),
				this.inputTopic, READ_TIMEOUT)) {
			JsonNode value = JSON.readTree(record.value());
			if (this.runId.equals(value.path("runId").asString("")) && value.path("poison").asBoolean(false)) {
				poison.add(value.path("seq").asLong(-1));
			}
		}
		List<Long> dead = new ArrayList<>();
		for (ConsumerRecord<byte[], byte[]> record : ReadCommitted.records(this.bootstrapServers.get(Regions.EAST), topic,
				READ_TIMEOUT)) {
			JsonNode value = JSON.readTree(record.value());
			if (this.runId.equals(value.path("runId").asString(""))) {
				dead.add(value.path("seq").asLong(-1));
			}
		}
		this.facts.put("poison records", poison.size());
		this.facts.put("dead-lettered records", dead.size());
		List<Long> sortedPoison = poison.stream().sorted().toList();
		List<Long> sortedDead = dead.stream().sorted().toList();
		if (!sortedPoison.equals(sortedDead)) {
			addProblem("dead-letter topic " + topic + " holds seq " + sortedDead + " but the poison records are "
					+ sortedPoison + " (each once, nothing else)");
		}
	}

	/**
	 * Runs every check.
	 * @param regions the routing table
	 * @param loaded number of records the loader committed for this run, or null if unknown
	 * @param endOffsets end offsets of the input after loading
	 * @param group the pipeline's consumer group
	 * @return whether every check passed
	 */
	boolean verify(Regions regions, @Nullable Integer loaded, Map<TopicPartition, Long> endOffsets, String group) {
		// Every read is independent and mostly waits on the network: run them side by side.
		ExecutorService readers = Executors.newFixedThreadPool(4 * this.bootstrapServers.size() + 2, (runnable) -> {
			Thread thread = new Thread(runnable, "verification-reader");
			thread.setDaemon(true);
			return thread;
		});
		try {
			Map<String, Future<List<OutputRecord>>> outputs = new TreeMap<>();
			Map<String, Future<Set<String>>> markers = new TreeMap<>();
			Map<String, Future<@Nullable Long>> kcat = new TreeMap<>();
			Map<String, Future<Map<TopicPartition, Long>>> offsets = new TreeMap<>();
			Future<List<InputRecord>> input = readers.submit(this::readInput);
			for (String cluster : this.bootstrapServers.keySet()) {
				outputs.put(cluster, readers.submit(() -> readOutput(cluster)));
				markers.put(cluster, readers.submit(() -> readMarkers(cluster)));
				kcat.put(cluster, readers.submit(() -> kcatCount(cluster, this.outputTopic)));
				offsets.put(cluster, readers.submit(() -> committedOffsets(cluster, group)));
			}
			Map<String, List<OutputRecord>> outputRecords = new TreeMap<>();
			Map<String, Set<String>> markerIds = new TreeMap<>();
			Map<String, Long> kcatCounts = new TreeMap<>();
			Map<String, Integer> leaked = new TreeMap<>();
			for (String cluster : this.bootstrapServers.keySet()) {
				outputRecords.put(cluster, outputs.get(cluster).get());
				markerIds.put(cluster, markers.get(cluster).get());
				Long count = kcat.get(cluster).get();
				if (count != null) {
					kcatCounts.put(cluster, count);
				}
				if (!Regions.EAST.equals(cluster)) {
					leaked.put(cluster, offsets.get(cluster).get().size());
				}
			}
			VerificationChecks.Result result = new VerificationChecks(Regions.EAST, regions::clusterOf).loaded(loaded)
				.input(input.get())
				.outputs(outputRecords)
				.markers(markerIds)
				.offsets(offsets.get(Regions.EAST).get(), endOffsets, leaked)
				.kcat(kcatCounts)
				.halted(this.haltedTransaction, this.haltedStep)
				.heuristics(this.expectedHeuristics, this.reportedHeuristics)
				.incarnations(this.incarnations)
				.run();
			this.facts.putAll(result.facts());
			if (this.kcatMissing) {
				this.facts.put(KCAT_SKIPPED, "kcat is not installed (apt-get install kcat, or brew install kcat): "
						+ "counted by the Java client only");
			}
			checkDeadLetters();
			synchronized (this.problems) {
				this.problems.addAll(result.anomalies());
			}
			this.explained.addAll(result.explained());
			return this.problems.isEmpty();
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof RuntimeException runtime) ? runtime : new IllegalStateException(ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while reading the run's records", ex);
		}
		finally {
			readers.shutdownNow();
		}
	}

	private void addProblem(String problem) {
		synchronized (this.problems) {
			this.problems.add(problem);
		}
	}

	Map<String, Object> facts() {
		return this.facts;
	}

	/**
	 * Returns the anomalies found (modifiable: a caller may add its own).
	 * @return anomalies, one line each
	 */
	List<String> problems() {
		return this.problems;
	}

	/**
	 * Returns deviations explained by heuristic outcomes that the app reported.
	 * @return one line each
	 */
	List<String> explained() {
		return this.explained;
	}

	private List<InputRecord> readInput() {
		List<InputRecord> input = new ArrayList<>();
		for (ConsumerRecord<byte[], byte[]> record : ReadCommitted.records(this.bootstrapServers.get(Regions.EAST),
				this.inputTopic, READ_TIMEOUT)) {
			JsonNode value = JSON.readTree(record.value());
			// A poison record is consumed, never routed: like another run's record, only its offset moves.
			boolean ofRun = this.runId.equals(value.path("runId").asString("")) && !value.path("poison").asBoolean(false);
			input.add(new InputRecord(record.partition(), record.offset(), ofRun, value.path("seq").asLong(-1),
					value.path("origin").asString(""), value.path("abortedSource").asBoolean(false)));
		}
		return input;
	}

	private List<OutputRecord> readOutput(String cluster) {
		List<OutputRecord> output = new ArrayList<>();
		for (ConsumerRecord<byte[], byte[]> record : ReadCommitted.records(this.bootstrapServers.get(cluster),
				this.outputTopic, READ_TIMEOUT)) {
			JsonNode value = JSON.readTree(record.value());
			if (!this.runId.equals(value.path("runId").asString(""))) {
				continue;
			}
			String[] src = value.path("src").asString("-1:-1").split(":");
			output.add(new OutputRecord(cluster, record.partition(), record.offset(),
					(record.key() != null) ? new String(record.key(), StandardCharsets.UTF_8) : null,
					value.path("seq").asLong(-1), Integer.parseInt(src[0]), Long.parseLong(src[1]),
					header(record, FlightRouterApplication.TRANSACTION_HEADER),
					counts(header(record, FlightRouterApplication.RECORDS_HEADER)),
					header(record, FlightRouterApplication.INPUT_HEADER),
					header(record, FlightRouterApplication.INCARNATION_HEADER),
					value.path("abortedSource").asBoolean(false)));
		}
		return output;
	}

	private Set<String> readMarkers(String cluster) {
		Set<String> ids = new LinkedHashSet<>();
		for (ConsumerRecord<byte[], byte[]> record : ReadCommitted.records(this.bootstrapServers.get(cluster),
				this.markerTopic, READ_TIMEOUT)) {
			if (record.key() != null) {
				ids.add(new String(record.key(), StandardCharsets.UTF_8));
			}
		}
		return ids;
	}

	private static String header(ConsumerRecord<byte[], byte[]> record, String name) {
		Header header = record.headers().lastHeader(name);
		return (header != null && header.value() != null) ? new String(header.value(), StandardCharsets.UTF_8) : "";
	}

	static Map<String, Integer> counts(String header) {
		Map<String, Integer> counts = new TreeMap<>();
		if (!header.isBlank()) {
			for (String item : header.split(",")) {
				String[] pair = item.split("=", 2);
				counts.put(pair[0].trim(), Integer.parseInt(pair[1].trim()));
			}
		}
		return counts;
	}

	private Map<TopicPartition, Long> committedOffsets(String cluster, String group) {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", this.bootstrapServers.get(cluster)))) {
			Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
			Map<TopicPartition, Long> result = new HashMap<>();
			offsets.forEach((partition, offset) -> {
				if (offset != null) {
					result.put(partition, offset.offset());
				}
			});
			return result;
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not read offsets of group " + group + " on " + cluster, ex);
		}
	}

	/**
	 * Counts this run's records with kcat, or returns null when kcat is not installed.
	 */
	private @Nullable Long kcatCount(String cluster, String topic) {
		List<String> command = List.of("kcat", "-C", "-b", this.bootstrapServers.get(cluster), "-t", topic, "-e", "-q",
				"-X", "isolation.level=read_committed", "-f", "%s\\n");
		Process process;
		try {
			process = new ProcessBuilder(command).redirectErrorStream(false).start();
		}
		catch (IOException ex) {
			this.kcatMissing = true;
			return null;
		}
		String marker = "\"runId\":\"" + this.runId + "\"";
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
			long count = reader.lines().filter((line) -> line.contains(marker)).count();
			if (!process.waitFor(2, TimeUnit.MINUTES) || process.exitValue() != 0) {
				process.destroyForcibly();
				addProblem("kcat failed on " + cluster + " (exit " + (process.isAlive() ? "timeout" : process.exitValue()) + ")");
				return null;
			}
			return count;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Prints the report of a verification.
	 * @param out where to print
	 * @return whether it passed
	 */
	boolean report(PrintStream out) {
		this.facts.forEach((name, value) -> out.printf("  %-56s %s%n", name, value));
		this.explained.forEach((line) -> out.println("  explained by a reported heuristic outcome: " + line));
		if (this.problems.isEmpty()) {
			out.println("PASSED: nothing lost, nothing duplicated, nothing aborted visible, every key in order");
			return true;
		}
		out.println("FAILED:");
		this.problems.forEach((problem) -> out.println("  - " + problem));
		return false;
	}

	/**
	 * The checker as a command (see the class description).
	 * @param args the arguments
	 */
	public static void main(String[] args) {
		System.exit(run(args, System.out, System.err));
	}

	static int run(String[] args, PrintStream out, PrintStream err) {
		Map<String, String> clusters = new LinkedHashMap<>();
		Map<String, String> options = new HashMap<>();
		List<Path> logs = new ArrayList<>();
		boolean expectHeuristic = false;
		try {
			for (int i = 0; i < args.length; i++) {
				switch (args[i]) {
					case "--cluster" -> {
						String[] pair = args[++i].split("=", 2);
						clusters.put(pair[0], pair[1]);
					}
					case "--router-log" -> logs.add(Path.of(args[++i]));
					case "--expect-heuristic" -> expectHeuristic = true;
					case "--run-id", "--input", "--output", "--group", "--records", "--incarnations" ->
						options.put(args[i], args[++i]);
					default -> throw new IllegalArgumentException("unknown option " + args[i]);
				}
			}
			for (String required : List.of("--run-id", "--input", "--output", "--group")) {
				if (!options.containsKey(required)) {
					throw new IllegalArgumentException(required + " is required");
				}
			}
			if (!clusters.containsKey(Regions.EAST) || !clusters.containsKey(Regions.WEST)) {
				throw new IllegalArgumentException("--cluster east=... and --cluster west=... are required");
			}
		}
		catch (RuntimeException ex) {
			err.println("Verification: " + ex.getMessage());
			err.println("usage: Verification --cluster east=HOST:PORT --cluster west=HOST:PORT --run-id RUN --input TOPIC "
					+ "--output TOPIC --group GROUP [--records N] [--router-log FILE]... [--incarnations a,b] "
					+ "[--expect-heuristic]");
			return 2;
		}
		try {
			Verification verification = new Verification(clusters, options.get("--run-id"), options.get("--input"),
					options.get("--output"))
				.routerLogs(logs, expectHeuristic);
			if (options.containsKey("--incarnations")) {
				verification.incarnations(Arrays.asList(options.get("--incarnations").split(",")));
			}
			Integer records = options.containsKey("--records") ? Integer.valueOf(options.get("--records")) : null;
			verification.verify(Regions.load(), records, endOffsets(clusters.get(Regions.EAST), options.get("--input")),
					options.get("--group"));
			return verification.report(out) ? 0 : 1;
		}
		catch (RuntimeException ex) {
			err.println("Verification could not check the run: " + ex);
			return 2;
		}
	}

	/**
	 * Reads a topic's end offsets (control records included).
	 */
	static Map<TopicPartition, Long> endOffsets(String bootstrapServers, String topic) {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
			List<TopicPartition> partitions = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
				.get(topic).partitions().stream().map((info) -> new TopicPartition(topic, info.partition())).toList();
			Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
			partitions.forEach((partition) -> latest.put(partition, OffsetSpec.latest()));
			Map<TopicPartition, Long> end = new HashMap<>();
			admin.listOffsets(latest, new org.apache.kafka.clients.admin.ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED))
				.all().get(30, TimeUnit.SECONDS).forEach((partition, info) -> end.put(partition, info.offset()));
			return end;
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not read the end offsets of " + topic, ex);
		}
	}

}
