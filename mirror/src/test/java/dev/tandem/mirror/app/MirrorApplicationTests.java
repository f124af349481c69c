package dev.tandem.mirror.app;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import dev.tandem.mirror.Mirror;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The mirror app as its command line starts it, on two embedded clusters: it mirrors, and shows
 * what it did at {@code /actuator/kafkamirror}, in its health and in its meters.
 */
class MirrorApplicationTests {

	// Mirrors every topic matching a pattern: clusters of its own.
	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = EmbeddedKafkaClustersExtension.perClass(ClusterPreset.EAST1_WEST1);

	@Test
	void appMirrorsAndShowsItsStatusHealthAndMeters() throws Exception {
		kafka.cluster("east").createTopic("orders", 2, (short) 1);
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(kafka.cluster("east").producerProperties())) {
			for (int i = 0; i < 20; i++) {
				producer.send(new ProducerRecord<>("orders", i % 2, "k" + i, "v" + i));
			}
		}
		Path dataDir = Files.createTempDirectory("mirror-app-tests");
		try (ConfigurableApplicationContext app = MirrorApplication.run(
				"--tandem.clusters.east.bootstrap-servers=" + kafka.cluster("east").bootstrapServers(),
				"--tandem.clusters.west.bootstrap-servers=" + kafka.cluster("west").bootstrapServers(),
				"--tandem.transaction.instance-id=mirror-app-test", "--tandem.coordinator.data-dir=" + dataDir,
				"--tandem.mirror.source=east", "--tandem.mirror.targets=west", "--tandem.mirror.topic-pattern=ord.*",
				"--tandem.mirror.group-sync-interval=200ms", "--server.port=0")) {
			Mirror mirror = app.getBean(Mirror.class);
			await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
				assertThat(mirror.status().recordsMirrored()).isEqualTo(20);
				assertThat(mirror.status().lagRecords()).isZero();
			});
			assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), "east.orders")).hasSize(20);

			int port = ((WebServerApplicationContext) app).getWebServer().getPort();
			HttpClient http = HttpClient.newHttpClient();
			HttpResponse<String> endpoint = http.send(
					HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/actuator/kafkamirror")).build(),
					HttpResponse.BodyHandlers.ofString());
			assertThat(endpoint.statusCode()).isEqualTo(200);
			assertThat(endpoint.body()).contains("\"source\":\"east\"", "\"recordsMirrored\":20", "\"topic\":\"orders\"",
					"\"sourceEndOffset\":10", "\"mirroredOffset\":10", "\"lagRecords\":0");
			HttpResponse<String> health = http.send(
					HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/actuator/health")).build(),
					HttpResponse.BodyHandlers.ofString());
			String mirrorHealth = health.body().substring(health.body().indexOf("\"mirror\":"));
			assertThat(mirrorHealth.substring(0, mirrorHealth.indexOf('}', mirrorHealth.indexOf("\"details\"")) + 20))
				.contains("\"lagRecords\":0", "\"status\":\"UP\"");

			MeterRegistry meters = app.getBean(MeterRegistry.class);
			assertThat(meters.get("tandem.mirror.records").tag("source", "east").functionCounter().count())
				.isEqualTo(20);
			assertThat(meters.get("tandem.mirror.lag").gauge().value()).isZero();
		}
	}

}
