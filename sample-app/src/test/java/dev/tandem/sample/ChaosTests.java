package dev.tandem.sample;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The chaos suite (profile {@code chaos}, not in the default build): each of two clusters runs
 * in its own JVM ({@link ClusterHost}), the flight router runs as a separate JVM between them,
 * and every run injects one fault: the router's JVM halted (as {@code kill -9}: no shutdown hooks,
 * no graceful close) at each step of the protocol or at a random moment, a leader broker stopped
 * and restarted, or a rolling restart of a whole cluster. A clean router then finishes the run,
 * and the checker ({@link Verification}: {@code read_committed} counts by the Java client and by
 * kcat, duplicates, lost, misrouted, committed source offsets versus input) must pass.
 * <p>
 * {@code mvn -B -Pchaos -pl sample-app -am verify -Dchaos.runs=40}; runs are spread evenly over
 * the faults.
 */
@Tag("chaos")
class ChaosTests {

	private static final ObjectMapper JSON = JsonMapper.builder().build();

	private static final int RECORDS_PER_RUN = Integer.getInteger("chaos.records", 300);

	private static final Path WORK = Path.of("target/chaos");

	private static Host east;

	private static Host west;

	private static JsonNode flights;

	enum Fault {

		HALT_BEFORE_PREPARE, HALT_AFTER_PREPARE, HALT_AFTER_DECISION, HALT_MID_COMMIT, HALT_AFTER_COMMIT,
		KILL_AT_RANDOM, LEADER_BROKER_RESTART, ROLLING_RESTART_WEST;

	}

	@BeforeAll
	static void startClusters() throws Exception {
		Files.createDirectories(WORK);
		east = Host.start("east");
		west = Host.start("west");
		try (InputStream in = ChaosTests.class.getResourceAsStream("/data/flights-20k.json")) {
			flights = JSON.readTree(in);
		}
	}

	@AfterAll
	static void stopClusters() {
		if (east != null) {
			east.close();
		}
		if (west != null) {
			west.close();
		}
	}

	@Test
	void everyFaultRunEndsWithNothingLostNothingDuplicated() throws Exception {
		int runs = Integer.getInteger("chaos.runs", 16);
		Map<Fault, int[]> table = new EnumMap<>(Fault.class);
		List<String> failures = new ArrayList<>();
		Random random = new Random(Long.getLong("chaos.seed", 42L));
		for (int run = 0; run < runs; run++) {
			Fault fault = Fault.values()[run % Fault.values().length];
			long start = System.nanoTime();
			List<String> problems = run(run, fault, random);
			int[] counts = table.computeIfAbsent(fault, (f) -> new int[2]);
			counts[0]++;
			if (problems.isEmpty()) {
				counts[1]++;
			}
			else {
				failures.add("run " + run + " " + fault + ": " + problems);
			}
			System.out.printf("chaos run %d %-22s %s (%.1f s)%n", run, fault, problems.isEmpty() ? "PASS" : "FAIL " + problems,
					(System.nanoTime() - start) / 1e9);
		}
		System.out.println("fault                    runs  passed");
		table.forEach((fault, counts) -> System.out.printf("%-24s %4d  %6d%n", fault, counts[0], counts[1]));
		assertThat(failures).isEmpty();
	}

	private List<String> run(int run, Fault fault, Random random) throws Exception {
		String runId = "chaos" + run + "-" + Long.toHexString(random.nextLong()).substring(0, 6);
		String in = "in-" + run;
		String out = "out-" + run;
		east.command("create " + in + " 3");
		east.command("create " + out + " 3");
		west.command("create " + out + " 3");
		Map<TopicPartition, Long> end = load(in, runId, run);
		Path dataDir = WORK.resolve("coordinator-" + run);
		List<String> args = routerArgs(run, runId, in, out, dataDir);
		switch (fault) {
			case KILL_AT_RANDOM -> {
				Process router = Router.start(args, WORK.resolve("router-" + run + "-a.log"));
				// The fault itself: SIGKILL at a random moment of the run, not a wait for a condition.
				Thread.sleep(4000 + random.nextInt(4000));
				router.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
			}
			case LEADER_BROKER_RESTART, ROLLING_RESTART_WEST -> {
				Process router = Router.start(args, WORK.resolve("router-" + run + "-a.log"));
				// Fault the brokers while the router is mid-run: once it has committed something.
				await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200))
					.until(() -> committed(run, end) > 0);
				if (fault == Fault.LEADER_BROKER_RESTART) {
					String leader = west.command("leader " + out + " 0");
					west.command("stop " + leader);
					west.command("restart " + leader);
				}
				else {
					for (int broker : new int[] { 0, 1, 2 }) {
						west.command("stop " + broker);
						west.command("restart " + broker);
					}
				}
				awaitDone(end, run, Duration.ofMinutes(3));
				router.destroy();
				router.waitFor(60, TimeUnit.SECONDS);
				return verify(runId, in, out, run, end);
			}
			default -> {
				String step = fault.name().substring("HALT_".length());
				List<String> halting = new ArrayList<>(args);
				halting.add("--flights.halt-at-step=" + step);
				halting.add("--flights.halt-at-transaction=" + (2 + random.nextInt(4)));
				Process router = Router.start(halting, WORK.resolve("router-" + run + "-a.log"));
				if (!router.waitFor(3, TimeUnit.MINUTES)) {
					router.destroyForcibly();
					return List.of("router did not halt at " + step);
				}
				if (router.exitValue() != 137) {
					return List.of("router exited " + router.exitValue() + " instead of halting at " + step);
				}
			}
		}
		Process router = Router.start(args, WORK.resolve("router-" + run + "-b.log"));
		try {
			awaitDone(end, run, Duration.ofMinutes(3));
		}
		finally {
			router.destroy();
			router.waitFor(60, TimeUnit.SECONDS);
		}
		return verify(runId, in, out, run, end);
	}

	private List<String> verify(String runId, String in, String out, int run, Map<TopicPartition, Long> end) {
		Verification verification = new Verification(Map.of("east", east.bootstrap, "west", west.bootstrap), runId, in, out);
		boolean ok = verification.verify(Regions.load(), RECORDS_PER_RUN, end, "g-" + run);
		return ok ? List.of() : verification.problems();
	}

	private static List<String> routerArgs(int run, String runId, String in, String out, Path dataDir) {
		return List.of("--tandem.clusters.east.bootstrap-servers=" + east.bootstrap,
				"--tandem.clusters.west.bootstrap-servers=" + west.bootstrap,
				"--tandem.clusters.east.consumer.max.poll.records=50", "--tandem.transaction.slots=1",
				"--tandem.transaction.instance-id=chaos-" + run,
				"--tandem.coordinator.data-dir=" + dataDir.toAbsolutePath(), "--flights.group=g-" + run,
				"--flights.run-id=" + runId, "--flights.input-topic=" + in, "--flights.output-topic=" + out,
				"--server.port=0", "--logging.level.root=WARN", "--logging.level.dev.tandem=INFO");
	}

	private Map<TopicPartition, Long> load(String topic, String runId, int run) throws Exception {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, east.bootstrap);
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		Map<TopicPartition, Long> end = new HashMap<>();
		try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
				new ByteArraySerializer())) {
			for (int seq = 0; seq < RECORDS_PER_RUN; seq++) {
				JsonNode flight = flights.get((run * RECORDS_PER_RUN + seq) % flights.size());
				ObjectNode value = JSON.createObjectNode();
				value.put("runId", runId);
				value.put("seq", seq);
				value.setAll((ObjectNode) flight);
				producer.send(new ProducerRecord<>(topic, flight.get("origin").asString().getBytes(StandardCharsets.UTF_8),
						JSON.writeValueAsBytes(value)), (metadata, ex) -> {
							if (metadata != null) {
								synchronized (end) {
									end.merge(new TopicPartition(metadata.topic(), metadata.partition()),
											metadata.offset() + 1, Math::max);
								}
							}
						}).get();
			}
		}
		for (int p = 0; p < 3; p++) {
			end.putIfAbsent(new TopicPartition(topic, p), 0L);
		}
		return end;
	}

	private void awaitDone(Map<TopicPartition, Long> end, int run, Duration timeout) {
		long target = end.values().stream().mapToLong(Long::longValue).sum();
		await().atMost(timeout).pollInterval(Duration.ofMillis(500)).until(() -> committed(run, end) >= target);
	}

	private long committed(int run, Map<TopicPartition, Long> end) throws Exception {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", east.bootstrap))) {
			Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets("g-" + run)
				.partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
			return end.keySet().stream()
				.mapToLong((tp) -> (offsets.get(tp) != null) ? offsets.get(tp).offset() : 0).sum();
		}
	}

	/**
	 * Starts the flight router as a separate JVM.
	 */
	static final class Router {

		static Process start(List<String> args, Path log) throws IOException {
			List<String> command = new ArrayList<>(List.of(javaBin(), "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
					System.getProperty("java.class.path"), FlightRouterApplication.class.getName()));
			command.addAll(args);
			return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		}

	}

	static String javaBin() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString();
	}

	/**
	 * A {@link ClusterHost} process and its command channel.
	 */
	static final class Host implements AutoCloseable {

		final Process process;

		final String bootstrap;

		private final BufferedReader out;

		private final BufferedWriter in;

		private Host(Process process, String bootstrap, BufferedReader out, BufferedWriter in) {
			this.process = process;
			this.bootstrap = bootstrap;
			this.out = out;
			this.in = in;
		}

		static Host start(String name) throws IOException {
			Path file = WORK.resolve(name + ".bootstrap");
			Process process = new ProcessBuilder(javaBin(), "-Xmx768m", "-cp", System.getProperty("java.class.path"),
					ClusterHost.class.getName(), name, file.toString())
				.redirectError(WORK.resolve(name + "-host.err").toFile())
				.start();
			BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
			BufferedWriter in = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
			String line;
			while ((line = out.readLine()) != null) {
				if (line.startsWith("ready ")) {
					return new Host(process, line.substring("ready ".length()).trim(), out, in);
				}
			}
			throw new IllegalStateException("Cluster host " + name + " died during start-up");
		}

		synchronized String command(String command) throws IOException {
			this.in.write(command);
			this.in.newLine();
			this.in.flush();
			String line;
			while ((line = this.out.readLine()) != null) {
				if (line.startsWith("ok")) {
					return line.substring(2).trim();
				}
				if (line.startsWith("error")) {
					throw new IllegalStateException(command + ": " + line);
				}
			}
			throw new IllegalStateException("Cluster host died on " + command);
		}

		@Override
		public void close() {
			try {
				command("quit");
				this.process.waitFor(60, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				this.process.destroyForcibly();
			}
		}

	}

}
