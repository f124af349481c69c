package dev.tandem.sample;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.test.EmbeddedKafkaClusters;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;
import dev.tandem.transaction.TransactionListener;

/**
 * Tandem's walking-skeleton demo: exactly-once routing of 20,000 real US flights from cluster
 * {@code east} to the cluster of each flight's region, through cross-cluster transactions, while
 * partition leadership moves on {@code west} and the pipeline is stopped hard mid-transaction and
 * restarted. Ends with a {@code read_committed} verification and exits 1 if anything is off.
 * <p>
 * Runs two embedded 3-broker clusters unless {@code tandem.clusters.east.bootstrap-servers} and
 * {@code tandem.clusters.west.bootstrap-servers} name real ones (see {@link DemoSettings}).
 */
public final class FlightRoutingDemo {

	private static final Logger logger = LoggerFactory.getLogger(FlightRoutingDemo.class);

	private static final ObjectMapper JSON = JsonMapper.builder().build();

	private static final int PARTITIONS = 6;

	private final DemoSettings settings;

	private final PrintStream out;

	private final String runId = UUID.randomUUID().toString().substring(0, 8);

	private final AtomicInteger committed = new AtomicInteger();

	private final AtomicInteger aborted = new AtomicInteger();

	private final AtomicInteger recovered = new AtomicInteger();

	private final AtomicInteger heuristic = new AtomicInteger();

	FlightRoutingDemo(DemoSettings settings, PrintStream out) {
		this.settings = settings;
		this.out = out;
	}

	public static void main(String[] args) {
		int status;
		try {
			status = new FlightRoutingDemo(DemoSettings.fromEnvironment(), System.out).run();
		}
		catch (IllegalArgumentException ex) {
			System.err.println("Demo configuration error: " + ex.getMessage());
			status = 2;
		}
		System.exit(status);
	}

	/**
	 * Runs the demo.
	 * @return 0 if the verification passed, 1 otherwise
	 */
	int run() {
		long start = System.nanoTime();
		EmbeddedKafkaClusters kafka = null;
		try {
			Map<String, String> bootstrap = new LinkedHashMap<>();
			if (this.settings.embedded()) {
				this.out.println("Starting embedded clusters east and west (3 brokers each, RF 3, min.insync.replicas 2)...");
				kafka = EmbeddedKafkaClusters.builder().cluster(Regions.EAST, 3).cluster(Regions.WEST, 3).build().start();
				bootstrap.put(Regions.EAST, kafka.cluster(Regions.EAST).bootstrapServers());
				bootstrap.put(Regions.WEST, kafka.cluster(Regions.WEST).bootstrapServers());
				deleteRecursively(this.settings.coordinatorDataDir());
			}
			else {
				bootstrap.put(Regions.EAST, this.settings.eastBootstrapServers());
				bootstrap.put(Regions.WEST, this.settings.westBootstrapServers());
			}
			this.out.printf("Clusters: %s (run %s, %.1f s)%n", bootstrap, this.runId, seconds(start));
			createTopic(bootstrap.get(Regions.EAST), FlightPipeline.INPUT);
			createTopic(bootstrap.get(Regions.EAST), FlightPipeline.OUTPUT);
			createTopic(bootstrap.get(Regions.WEST), FlightPipeline.OUTPUT);

			Regions regions = Regions.load();
			Map<TopicPartition, Long> startOffsets = endOffsets(bootstrap.get(Regions.EAST));
			int loaded = load(bootstrap.get(Regions.EAST));
			Map<TopicPartition, Long> endOffsets = endOffsets(bootstrap.get(Regions.EAST));
			this.out.printf("Loaded %d flights into '%s' on east (%.1f s)%n", loaded, FlightPipeline.INPUT, seconds(start));

			long pipelineStart = System.nanoTime();
			CompletableFuture<String> move = route(bootstrap, regions, startOffsets, endOffsets, kafka);
			double pipelineSeconds = seconds(pipelineStart);
			String moveReport = move.join();

			Verification verification = new Verification(bootstrap, this.runId);
			boolean ok = verification.verify(regions, loaded, endOffsets, FlightPipeline.GROUP + "-" + this.runId);
			return report(verification, moveReport, pipelineSeconds, seconds(start), ok) ? 0 : 1;
		}
		finally {
			if (kafka != null) {
				kafka.close();
			}
		}
	}

	private CompletableFuture<String> route(Map<String, String> bootstrap, Regions regions,
			Map<TopicPartition, Long> startOffsets, Map<TopicPartition, Long> endOffsets,
			@Nullable EmbeddedKafkaClusters kafka) {
		CompletableFuture<String> move = CompletableFuture.completedFuture("not done (needs embedded clusters)");
		AtomicInteger transactions = new AtomicInteger();
		int crashAt = this.settings.crashAt();
		ProtocolHook hook = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_DECISION && transactions.incrementAndGet() == crashAt) {
				throw new ProtocolHook.SimulatedCrashException(step);
			}
		};
		EmbeddedCoordinator coordinator = startCoordinator();
		FlightPipeline pipeline = newPipeline(bootstrap, coordinator, hook, regions, startOffsets, endOffsets);
		int batches = 0;
		boolean moveStarted = false;
		try {
			while (!pipeline.done()) {
				try {
					if (pipeline.processOnce() > 0) {
						batches++;
					}
				}
				catch (ProtocolHook.SimulatedCrashException crash) {
					this.out.printf("Stopped the pipeline hard after the decision of transaction %d (%s); restarting%n",
							transactions.get(), crash.getMessage());
					pipeline.crash();
					coordinator.close();
					coordinator = startCoordinator();
					int before = this.recovered.get();
					pipeline = newPipeline(bootstrap, coordinator, hook, regions, startOffsets, endOffsets);
					this.out.printf("Restarted: recovery committed %d in-doubt transaction(s)%n", this.recovered.get() - before);
				}
				if (!moveStarted && batches >= this.settings.moveLeadershipAt() && this.settings.moveLeadershipAt() > 0
						&& kafka != null) {
					moveStarted = true;
					this.out.printf("Moving leadership of every '%s' partition on west (transaction %d)%n",
							FlightPipeline.OUTPUT, transactions.get());
					move = CompletableFuture.supplyAsync(() -> {
						Map<TopicPartition, Integer> moved = kafka.cluster(Regions.WEST).moveLeadership(FlightPipeline.OUTPUT);
						return moved.size() + " partitions moved to new leaders " + moved.values();
					});
				}
			}
		}
		finally {
			pipeline.close();
			coordinator.close();
		}
		return move;
	}

	private EmbeddedCoordinator startCoordinator() {
		try {
			return EmbeddedCoordinator.start(this.settings.coordinatorDataDir());
		}
		catch (IOException | java.util.concurrent.TimeoutException ex) {
			throw new IllegalStateException("Could not start the embedded coordinator in "
					+ this.settings.coordinatorDataDir(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private FlightPipeline newPipeline(Map<String, String> bootstrap, EmbeddedCoordinator coordinator, ProtocolHook hook,
			Regions regions, Map<TopicPartition, Long> startOffsets, Map<TopicPartition, Long> endOffsets) {
		CrossClusterTransactionManager manager = CrossClusterTransactionManager.builder()
			.cluster(Regions.EAST, Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap.get(Regions.EAST)))
			.cluster(Regions.WEST, Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap.get(Regions.WEST)))
			.idPrefix("flight-router")
			.instanceId("demo-" + this.runId)
			.decisionLog(coordinator.decisionLog())
			.protocolHook(hook)
			.listener(new TransactionListener() {
				@Override
				public void onCommitted(String transactionId, int participants, Duration commitLatency) {
					FlightRoutingDemo.this.committed.incrementAndGet();
				}

				@Override
				public void onAborted(String transactionId, Throwable cause) {
					FlightRoutingDemo.this.aborted.incrementAndGet();
				}

				@Override
				public void onRecovered(String transactionId) {
					FlightRoutingDemo.this.recovered.incrementAndGet();
				}

				@Override
				public void onHeuristicOutcome(dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome outcome) {
					FlightRoutingDemo.this.heuristic.incrementAndGet();
				}
			})
			.build();
		manager.start();
		return new FlightPipeline(manager, regions, this.runId, this.settings.recordsPerTransaction(), startOffsets,
				endOffsets);
	}

	private int load(String bootstrapServers) {
		JsonNode flights;
		try (InputStream in = (this.settings.input() != null) ? Files.newInputStream(this.settings.input())
				: FlightRoutingDemo.class.getResourceAsStream("/data/flights-20k.json")) {
			if (in == null) {
				throw new IllegalStateException("data/flights-20k.json missing from the class path");
			}
			flights = JSON.readTree(in);
		}
		catch (IOException ex) {
			throw new IllegalArgumentException("Cannot read flights from " + this.settings.input() + ": " + ex.getMessage());
		}
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
		config.put(ProducerConfig.LINGER_MS_CONFIG, 10);
		int seq = 0;
		try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
				new ByteArraySerializer())) {
			for (JsonNode flight : flights) {
				ObjectNode value = JSON.createObjectNode();
				value.put("runId", this.runId);
				value.put("seq", seq++);
				value.setAll((ObjectNode) flight);
				producer.send(new ProducerRecord<>(FlightPipeline.INPUT, FlightPipeline.key(flight),
						JSON.writeValueAsBytes(value)));
			}
			producer.flush();
		}
		return seq;
	}

	private static void createTopic(String bootstrapServers, String topic) {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
			int brokers = admin.describeCluster().nodes().get().size();
			short replication = (short) Math.min(3, brokers);
			Map<String, String> configs = Map.of("min.insync.replicas", String.valueOf(Math.min(2, brokers)));
			admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, replication).configs(configs))).all().get();
		}
		catch (java.util.concurrent.ExecutionException ex) {
			if (!(ex.getCause() instanceof TopicExistsException)) {
				throw new IllegalStateException("Cannot create topic " + topic, ex.getCause());
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static Map<TopicPartition, Long> endOffsets(String bootstrapServers) {
		Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			List<TopicPartition> partitions = consumer.partitionsFor(FlightPipeline.INPUT, Duration.ofSeconds(30)).stream()
				.map((info) -> new TopicPartition(FlightPipeline.INPUT, info.partition()))
				.toList();
			return new HashMap<>(consumer.endOffsets(partitions, Duration.ofSeconds(30)));
		}
	}

	private boolean report(Verification verification, String moveReport, double pipelineSeconds, double totalSeconds,
			boolean verified) {
		this.out.println();
		this.out.println("=== Tandem demo verification (run " + this.runId + ") ===");
		this.out.printf("%-52s %s%n", "cross-cluster transactions committed", this.committed.get());
		this.out.printf("%-52s %s%n", "transactions aborted", this.aborted.get());
		this.out.printf("%-52s %s%n", "in-doubt transactions recovered after the hard stop", this.recovered.get());
		this.out.printf("%-52s %s%n", "heuristic outcomes", this.heuristic.get());
		this.out.printf("%-52s %s%n", "leadership move on west", moveReport);
		verification.facts().forEach((name, value) -> this.out.printf("%-52s %s%n", name, value));
		this.out.printf("%-52s %.1f s%n", "pipeline time", pipelineSeconds);
		this.out.printf("%-52s %.1f s%n", "wall time", totalSeconds);
		if (this.heuristic.get() > 0) {
			verification.problems().add(this.heuristic.get() + " heuristic outcome(s)");
		}
		boolean ok = verified && this.heuristic.get() == 0;
		if (ok) {
			this.out.println("RESULT: PASS (0 lost, 0 duplicated, offsets match input)");
		}
		else {
			this.out.println("RESULT: FAIL");
			verification.problems().forEach((problem) -> this.out.println("  - " + problem));
		}
		return ok;
	}

	private static double seconds(long startNanos) {
		return (System.nanoTime() - startNanos) / 1e9;
	}

	private static void deleteRecursively(Path dir) {
		if (!Files.exists(dir)) {
			return;
		}
		try (var paths = Files.walk(dir)) {
			paths.sorted(java.util.Comparator.reverseOrder()).forEach((path) -> {
				try {
					Files.delete(path);
				}
				catch (IOException ex) {
					throw new java.io.UncheckedIOException(ex);
				}
			});
		}
		catch (IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

}
