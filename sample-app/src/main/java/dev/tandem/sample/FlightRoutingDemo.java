package dev.tandem.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import dev.tandem.transaction.TransactionStatistics;
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

import dev.tandem.test.EmbeddedKafkaClusters;

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

	private String actuatorReport = "";

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
			createTopic(bootstrap.get(Regions.EAST), FlightRouterApplication.INPUT);
			createTopic(bootstrap.get(Regions.EAST), FlightRouterApplication.OUTPUT);
			createTopic(bootstrap.get(Regions.WEST), FlightRouterApplication.OUTPUT);

			Regions regions = Regions.load();
			int loaded = load(bootstrap.get(Regions.EAST));
			Map<TopicPartition, Long> endOffsets = endOffsets(bootstrap.get(Regions.EAST));
			this.out.printf("Loaded %d flights into '%s' on east (%.1f s)%n", loaded, FlightRouterApplication.INPUT, seconds(start));

			long pipelineStart = System.nanoTime();
			CompletableFuture<String> move = route(bootstrap, endOffsets, kafka);
			double pipelineSeconds = seconds(pipelineStart);
			String moveReport = move.join();

			Verification verification = new Verification(bootstrap, this.runId);
			boolean ok = verification.verify(regions, loaded, endOffsets, group());
			return report(verification, moveReport, pipelineSeconds, seconds(start), ok) ? 0 : 1;
		}
		finally {
			if (kafka != null) {
				kafka.close();
			}
		}
	}

	private CompletableFuture<String> route(Map<String, String> bootstrap, Map<TopicPartition, Long> endOffsets,
			@Nullable EmbeddedKafkaClusters kafka) {
		CompletableFuture<String> move = CompletableFuture.completedFuture("not done (needs embedded clusters)");
		String group = group();
		ConfigurableApplicationContext app = startApp(bootstrap, this.settings.crashAt());
		boolean moveStarted = false;
		try {
			FlightRouterApplication.HardStop hardStop = app.getBeanProvider(FlightRouterApplication.HardStop.class)
				.getIfAvailable();
			long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
			while (committedOffsets(bootstrap.get(Regions.EAST), group, endOffsets) < total(endOffsets)) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("The router did not consume the input within 5 minutes");
				}
				int decided = this.statistics(app).committed();
				if (!moveStarted && kafka != null && this.settings.moveLeadershipAt() > 0
						&& decided >= this.settings.moveLeadershipAt()) {
					moveStarted = true;
					this.out.printf("Moving leadership of every '%s' partition on west (after %d transactions)%n",
							FlightRouterApplication.OUTPUT, decided);
					move = CompletableFuture.supplyAsync(() -> {
						Map<TopicPartition, Integer> moved = kafka.cluster(Regions.WEST)
							.moveLeadership(FlightRouterApplication.OUTPUT);
						return moved.size() + " partitions moved to new leaders " + moved.values();
					});
				}
				if (hardStop != null && hardStop.stopped.getCount() == 0) {
					this.out.printf("Stopped the router hard right after the decision of transaction %d; restarting%n",
							this.settings.crashAt());
					this.committed.addAndGet(statistics(app).committed());
					app.close();
					app = startApp(bootstrap, 0);
					hardStop = null;
					this.recovered.set(statistics(app).recovered());
					this.out.printf("Restarted: recovery committed %d in-doubt transaction(s)%n", this.recovered.get());
				}
				sleepQuietly();
			}
			move.join();
			Counts counts = statistics(app);
			this.committed.addAndGet(counts.committed());
			this.aborted.addAndGet(counts.aborted());
			this.heuristic.addAndGet(counts.heuristic());
			this.actuatorReport = actuator(app);
		}
		finally {
			app.close();
		}
		return move;
	}

	private record Counts(int committed, int aborted, int recovered, int heuristic) {
	}

	private Counts statistics(ConfigurableApplicationContext app) {
		TransactionStatistics.Snapshot snapshot = app.getBean(TransactionStatistics.class).snapshot();
		return new Counts((int) snapshot.committed(), (int) snapshot.aborted(), (int) snapshot.recovered(),
				(int) snapshot.heuristic());
	}

	private String actuator(ConfigurableApplicationContext app) {
		String port = app.getEnvironment().getProperty("local.server.port");
		String url = "http://localhost:" + port + "/actuator/kafkatransactions";
		try {
			HttpResponse<String> response = HttpClient.newHttpClient()
				.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString());
			JsonNode counts = JSON.readTree(response.body()).path("counts");
			return "GET " + url + " -> " + response.statusCode() + ", counts " + counts;
		}
		catch (IOException ex) {
			return "GET " + url + " failed: " + ex;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "interrupted";
		}
	}

	private ConfigurableApplicationContext startApp(Map<String, String> bootstrap, int crashAt) {
		List<String> args = new ArrayList<>(List.of(
				"--tandem.clusters.east.bootstrap-servers=" + bootstrap.get(Regions.EAST),
				"--tandem.clusters.west.bootstrap-servers=" + bootstrap.get(Regions.WEST),
				"--tandem.clusters.east.consumer.max.poll.records=" + this.settings.recordsPerTransaction(),
				// one delivery per transaction, as the demo's settings say (the default lets a
				// pipelined batch listener's transaction span deliveries, up to 5,000 records)
				"--tandem.listener.max-records=" + this.settings.recordsPerTransaction(), "--tandem.listener.growth=1",
				"--tandem.transaction.instance-id=demo-" + this.runId,
				"--tandem.coordinator.data-dir=" + this.settings.coordinatorDataDir().toAbsolutePath(),
				"--flights.group=" + group(), "--flights.run-id=" + this.runId, "--server.port=0"));
		if (crashAt > 0) {
			args.add("--flights.crash-at=" + crashAt);
		}
		return new SpringApplicationBuilder(FlightRouterApplication.class).run(args.toArray(String[]::new));
	}

	private String group() {
		return "flight-router-" + this.runId;
	}

	private static long total(Map<TopicPartition, Long> offsets) {
		return offsets.values().stream().mapToLong(Long::longValue).sum();
	}

	private static long committedOffsets(String bootstrapServers, String group, Map<TopicPartition, Long> endOffsets) {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
			Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> offsets = admin
				.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
			return endOffsets.keySet().stream()
				.mapToLong((tp) -> (offsets.get(tp) != null) ? offsets.get(tp).offset() : 0)
				.sum();
		}
		catch (Exception ex) {
			throw new IllegalStateException("Cannot read offsets of " + group, ex);
		}
	}

	private static void sleepQuietly() {
		try {
			Thread.sleep(250);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
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
				producer.send(new ProducerRecord<>(FlightRouterApplication.INPUT, flight.get("origin").asString().getBytes(java.nio.charset.StandardCharsets.UTF_8),
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
			List<TopicPartition> partitions = consumer.partitionsFor(FlightRouterApplication.INPUT, Duration.ofSeconds(30)).stream()
				.map((info) -> new TopicPartition(FlightRouterApplication.INPUT, info.partition()))
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
		this.out.printf("%-52s %s%n", "actuator", this.actuatorReport);
		verification.facts().forEach((name, value) -> this.out.printf("%-52s %s%n", name, value));
		this.out.printf("%-52s %.1f s%n", "pipeline time", pipelineSeconds);
		this.out.printf("%-52s %.1f s%n", "wall time", totalSeconds);
		if (this.heuristic.get() > 0) {
			verification.problems().add(this.heuristic.get() + " heuristic outcome(s)");
		}
		boolean ok = verified && this.heuristic.get() == 0;
		if (ok) {
			this.out.println("RESULT: PASS (0 lost, 0 duplicated, 0 aborted-but-visible, every key in input order, offsets match input)");
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
