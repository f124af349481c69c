package dev.tandem.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.utils.AppInfoParser;

import dev.tandem.failover.FailoverProfile;
import dev.tandem.test.KafkaProcessCluster;

/**
 * The KIP-951 scenario: a 3-broker cluster, a topic of 100 partitions with replication
 * factor 3, producers sending real flight records at a steady rate, and repeated
 * disturbances: the leadership of all partitions moved at once (reassignment plus preferred
 * leader election), the broker leading the most partitions shut down gracefully, or that
 * broker killed ({@code SIGKILL}). All clients run side by side against the same cluster
 * during the same disturbances, so their numbers compare within one run:
 * <ul>
 * <li>{@code defaults}: the managed kafka-clients (4.1.2) with default settings;</li>
 * <li>{@code tandem}: the same client with {@link FailoverProfile#standard()};</li>
 * <li>{@code legacy}: kafka-clients 3.6.x (before KIP-951) with default settings, in a
 * separate JVM;</li>
 * <li>{@code defaults-consumer} and {@code tandem-consumer}: consumers of all partitions with
 * default settings and with the profile; their "latency" is the end-to-end delay of each
 * record (poll time minus create time), so a fetch pause after a leader change shows up as
 * late records and their recovery time is the consumer's time to resume fetching.</li>
 * </ul>
 * The controller and each broker run in a JVM of their own ({@link KafkaProcessCluster}, with
 * Kafka's production JVM settings: 1 GB heap, G1, 20 ms pause goal), so broker garbage
 * collection and JIT do not stall the clients' JVM, and a kill is a real {@code SIGKILL}.
 * Broker settings alternate between {@code tuned} ({@code replica.fetch.backoff.ms=50},
 * {@code broker.session.timeout.ms=2000}, {@code broker.heartbeat.interval.ms=500}) and
 * {@code stock} (Kafka's defaults 1000, 9000, 2000) by rolling restarts of the same cluster,
 * in the order A B B A A B ... so that slow drift of the machine's load hits both alike; after
 * each switch one unmeasured leadership move warms the restarted brokers up. Within a trial
 * the order of the scenarios rotates.
 * <p>
 * With {@code --rtt} the clients reach every broker through a {@code LatencyProxy} of
 * {@code tandem-test} ({@link KafkaProcessCluster.Builder#latencyProxies(boolean)}) that delays
 * each direction by half the round trip time, while replication and the controller's traffic
 * stay direct, as for clients in another zone or region than the brokers. Every scenario runs at
 * every round trip time in one run, the order of round trip times rotated per trial, with the
 * same clients and the same cluster, so ratios pair up across clients within a disturbance.
 * The proxies also count the client connections accepted during each disturbance: none during
 * a leadership move means no connection set-up is on that failover path.
 * <p>
 * For every disturbance and client it reports produce latency p50, p99, p99.9 and max of the
 * records sent from the start of the disturbance to the end of the observation window, and
 * the time to recover (from the start of the disturbance to the acknowledgement of the last
 * record slower than 3x the client's p99 before it, at least 50 ms); then per client the
 * median and range over trials, and per-trial ratios against {@code defaults} with their
 * range and sign count ({@link FailoverReport}).
 * <p>
 * Arguments ({@code --name value}): {@code --data} flights JSON file (required),
 * {@code --legacy-jar} kafka-clients 3.6.x jar (required for {@code legacy}),
 * {@code --report-dir} (default {@code .}), {@code --trials} per broker setting (5),
 * {@code --scenarios} ({@code move,shutdown,kill}), {@code --move-repeats} leadership moves
 * per trial and round trip time (1), {@code --clients} ({@code defaults,tandem,legacy,
 * defaults-consumer,tandem-consumer}; also {@code defaults-acks1}, {@code tandem-acks1} and
 * {@code legacy-acks1}, producers with {@code acks=1}, and {@code tandem-without-<key>}, the
 * profile without one setting), {@code --brokers} ({@code tuned,stock}), {@code --rtt} round
 * trip times in ms, such as {@code 0,10,40} (none: clients connect directly),
 * {@code --jitter-ms} extra one-way delay bound (0), {@code --rate} records per second per
 * client (100), {@code --partitions} (100), {@code --settle-ms} (30000), {@code --observe-ms}
 * (5000; for {@code kill} at least {@code broker.session.timeout.ms} + 5000),
 * {@code --warmup-moves} unmeasured leadership moves at start and after each switch of broker
 * settings (1), {@code --broker-heap} (1g), {@code --clean-p99-ms} (250, plus the round trip
 * time): trials where a producer's p99 before the disturbance exceeded this are marked noisy
 * and left out of the medians if any trial is clean, {@code --budget-minutes} (0 = none): no
 * disturbance starts that could end after this time, the report covers what ran.
 * <p>
 * The bench is its own load: four broker JVMs and the clients keep two cores busy, so run it
 * on an otherwise idle machine (check {@code uptime}) and keep the rate low; the figures of
 * past runs, with their commands, are in {@code docs/benchmarks.md}.
 * <pre class="code">
 * mvn -B -Pbench -pl bench -am -DskipTests verify -Dbench.args="--trials 4 --move-repeats 2 --rtt 0,10,40 --brokers tuned --settle-ms 10000 --budget-minutes 23"
 * </pre>
 * A smoke run that only proves the harness works (about 2 minutes):
 * {@code -Dbench.args="--trials 1 --rtt 0,40 --brokers tuned --settle-ms 2000 --observe-ms 2000 --partitions 12 --budget-minutes 2"}.
 *
 * @author Tandem
 * @since 0.1.0
 */
public final class FailoverBench {

	private static final String TOPIC = "kip951";

	private final Map<String, String> options;

	private final StringBuilder report = new StringBuilder();

	private FailoverBench(Map<String, String> options) {
		this.options = options;
	}

	/**
	 * Run the benchmark and print the report (also written to the report directory).
	 * @param args options as described on the class
	 * @throws Exception if the run fails
	 */
	public static void main(String[] args) throws Exception {
		new FailoverBench(BenchOptions.parse(args)).run();
		System.exit(0);
	}

	private String option(String name, String defaultValue) {
		return this.options.getOrDefault(name, defaultValue);
	}

	private int intOption(String name, int defaultValue) {
		return Integer.parseInt(option(name, Integer.toString(defaultValue)));
	}

	private void run() throws Exception {
		long benchStarted = System.nanoTime();
		Path data = Path.of(required("data"));
		FlightRecords records = FlightRecords.read(data);
		int trials = intOption("trials", 5);
		int moveRepeats = intOption("move-repeats", 1);
		int rate = intOption("rate", 100);
		int partitions = intOption("partitions", 100);
		List<String> scenarios = List.of(option("scenarios", "move,shutdown,kill").split(","));
		List<String> clientNames = List.of(
				option("clients", "defaults,tandem,legacy,defaults-consumer,tandem-consumer").split(","));
		List<String> settings = List.of(option("brokers", "tuned,stock").split(","));
		boolean proxies = this.options.containsKey("rtt");
		List<Integer> rtts = RegionClusters.roundTrips(option("rtt", "0"), "--rtt");
		Duration jitter = Duration.ofMillis(intOption("jitter-ms", 0));
		Duration budget = Duration.ofMinutes(intOption("budget-minutes", 0));
		settings.forEach(FailoverBench::brokerSettings);
		scenarios.forEach((scenario) -> {
			if (!List.of("move", "shutdown", "kill").contains(scenario)) {
				throw new IllegalArgumentException("--scenarios takes move, shutdown and/or kill, not " + scenario);
			}
		});
		if (trials < 1 || moveRepeats < 1) {
			throw new IllegalArgumentException("--trials and --move-repeats must be at least 1");
		}
		clientNames.forEach(FailoverBench::profileOf);
		List<String> brokerJvm = List.of("-Xms" + option("broker-heap", "1g"), "-Xmx" + option("broker-heap", "1g"),
				"-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
				"-XX:+ExplicitGCInvokesConcurrent", "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true");
		line("# Failover bench (KIP-951 scenario), " + LocalDateTime.now().withNano(0));
		line("");
		line("Command args: " + String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()) + " "
				+ this.options);
		line("Machine: " + Runtime.getRuntime().availableProcessors() + " cores, load average " + loadAverage()
				+ " at start; brokers in separate processes (1 controller + 3 brokers, Kafka "
				+ AppInfoParser.getVersion() + ", JVM " + String.join(" ", brokerJvm) + ")");
		line("Records: " + records.size() + " flights from " + data + "; " + rate + " records/s per client, "
				+ partitions + " partitions, RF 3, min.insync.replicas 2, acks=all, idempotent; " + trials
				+ " trials per scenario, round trip time and broker setting" + ((moveRepeats > 1)
						? " (" + moveRepeats + " leadership moves per trial)" : ""));
		line("Network: " + (proxies ? "clients reach every broker through a LatencyProxy (tandem-test) adding "
				+ "RTT/2 each way" + (jitter.isZero() ? "" : " plus up to " + jitter.toMillis() + " ms jitter")
				+ ", in the order " + rtts + " rotated per trial; replication and controller traffic direct"
				: "loopback, no proxy"));
		line("");
		List<String> order = settingsOrder(settings, trials);
		progress("Starting 3-broker cluster (" + order.get(0) + ": " + brokerSettings(order.get(0)) + ")");
		try (KafkaProcessCluster cluster = KafkaProcessCluster.builder()
			.name("bench")
			.brokerProperties(brokerSettings(order.get(0)))
			.jvmOptions(brokerJvm)
			.operationTimeout(Duration.ofMinutes(3))
			.latencyProxies(proxies)
			.build()
			.start()) {
			cluster.createTopic(TOPIC, partitions, (short) 3);
			if (proxies) {
				cluster.clientLatency(oneWay(rtts.get(0)), jitter);
			}
			Map<String, LatencyLog> logs = new LinkedHashMap<>();
			List<AutoCloseable> running = new ArrayList<>();
			String legacyVersion = null;
			for (String client : clientNames) {
				LatencyLog log = new LatencyLog();
				logs.put(client, log);
				switch (client) {
					case "legacy", "legacy-acks1" -> {
						LegacyProducer legacy = new LegacyProducer(Path.of(required("legacy-jar")), client,
								acksOf(client), cluster.clientBootstrapServers(), TOPIC, partitions, rate, data, log);
						running.add(legacy);
						legacyVersion = legacy.awaitReady();
					}
					case "defaults-consumer", "tandem-consumer" -> running.add(new ConsumerLoop(client,
							profileOf(client).consumerProperties(clientProperties(cluster, client)), TOPIC, partitions,
							log));
					default -> {
						Map<String, Object> properties = clientProperties(cluster, client);
						properties.putAll(acksOf(client));
						running.add(new ProducerLoop(client, profileOf(client).producerProperties(properties), TOPIC,
								partitions, rate, records, log::add)
							.start());
					}
				}
			}
			long settleMs = intOption("settle-ms", 30000);
			TimeUnit.MILLISECONDS.sleep(settleMs * 2);
			List<FailoverEvent> events = new ArrayList<>();
			String current = null;
			long longestEventNanos = 0;
			runs: for (int block = 0; block < order.size(); block++) {
				String setting = order.get(block);
				if (!setting.equals(current)) {
					if (current != null) {
						progress("Switching brokers to " + setting + " " + brokerSettings(setting) + " (rolling restart)");
						cluster.rollingRestart(brokerSettings(setting));
						rebalance(cluster, partitions);
					}
					current = setting;
					warmUp(cluster, partitions, settleMs);
				}
				int trial = block / settings.size() + 1;
				for (int r = 0; r < rtts.size(); r++) {
					int rtt = rtts.get((r + block) % rtts.size());
					if (proxies) {
						cluster.clientLatency(oneWay(rtt), jitter);
					}
					List<String> disturbances = new ArrayList<>();
					for (String scenario : scenarios) {
						for (int i = 0; i < (scenario.equals("move") ? moveRepeats : 1); i++) {
							disturbances.add(scenario);
						}
					}
					Collections.rotate(disturbances, block + r);
					int moves = 0;
					for (String scenario : disturbances) {
						long elapsed = System.nanoTime() - benchStarted;
						if (!budget.isZero() && elapsed + longestEventNanos + TimeUnit.SECONDS.toNanos(30) > budget.toNanos()) {
							progress("Time budget of " + budget.toMinutes() + " min reached after "
									+ TimeUnit.NANOSECONDS.toSeconds(elapsed) + " s: no more disturbances");
							line("Stopped by the time budget (--budget-minutes " + budget.toMinutes() + ") in trial "
									+ trial + ", before " + scenario + " at RTT " + rtt + " ms");
							line("");
							break runs;
						}
						String label = Integer.toString(trial);
						if (scenario.equals("move") && moveRepeats > 1) {
							label += "." + (++moves);
						}
						long started = System.nanoTime();
						events.add(disturb(cluster, setting, rtt, scenario, label, partitions, settleMs, proxies));
						longestEventNanos = Math.max(longestEventNanos, System.nanoTime() - started);
					}
				}
			}
			for (AutoCloseable client : running) {
				client.close();
			}
			line("Legacy client: " + ((legacyVersion != null) ? "kafka-clients " + legacyVersion : "not run")
					+ "; load average " + loadAverage() + " at the end; run took "
					+ Duration.ofNanos(System.nanoTime() - benchStarted).toSeconds() + " s");
			line("");
			FailoverReport report = new FailoverReport(this::line, intOption("clean-p99-ms", 250) * 1000L, logs);
			for (String setting : settings) {
				line("## Brokers " + setting + " " + brokerSettings(setting));
				line("");
				for (int rtt : rtts) {
					for (String scenario : scenarios) {
						report.section(setting, rtt, scenario, events.stream()
							.filter((event) -> event.setting().equals(setting) && event.rttMs() == rtt
									&& event.scenario().equals(scenario))
							.toList());
					}
				}
			}
			for (String setting : settings) {
				report.summary(setting);
			}
		}
		Path reportDir = Path.of(option("report-dir", "."));
		Files.createDirectories(reportDir);
		Path file = reportDir.resolve("failover-bench-"
				+ LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + ".md");
		Files.writeString(file, this.report);
		System.out.println("Report written to " + file);
	}

	private static Duration oneWay(int rttMs) {
		return Duration.ofNanos(TimeUnit.MILLISECONDS.toNanos(rttMs) / 2);
	}

	/**
	 * The profile of a client: {@code defaults} and {@code defaults-consumer} none,
	 * {@code tandem} and {@code tandem-consumer} the standard one, {@code tandem-without-<key>}
	 * the standard one without that setting (to measure what one value contributes).
	 */
	private static FailoverProfile profileOf(String client) {
		return switch (client) {
			case "defaults", "defaults-consumer", "legacy", "defaults-acks1", "legacy-acks1" -> FailoverProfile.none();
			case "tandem", "tandem-consumer", "tandem-acks1" -> FailoverProfile.standard();
			default -> {
				String prefix = "tandem-without-";
				if (client.startsWith(prefix)
						&& FailoverProfile.standard().setting(client.substring(prefix.length())) != null) {
					yield FailoverProfile.standard().withoutSetting(client.substring(prefix.length()));
				}
				throw new IllegalArgumentException("Unknown client " + client + "; --clients takes defaults, tandem, "
						+ "legacy, defaults-consumer, tandem-consumer, defaults-acks1, tandem-acks1, legacy-acks1 and "
						+ "tandem-without-<a key of FailoverProfile>");
			}
		};
	}

	/**
	 * The {@code -acks1} producers send with {@code acks=1} (so without idempotence): the
	 * leader acknowledges without waiting for its followers, so their latency shows the
	 * client's own way to the new leader without the followers' switch-over that bounds an
	 * {@code acks=all} send.
	 */
	private static Map<String, String> acksOf(String client) {
		return client.endsWith("-acks1") ? Map.of("acks", "1", "enable.idempotence", "false") : Map.of();
	}

	private String required(String name) {
		String value = this.options.get(name);
		if (value == null) {
			throw new IllegalArgumentException("--" + name + " is required");
		}
		return value;
	}

	/**
	 * Broker settings in the order A B B A A B ...: each setting's trials spread over the
	 * whole run, and one rolling restart per trial rather than two.
	 */
	private static List<String> settingsOrder(List<String> settings, int trials) {
		List<String> order = new ArrayList<>();
		for (int trial = 0; trial < trials; trial++) {
			List<String> round = new ArrayList<>(settings);
			if (trial % 2 == 1) {
				Collections.reverse(round);
			}
			order.addAll(round);
		}
		return order;
	}

	private static Map<String, Object> brokerSettings(String setting) {
		return switch (setting) {
			case "tuned" -> orderedMap("replica.fetch.backoff.ms", 50, "broker.session.timeout.ms", 2000,
					"broker.heartbeat.interval.ms", 500);
			case "stock" -> orderedMap("replica.fetch.backoff.ms", 1000, "broker.session.timeout.ms", 9000,
					"broker.heartbeat.interval.ms", 2000);
			default -> throw new IllegalArgumentException("--brokers takes tuned and/or stock, not " + setting);
		};
	}

	private static Map<String, Object> orderedMap(Object... keysAndValues) {
		Map<String, Object> map = new LinkedHashMap<>();
		for (int i = 0; i < keysAndValues.length; i += 2) {
			map.put((String) keysAndValues[i], keysAndValues[i + 1]);
		}
		return map;
	}

	/**
	 * Unmeasured leadership moves: JIT and connection warm-up, since the first move after
	 * brokers (re)start is always the slowest.
	 */
	private void warmUp(KafkaProcessCluster cluster, int partitions, long settleMs) throws Exception {
		for (int i = 0; i < intOption("warmup-moves", 1); i++) {
			awaitFullIsr(cluster, partitions);
			cluster.moveLeadership(TOPIC);
			TimeUnit.MILLISECONDS.sleep(settleMs);
		}
	}

	private FailoverEvent disturb(KafkaProcessCluster cluster, String setting, int rtt, String scenario, String trial,
			int partitions, long settleMs, boolean proxies) throws Exception {
		awaitFullIsr(cluster, partitions);
		TimeUnit.MILLISECONDS.sleep(settleMs);
		long observeMs = intOption("observe-ms", 5000);
		long connectionsBefore = proxies ? acceptedConnections(cluster) : -1;
		long start = System.currentTimeMillis();
		Integer victim = null;
		switch (scenario) {
			case "move" -> cluster.moveLeadership(TOPIC);
			case "shutdown" -> {
				victim = busiestBroker(cluster);
				cluster.stop(victim);
			}
			case "kill" -> {
				victim = busiestBroker(cluster);
				cluster.kill(victim);
				// the controller fences a killed broker only after its session expires
				observeMs = Math.max(observeMs,
						((Number) brokerSettings(setting).get("broker.session.timeout.ms")).longValue() + 5000);
			}
			default -> throw new IllegalArgumentException("Unknown scenario " + scenario);
		}
		long eventEnd = System.currentTimeMillis();
		TimeUnit.MILLISECONDS.sleep(observeMs);
		long end = System.currentTimeMillis();
		long newConnections = proxies ? acceptedConnections(cluster) - connectionsBefore : -1;
		if (victim != null) {
			cluster.restart(victim);
			awaitFullIsr(cluster, partitions);
			rebalance(cluster, partitions);
		}
		progress(setting + " RTT " + rtt + " ms " + scenario + " trial " + trial + ": disturbance took "
				+ (eventEnd - start) + " ms" + ((victim != null) ? " (broker " + victim + ")" : "")
				+ ((newConnections >= 0) ? ", " + newConnections + " new client connections" : "") + ", load average "
				+ loadAverage());
		return new FailoverEvent(setting, rtt, scenario, trial, start - settleMs, start, eventEnd, end, newConnections);
	}

	private static long acceptedConnections(KafkaProcessCluster cluster) {
		return cluster.brokerIds().stream().mapToLong((id) -> cluster.latencyProxy(id).acceptedConnections()).sum();
	}

	private static Map<String, Object> clientProperties(KafkaProcessCluster cluster, String name) {
		Map<String, Object> properties = new HashMap<>();
		properties.put("bootstrap.servers", cluster.clientBootstrapServers());
		properties.put("client.id", name);
		return properties;
	}

	private static int busiestBroker(KafkaProcessCluster cluster) throws Exception {
		Map<Integer, Integer> leaderships = new HashMap<>();
		for (TopicPartitionInfo info : describe(cluster).partitions()) {
			if (info.leader() != null) {
				leaderships.merge(info.leader().id(), 1, Integer::sum);
			}
		}
		return leaderships.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
	}

	/**
	 * Give every partition back to its preferred (first) replica, so that each trial starts
	 * from leaderships spread evenly over the brokers.
	 */
	private static void rebalance(KafkaProcessCluster cluster, int partitions) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
		while (true) {
			List<TopicPartition> notPreferred = new ArrayList<>();
			for (TopicPartitionInfo info : describe(cluster).partitions()) {
				if (info.leader() == null || info.leader().id() != info.replicas().get(0).id()) {
					notPreferred.add(new TopicPartition(TOPIC, info.partition()));
				}
			}
			if (notPreferred.isEmpty()) {
				return;
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException(notPreferred.size() + " partitions of " + TOPIC
						+ " did not return to their preferred leader");
			}
			try {
				cluster.admin().electLeaders(ElectionType.PREFERRED, new HashSet<>(notPreferred)).all().get();
			}
			catch (ExecutionException ex) {
				// some elections not needed or not yet possible: check again
			}
			TimeUnit.MILLISECONDS.sleep(200);
		}
	}

	private static TopicDescription describe(KafkaProcessCluster cluster) throws Exception {
		return cluster.admin().describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC);
	}

	private static void awaitFullIsr(KafkaProcessCluster cluster, int partitions) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
		while (true) {
			TopicDescription description = describe(cluster);
			boolean full = description.partitions().size() == partitions && description.partitions()
				.stream()
				.allMatch((info) -> info.leader() != null && info.isr().size() == info.replicas().size());
			if (full) {
				return;
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Partitions of " + TOPIC + " did not get a full ISR back");
			}
			TimeUnit.MILLISECONDS.sleep(200);
		}
	}

	private static String loadAverage() {
		return String.format(Locale.ROOT, "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
	}

	private void line(String text) {
		System.out.println(text);
		this.report.append(text).append('\n');
	}

	private static void progress(String text) {
		System.err.println("[bench] " + text);
	}

}
