package dev.tandem.bench.throughput;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.bench.BenchOptions;
import dev.tandem.bench.CpuSteal;
import dev.tandem.bench.FlightRecords;
import dev.tandem.bench.RegionClusters;
import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.transaction.CrossClusterProcessor;

/**
 * Throughput of exactly-once copies (issue #13): the same real records copied from cluster
 * {@code east} to cluster {@code west} by each contender, in interleaved rounds of one run, on the
 * same clusters:
 * <ul>
 * <li>{@code alo-async} (a): at-least-once, consumer to producer, {@code commitAsync} of the polls
 * the target acknowledged, no flush per poll: the best at-least-once copy a user would write and
 * the reference of every ratio (issue 25);</li>
 * <li>{@code alo} (a'): at-least-once, consumer to producer, {@code commitSync} after
 * {@code flush()} per poll (the careful but slow variant; the reference before issue 25);</li>
 * <li>{@code kafka-eos} (b): Kafka's own exactly-once on one cluster (east to east):
 * consume-transform-produce with {@code sendOffsetsToTransaction}, one transaction per poll;</li>
 * <li>{@code tandem} (c): Tandem's core API, one cross-cluster transaction per poll
 * ({@code begin()}, sends, {@code sendOffsets}, {@code commit()});</li>
 * <li>{@code tandem-pipelined} (d): Tandem's {@code CrossClusterProcessor}, transactions in
 * flight and spanning polls (keys {@code depth}, {@code max-records}, {@code max-interval}, {@code close-when-idle},
 * {@code slots});</li>
 * <li>{@code listener} (e): a Spring Boot application context on the starter in this JVM, a
 * batch {@code @KafkaListener} that is {@code @CrossClusterTransactional} (keys
 * {@code tandem.*}, {@code spring.*} become its properties).</li>
 * </ul>
 * A contender may be listed several times with its own settings, {@code name[key=value,...]},
 * to sweep them in one run: client keys override {@code --client-config} for that contender.
 * <p>
 * Method: the clusters (Kafka's KRaft test kit in this JVM, {@code --brokers} brokers and one
 * controller each; with {@code --rtt}, broker processes whose east is reached by the copiers through
 * latency proxies, see below), a source topic of {@code --partitions} partitions (replication factor
 * {@code min(3, brokers)}, {@code min.insync.replicas} {@code min(2, brokers)},
 * {@code LogAppendTime}), and {@code --records} real flight records (the repository's
 * {@code flights-20k.json}, repeated; key = record id) produced to it once. Every round runs each
 * contender once, in an order rotated every round, with a fresh target topic, group and
 * transactional ids. Per contender and round: (1) <b>throughput</b>: the copier starts from the
 * earliest offset; records/s = the backlog over the time from its first poll that returned
 * records to the moment the target's {@code read_committed} reader has seen every backlog record
 * (group join and application start-up are not counted); CPU per record = the process's CPU time
 * (brokers, copier and reader; {@code com.sun.management.OperatingSystemMXBean}) over the same
 * window per record; (2) <b>latency</b>: then {@code --live-rate} records/s are produced for
 * {@code --live-seconds} to a live topic the copier also reads (append time stamped by the
 * broker), and the reader records now minus that timestamp when each becomes visible
 * ({@link TargetReader}, HdrHistogram); (3) <b>count check</b>: the copier stops, the reader
 * reads up to the last stable offset, and the target must hold every backlog and live id exactly
 * once. The report gives the medians over rounds and the ratios of the medians to the fastest
 * at-least-once copy of the run ((a) or (a')) and to (b).
 * For the transactional contenders it also gives the producers' own time per transaction in
 * {@code beginTransaction}, {@code sendOffsetsToTransaction}, {@code flush} and
 * {@code commitTransaction} (kafka-clients' {@code txn-*-time-ns-total} metrics), per cluster.
 * <p>
 * <b>Across regions</b> ({@code --rtt 0,40,80}, issue 25): east and west run as broker processes
 * ({@code KafkaProcessCluster} of {@code tandem-test}, {@code --brokers} 1 by default), east's
 * client listeners behind a {@code LatencyProxy} each; the copiers (and the coordinator) sit
 * beside west and reach east through the proxies ("consume remote, produce local"), while the
 * backlog and live producers, the target's reader and the admin clients connect directly. Every
 * contender runs at each round trip time in every round, the order of the round trip times and
 * of the contenders rotated every round; the report has one table per round trip time and a
 * summary. CPU per record then counts this JVM only (copiers, reader, proxies, coordinator).
 * <p>
 * Run from the repository root (about 10 minutes with the defaults): see {@code docs/benchmarks.md},
 * section Throughput. Options ({@code --name value}): {@code --data} flights JSON
 * ({@code sample-app/src/main/resources/data/flights-20k.json}), {@code --records} (200000),
 * {@code --rounds} (3), {@code --warmup-rounds} not reported, before them (1), {@code --contenders}
 * ({@link #DEFAULT_CONTENDERS}; with {@code --rtt} {@link #DEFAULT_REGION_CONTENDERS}), {@code --rtt} round
 * trip times in ms (none: in-process clusters), {@code --client-config} settings of every contender's clients, which a
 * contender's own keys override ({@link #DEFAULT_CLIENT_CONFIG}), {@code --brokers} (3; with {@code --rtt} 1), {@code --partitions}
 * (6), {@code --live-rate} (5000), {@code --live-seconds} (10), {@code --copy-timeout} per copy
 * (180s), {@code --report} ({@code bench/target/throughput-bench.md}).
 *
 * @since 0.1.0
 */
public final class ThroughputBench {

	private static final Logger logger = LoggerFactory.getLogger(ThroughputBench.class);

	private static final String EAST = "east";

	private static final String WEST = "west";

	private static final String SOURCE_TOPIC = "flights";

	/**
	 * The contenders of a run without {@code --contenders}: the baselines at their best measured
	 * settings, the core API contenders with the poll size their application chooses, the starter
	 * on its own defaults (its listener consumers poll up to 5,000 records).
	 */
	static final String DEFAULT_CONTENDERS = "alo-async[max.poll.records=2000],alo[max.poll.records=2000],"
			+ "kafka-eos[max.poll.records=5000,retry.backoff.ms=2],tandem[max.poll.records=2000],"
			+ "tandem-pipelined[max.poll.records=2000],listener";

	/**
	 * The contenders of a run with {@code --rtt} without {@code --contenders}: the copies of issue
	 * 25's table (both at-least-once copies, the pipelined processor) and the starter's listener;
	 * Kafka's single-cluster copy has no round trip to pay and the sequential one is the slowest,
	 * so they run only when listed.
	 */
	static final String DEFAULT_REGION_CONTENDERS = "alo-async[max.poll.records=2000],alo[max.poll.records=2000],"
			+ "tandem-pipelined[max.poll.records=2000],listener";

	/**
	 * The client settings of every contender without {@code --client-config}: Tandem's own
	 * {@code retry.backoff.ms} (FailoverProfile), given to the baselines too.
	 */
	static final String DEFAULT_CLIENT_CONFIG = "retry.backoff.ms=10";

	private final Map<String, String> options;

	private final List<Contender> contenders;

	private final Map<String, String> clientConfig;

	private final int records;

	private final int rounds;

	private final int warmupRounds;

	private final int partitions;

	private final int brokers;

	private final int liveRate;

	private final int liveRecords;

	private final Duration copyTimeout;

	private final boolean regions;

	private final List<Integer> rtts;

	private final Map<Integer, Map<Contender, List<RoundResult>>> results = new LinkedHashMap<>();

	private ThroughputBench(Map<String, String> options) {
		this.options = options;
		this.regions = options.containsKey("rtt");
		this.rtts = RegionClusters.roundTrips(option("rtt", "0"), "--rtt");
		this.contenders = Contender.parseAll(option("contenders",
				this.regions ? DEFAULT_REGION_CONTENDERS : DEFAULT_CONTENDERS));
		this.clientConfig = BenchOptions.pairs(option("client-config", DEFAULT_CLIENT_CONFIG),
				"--client-config");
		this.records = Integer.parseInt(option("records", "200000"));
		this.rounds = Integer.parseInt(option("rounds", "3"));
		this.warmupRounds = Integer.parseInt(option("warmup-rounds", "1"));
		this.partitions = Integer.parseInt(option("partitions", "6"));
		this.brokers = Integer.parseInt(option("brokers", this.regions ? "1" : "3"));
		this.liveRate = Integer.parseInt(option("live-rate", "5000"));
		this.liveRecords = this.liveRate * Integer.parseInt(option("live-seconds", "10"));
		this.copyTimeout = BenchOptions.duration(option("copy-timeout", "180s"));
		if (this.warmupRounds < 0) {
			throw new IllegalArgumentException("--warmup-rounds must be 0 or more");
		}
		if (this.records < 1 || this.rounds < 1 || this.partitions < 1 || this.brokers < 1 || this.liveRate < 1
				|| this.liveRecords < 1) {
			throw new IllegalArgumentException(
					"--records, --rounds, --partitions, --brokers, --live-rate and --live-seconds must be 1 or more");
		}
		if (this.records + this.liveRecords > 999_999_999) {
			throw new IllegalArgumentException("--records plus live records must stay below 10^9 (ids are 9 digits)");
		}
	}

	/**
	 * Runs every contender in every round and prints the report (also written to {@code --report}).
	 * @param args options, see the class documentation
	 * @throws Exception if the clusters or the coordinator cannot start
	 */
	public static void main(String[] args) throws Exception {
		ThroughputBench bench = new ThroughputBench(BenchOptions.parse(args));
		String report = bench.run();
		System.out.println(report);
		Path file = Path.of(bench.option("report", "bench/target/throughput-bench.md"));
		if (file.toAbsolutePath().getParent() != null) {
			Files.createDirectories(file.toAbsolutePath().getParent());
		}
		Files.writeString(file, report, StandardCharsets.UTF_8);
		System.out.println("Report written to " + file.toAbsolutePath());
		System.exit(0);
	}

	private String option(String name, String defaultValue) {
		return this.options.getOrDefault(name, defaultValue);
	}

	private Path data() {
		return FlightRecords.locate(this.options.get("data"));
	}

	private String run() throws Exception {
		Path data = data();
		FlightRecords flights = FlightRecords.read(data);
		Instant startedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS);
		double loadAtStart = loadAverage();
		CpuSteal stealAtStart = CpuSteal.sample();
		long runStart = System.nanoTime();
		Path work = Files.createTempDirectory("tandem-throughput-bench");
		short replication = (short) Math.min(3, this.brokers);
		StringBuilder setup = new StringBuilder();
		try {
			Map<String, String> brokerProperties = Map.of("log.retention.check.interval.ms", "30000");
			progress("Starting clusters east and west, " + this.brokers + " broker(s) each"
					+ (this.regions ? ", as processes, east behind latency proxies" : ""));
			long clustersStart = System.nanoTime();
			try (RegionClusters kafka = this.regions
					? RegionClusters.processes(EAST, WEST, this.brokers, brokerProperties)
					: RegionClusters.inProcess(EAST, WEST, this.brokers, brokerProperties)) {
				long clustersMs = Duration.ofNanos(System.nanoTime() - clustersStart).toMillis();
				RegionClusters.Cluster east = kafka.source();
				east.createTopic(SOURCE_TOPIC, this.partitions, replication, Map.of("message.timestamp.type", "LogAppendTime"));
				long produceStart = System.nanoTime();
				produceBacklog(east.bootstrapServers(), flights);
				long produceMs = Duration.ofNanos(System.nanoTime() - produceStart).toMillis();
				setup.append(String.format(Locale.ROOT,
						"- Clusters: east (source) and west (target), each %d broker(s) + 1 controller, started in %.1f s; "
								+ "every topic %d partitions, replication factor %d, min.insync.replicas %d; %s%n",
						this.brokers, clustersMs / 1000.0, this.partitions, replication, Math.min(2, this.brokers),
						kafka.describe()));
				if (this.regions) {
					setup.append("- Round trip times between the copier and east: ").append(this.rtts)
						.append(" ms, every contender at each, the order of the round trip times and of the contenders "
								+ "rotated every round; (b) kafka-eos copies east to east beside east (no round trip)\n");
				}
				setup.append(String.format(Locale.ROOT,
						"- Backlog: %,d records (%,d real flights from %s, repeated; key = record id) produced once to east/%s "
								+ "(LogAppendTime) in %.1f s%n",
						this.records, flights.size(), data, SOURCE_TOPIC, produceMs / 1000.0));
				setup.append(String.format(Locale.ROOT,
						"- Latency phase per copy: %,d live records at %,d records/s to a live topic on east, after the backlog is copied%n",
						this.liveRecords, this.liveRate));
				setup.append("- Client settings of every contender (beyond acks=all, idempotence, auto.offset.reset=earliest): ")
					.append(this.clientConfig).append('\n');
				// one coordinator for every manager here: a shared log, whose leases see a duplicate instance
				try (EmbeddedCoordinator coordinator = EmbeddedCoordinator.builder(work.resolve("coordinator"))
						.client((log) -> log.sharedByInstances(true))
						.start();
						KafkaProducer<byte[], byte[]> live = new KafkaProducer<>(producerConfig(east.bootstrapServers(), 0),
								new ByteArraySerializer(), new ByteArraySerializer())) {
					setup.append("- Tandem (c), (d): embedded Ratis coordinator (1 peer, log on disk); (e): the starter's own embedded coordinator\n");
					setup.append("- Unless a contender sets them: (d) depth ")
						.append(CrossClusterProcessor.DEFAULT_DEPTH)
						.append(", max-records ")
						.append(CrossClusterProcessor.DEFAULT_MAX_RECORDS)
						.append(", max-interval ")
						.append(CrossClusterProcessor.DEFAULT_MAX_INTERVAL.toMillis())
						.append(" ms, close-when-idle false; (e) the starter's defaults (listener consumers poll "
								+ "up to 5,000 records, tandem.listener.pipeline-depth " + CrossClusterProcessor.DEFAULT_DEPTH + ", no per-record tandem.send observation)\n");
					for (int rtt : this.rtts) {
						Map<Contender, List<RoundResult>> perContender = new LinkedHashMap<>();
						for (Contender contender : this.contenders) {
							perContender.put(contender, new ArrayList<>());
						}
						this.results.put(rtt, perContender);
					}
					setup.append(String.format(Locale.ROOT,
							"- Rounds: %d warm-up round(s) (not reported), then %d measured, contender order rotated every round%n",
							this.warmupRounds, this.rounds));
					for (int round = 1 - this.warmupRounds; round <= this.rounds; round++) {
						for (int j = 0; j < this.rtts.size(); j++) {
							int rtt = this.rtts.get(Math.floorMod(j + round - 1, this.rtts.size()));
							kafka.roundTrip(rtt);
							for (int i = 0; i < this.contenders.size(); i++) {
								int index = Math.floorMod(i + round - 1, this.contenders.size());
								Contender contender = this.contenders.get(index);
								RoundResult result = copy(kafka, coordinator, live, flights, contender, index, round, rtt,
										work);
								if (round > 0) {
									this.results.get(rtt).get(contender).add(result);
								}
								progress(String.format(Locale.ROOT,
										"%s RTT %3d ms %-40s %8.0f records/s  e2e p50 %4d ms p99 %4d ms  CPU %5.1f us/record  %s  (load %.2f)",
										(round > 0) ? "round " + round + "/" + this.rounds : "warm-up " + (1 - round), rtt,
										contender.spec(), result.recordsPerSecond(), result.latencyP50Ms(),
										result.latencyP99Ms(), result.cpuMicrosPerRecord(), result.check(), result.load()));
							}
						}
					}
				}
			}
		}
		finally {
			BenchOptions.deleteRecursively(work);
		}
		setup.append("- Taken by the virtual machine's host during the run: ")
			.append(CpuSteal.between(stealAtStart, CpuSteal.sample()))
			.append("; compare runs by their ratios, not their records/s\n");
		return ThroughputReport.render(startedAt, loadAtStart, loadAverage(),
				String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()) + " " + this.options,
				setup.toString(), Duration.ofNanos(System.nanoTime() - runStart), this.results, this.regions);
	}

	private void produceBacklog(String bootstrapServers, FlightRecords flights) {
		progress("Producing " + this.records + " records to east/" + SOURCE_TOPIC);
		try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig(bootstrapServers, 20),
				new ByteArraySerializer(), new ByteArraySerializer())) {
			for (int id = 0; id < this.records; id++) {
				producer.send(record(SOURCE_TOPIC, id, flights));
			}
			producer.flush();
		}
	}

	private ProducerRecord<byte[], byte[]> record(String topic, int id, FlightRecords flights) {
		return new ProducerRecord<>(topic, id % this.partitions, null, Integer.toString(id).getBytes(StandardCharsets.US_ASCII),
				flights.value(id).getBytes(StandardCharsets.UTF_8));
	}

	private static Map<String, Object> producerConfig(String bootstrapServers, int lingerMs) {
		return Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers, ProducerConfig.ACKS_CONFIG, "all",
				ProducerConfig.LINGER_MS_CONFIG, lingerMs, ProducerConfig.BATCH_SIZE_CONFIG, 262_144);
	}

	/**
	 * One contender's copy in one round: throughput phase, latency phase, count check.
	 */
	private RoundResult copy(RegionClusters kafka, EmbeddedCoordinator coordinator,
			KafkaProducer<byte[], byte[]> live, FlightRecords flights, Contender contender, int index, int round, int rtt,
			Path work) throws Exception {
		String targetCluster = contender.singleCluster() ? EAST : WEST;
		RegionClusters.Cluster east = kafka.source();
		RegionClusters.Cluster target = kafka.cluster(targetCluster);
		short replication = (short) Math.min(3, this.brokers);
		String name = "c" + index + "-rtt" + rtt + ((round > 0) ? "-r" + round : "-w" + (1 - round));
		String targetTopic = "copy-" + name;
		String liveTopic = "live-" + name;
		east.createTopic(liveTopic, this.partitions, replication, Map.of("message.timestamp.type", "LogAppendTime"));
		target.createTopic(targetTopic, this.partitions, replication, Map.of());
		Copier.Route route = new Copier.Route(List.of(SOURCE_TOPIC, liveTopic), targetCluster, targetTopic,
				"tbench-" + name, round);
		Copier copier = copier(contender, route, kafka, coordinator, work.resolve("listener-" + name));
		TargetReader reader = new TargetReader(target.bootstrapServers(), targetTopic, this.partitions, this.records,
				this.liveRecords).start();
		CopyProbe probe = new CopyProbe();
		String failure = null;
		Map<String, TransactionTimes> times = Map.of();
		double recordsPerSecond = 0;
		double cpuPerRecord = 0;
		double threadsPerThousand = 0;
		try {
			long threadsBefore = ManagementFactory.getThreadMXBean().getTotalStartedThreadCount();
			copier.start(probe);
			if (reader.awaitBacklog(this.copyTimeout)) {
				double seconds = (reader.backlogSeenNanos() - probe.firstPollNanos()) / 1e9;
				recordsPerSecond = this.records / seconds;
				cpuPerRecord = (reader.backlogSeenCpuNanos() - probe.firstPollCpuNanos()) / 1e3 / this.records;
				threadsPerThousand = (ManagementFactory.getThreadMXBean().getTotalStartedThreadCount() - threadsBefore)
						* 1000.0 / this.records;
				produceLive(live, liveTopic, flights);
				if (!reader.awaitLive(Duration.ofSeconds(60))) {
					failure = "live records not all visible within 60 s";
				}
			}
			else {
				failure = "backlog not copied within " + this.copyTimeout.toSeconds() + " s";
			}
		}
		catch (Exception ex) {
			failure = "failed: " + ex;
			logger.warn("{} failed in round {}", contender.spec(), round, ex);
		}
		finally {
			try {
				copier.close();
			}
			catch (Exception ex) {
				if (failure == null) {
					failure = "copier failed: " + ex;
				}
				logger.warn("{} failed in round {}", contender.spec(), round, ex);
			}
			times = copier.transactionTimes();
		}
		if (!reader.drain(Duration.ofSeconds(60)) && failure == null) {
			failure = "reader did not reach the end: " + reader.failure();
		}
		Histogram latency = reader.latencyMs();
		boolean anyLatency = latency.getTotalCount() > 0;
		RoundResult result = new RoundResult(round, recordsPerSecond, cpuPerRecord, threadsPerThousand,
				anyLatency ? latency.getValueAtPercentile(50) : -1, anyLatency ? latency.getValueAtPercentile(99) : -1,
				anyLatency ? latency.getMaxValue() : -1, (long) this.records + this.liveRecords, reader.total(),
				reader.distinct(), reader.unknown(), probe.transactions(), times, failure, loadAverage());
		deleteTopics(east, List.of(liveTopic));
		deleteTopics(target, List.of(targetTopic));
		return result;
	}

	private Copier copier(Contender contender, Copier.Route route, RegionClusters kafka,
			EmbeddedCoordinator coordinator, Path listenerDir) {
		ClientSettings settings = contender.clientSettings(this.clientConfig);
		Map<String, String> bootstrap = new LinkedHashMap<>();
		bootstrap.put(EAST, kafka.source().copierBootstrapServers());
		bootstrap.put(WEST, kafka.target().copierBootstrapServers());
		Map<String, String> own = contender.overrides();
		Integer slots = own.containsKey("slots") ? Integer.valueOf(own.get("slots")) : null;
		return switch (contender.kind()) {
			case Contender.AT_LEAST_ONCE_ASYNC, Contender.AT_LEAST_ONCE -> new AtLeastOnceCopier(route.groupId(), route,
					settings, bootstrap.get(EAST), bootstrap.get(WEST),
					contender.kind().equals(Contender.AT_LEAST_ONCE_ASYNC));
			case Contender.KAFKA_EOS -> new KafkaTransactionsCopier(route.groupId(), route, settings,
					kafka.source().bootstrapServers());
			case Contender.TANDEM -> new TandemCopier(route.groupId(), route, settings, bootstrap,
					coordinator.decisionLog(), slots);
			case Contender.PIPELINED -> new PipelinedCopier(route.groupId(), route, settings, bootstrap,
					coordinator.decisionLog(), slots, Integer.parseInt(own.getOrDefault("depth", String.valueOf(CrossClusterProcessor.DEFAULT_DEPTH))),
					Integer.parseInt(own.getOrDefault("max-records",
							String.valueOf(CrossClusterProcessor.DEFAULT_MAX_RECORDS))),
					own.containsKey("max-interval") ? BenchOptions.duration(own.get("max-interval"))
							: CrossClusterProcessor.DEFAULT_MAX_INTERVAL,
					Boolean.parseBoolean(own.getOrDefault("close-when-idle", "false")));
			default -> new ListenerCopier(route, settings, contender.springProperties(), bootstrap, listenerDir);
		};
	}

	/**
	 * Produces the live records at the configured rate, each stamped by the broker on append.
	 */
	private void produceLive(KafkaProducer<byte[], byte[]> producer, String topic, FlightRecords flights) {
		long start = System.nanoTime();
		double intervalNanos = 1e9 / this.liveRate;
		for (int i = 0; i < this.liveRecords; i++) {
			long due = start + (long) (i * intervalNanos);
			long wait = due - System.nanoTime();
			if (wait > 0) {
				LockSupport.parkNanos(wait);
			}
			producer.send(record(topic, this.records + i, flights));
		}
		producer.flush();
	}

	private static void deleteTopics(RegionClusters.Cluster cluster, List<String> topics) {
		try {
			Admin admin = cluster.admin();
			admin.deleteTopics(topics).all().get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			logger.warn("Could not delete {} on {}: {}", topics, cluster.name(), ex.toString());
		}
	}

	static double loadAverage() {
		return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
	}

	private static void progress(String line) {
		System.out.println("[throughput] " + line);
	}

}
