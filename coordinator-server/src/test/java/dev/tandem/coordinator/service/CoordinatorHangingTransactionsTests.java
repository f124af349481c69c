package dev.tandem.coordinator.service;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.test.EmbeddedKafkaCluster;
import dev.tandem.test.EmbeddedKafkaClusters;
import dev.tandem.transaction.Decision;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The coordinator service's admin API lists the served apps' Kafka transactions that hang on a real
 * broker (an instance whose lease expired unclaimed, an instance that holds no lease but has
 * decisions in the log), not a live instance's, counts them in {@code tandem.transaction.hanging},
 * aborts one by hand so that the last stable offset moves on, and refuses to abort a participant of
 * a decided transaction. Another application's producer whose transactional id merely looks like a
 * served app's (found by a breaking trial: it was fenced) is never listed nor aborted.
 */
class CoordinatorHangingTransactionsTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final JsonMapper json = JsonMapper.builder().build();

	private static EmbeddedKafkaClusters kafka;

	@TempDir
	Path dataDir;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private ConfigurableApplicationContext server;

	@BeforeAll
	static void startKafka() {
		kafka = EmbeddedKafkaClusters.builder().cluster("east", 1).build().start();
		kafka.cluster("east").createTopic("orders", 1, (short) 1);
	}

	@AfterAll
	static void stopKafka() {
		kafka.close();
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
		if (this.server != null) {
			this.server.close();
		}
	}

	@Test
	void hangingTransactionsOfServedAppsAreListedMeteredAndAbortedByHandButADecidedOneIsRefused() throws Exception {
		EmbeddedKafkaCluster east = kafka.cluster("east");
		String peers = "n1=127.0.0.1:" + freePort();
		this.server = new SpringApplicationBuilder(CoordinatorServerApplication.class).run("--server.port=0",
				"--spring.jmx.enabled=false", "--tandem.coordinator.server.peer-id=n1",
				"--tandem.coordinator.server.peers=" + peers,
				"--tandem.coordinator.server.data-dir=" + this.dataDir.resolve("n1"),
				"--tandem.coordinator.server.bind-host=127.0.0.1", "--tandem.coordinator.server.plaintext-allowed=true",
				"--tandem.coordinator.server.clusters.east.bootstrap-servers=" + east.bootstrapServers(),
				"--tandem.coordinator.server.hanging.check-interval=200ms",
				"--management.endpoint.coordinatorhanging.access=unrestricted");
		RatisDecisionLog client = RatisDecisionLog.builder(CoordinatorGroup.parse(peers))
			.purgeInterval(Duration.ZERO)
			.build();
		this.closeables.add(client);

		// i1 died: its lease expires and nobody claims it; i2 is alive; i3 holds no lease and decided a
		// transaction with a participant on east
		client.renewLease("orders", "i1", "run-1", Duration.ofSeconds(1), TIMEOUT);
		client.renewLease("orders", "i2", "run-2", Duration.ofMinutes(10), TIMEOUT);
		KafkaProducer<String, String> dead = openTransaction(east, "orders.east.i1.0");
		openTransaction(east, "orders.east.i2.0");
		KafkaProducer<String, String> decided = openTransaction(east, "orders.east.i3.0");
		// not Tandem's: a Spring Kafka app with transactionIdPrefix "orders.east.billing."
		KafkaProducer<String, String> foreign = openTransaction(east, "orders.east.billing.0");
		client.decide(new Decision("orders.i3-0000000000000001", "orders.i3", System.currentTimeMillis(),
				List.of(new Decision.ParticipantRecord("east", "orders.east.i3.0", 0, (short) 0, "tandem-markers", 0, 0))),
				TIMEOUT);
		TopicPartition orders = new TopicPartition("orders", 0);
		assertThat(lastStableOffset(east, orders)).isZero();

		await().atMost(TIMEOUT).untilAsserted(() -> {
			JsonNode listed = json.readTree(get("/actuator/coordinatorhanging").body());
			assertThat(listed.get("unavailable").size()).isZero();
			List<String> ids = new ArrayList<>();
			listed.get("clusters").get("east").forEach((hanging) -> ids.add(hanging.get("transactionalId").asString()));
			assertThat(ids).containsExactlyInAnyOrder("orders.east.i1.0", "orders.east.i3.0");
			assertThat(gauge("tandem_transaction_hanging{peer=\"n1\"}")).isEqualTo(2.0);
		});
		JsonNode listed = json.readTree(get("/actuator/coordinatorhanging").body());
		listed.get("clusters").get("east").forEach((hanging) -> {
			String reason = hanging.get("reason").asString();
			if (hanging.get("transactionalId").asString().equals("orders.east.i1.0")) {
				assertThat(hanging.get("owner").asString()).isEqualTo("orders.i1");
				assertThat(reason).contains("lease expired").contains("nobody claimed it");
			}
			else {
				assertThat(reason).contains("holds no lease");
			}
		});

		// The foreign producer is not listed (above) and left alone
		assertThat(post("/actuator/coordinatorhanging/east/orders.east.billing.0").statusCode()).isEqualTo(400);
		assertThatThrownBy(() -> this.server.getBean(CoordinatorHangingTransactionsEndpoint.class)
			.abort("east", "orders.east.billing.0")).isInstanceOf(InvalidEndpointRequestException.class)
			.hasMessageContaining("not Tandem's")
			.hasMessageContaining("left alone");

		// A participant of a decided transaction must commit: refused, still open
		HttpResponse<String> refused = post("/actuator/coordinatorhanging/east/orders.east.i3.0");
		assertThat(refused.statusCode()).isEqualTo(400);
		assertThatThrownBy(() -> this.server.getBean(CoordinatorHangingTransactionsEndpoint.class)
			.abort("east", "orders.east.i3.0")).isInstanceOf(InvalidEndpointRequestException.class)
			.hasMessageContaining("participant of decided transaction orders.i3-0000000000000001")
			.hasMessageContaining("must commit");

		// The dead instance's transaction is aborted by fencing: the last stable offset moves on
		HttpResponse<String> aborted = post("/actuator/coordinatorhanging/east/orders.east.i1.0");
		assertThat(aborted.statusCode()).isEqualTo(200);
		assertThat(json.readTree(aborted.body()).get("owner").asString()).isEqualTo("orders.i1");
		decided.abortTransaction();
		await().atMost(TIMEOUT).untilAsserted(() -> {
			assertThat(gauge("tandem_transaction_hanging{peer=\"n1\"}")).isZero();
			assertThat(lastStableOffset(east, orders)).isPositive();
		});
		assertThat(post("/actuator/coordinatorhanging/east/orders.east.i2.0").statusCode()).isEqualTo(400);
		assertThat(post("/actuator/coordinatorhanging/west/orders.west.i1.0").statusCode()).isEqualTo(400);
		dead.close(Duration.ZERO);
		// never fenced: its transaction commits
		foreign.commitTransaction();
	}

	private KafkaProducer<String, String> openTransaction(EmbeddedKafkaCluster cluster, String transactionalId)
			throws Exception {
		Map<String, Object> config = cluster.producerProperties();
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
		KafkaProducer<String, String> producer = new KafkaProducer<>(config);
		this.closeables.add(() -> producer.close(Duration.ZERO));
		producer.initTransactions();
		producer.beginTransaction();
		producer.send(new ProducerRecord<>("orders", 0, transactionalId, "v")).get(30, TimeUnit.SECONDS);
		return producer;
	}

	private static long lastStableOffset(EmbeddedKafkaCluster cluster, TopicPartition partition) throws Exception {
		return cluster.admin()
			.listOffsets(Map.of(partition, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
			.partitionResult(partition)
			.get(30, TimeUnit.SECONDS)
			.offset();
	}

	private HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return this.http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> post(String path) throws IOException, InterruptedException {
		return this.http.send(request(path).header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{}"))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest.Builder request(String path) {
		String port = this.server.getEnvironment().getProperty("local.server.port");
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(20));
	}

	private double gauge(String series) throws IOException, InterruptedException {
		return get("/actuator/prometheus").body()
			.lines()
			.filter((line) -> line.startsWith(series + " "))
			.mapToDouble((line) -> Double.parseDouble(line.substring(series.length() + 1).trim()))
			.findFirst()
			.orElseThrow(() -> new AssertionError(series + " not in the metrics"));
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

}
