package dev.tandem.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import brave.Tracing;
import brave.propagation.ThreadLocalCurrentTraceContext;
import brave.sampler.Sampler;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationHandler.FirstMatchingCompositeObservationHandler;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.micrometer.tracing.brave.bridge.BraveBaggageManager;
import io.micrometer.tracing.brave.bridge.BraveCurrentTraceContext;
import io.micrometer.tracing.brave.bridge.BravePropagator;
import io.micrometer.tracing.brave.bridge.BraveTracer;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.autoconfigure.transaction.ObservationTransactionObserver;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * One Micrometer Observation per cross-cluster transaction, with the protocol's steps as events
 * and outcome and cluster count as tags ({@link TestObservationRegistry}); and, with a real
 * tracer (Brave, B3 propagation), a trace id that goes from a listener's record through its
 * transaction into the records it sent on both clusters. Real brokers.
 */
class TransactionObservationTests {

	static final String TRACE_ID = "463ac35c9f6413ad48485a3953bb6124";

	/** Spring Kafka's switch for per-record template observations, which Tandem's templates follow. */
	static final String SEND_OBSERVATIONS = "spring.kafka.template.observation-enabled=true";

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@TempDir
	Path dataDir;

	private ConfigurableApplicationContext context;

	private TestObservationRegistry registry;

	private final Queue<String> events = new ConcurrentLinkedQueue<>();

	private final Queue<Observation.Context> stopped = new ConcurrentLinkedQueue<>();

	@BeforeAll
	static void createTopics() {
		kafka.cluster("east").createTopic("traced-in", 1, (short) 1);
		for (String cluster : List.of("east", "west")) {
			kafka.cluster(cluster).createTopic("observed", 1, (short) 1);
			kafka.cluster(cluster).createTopic("traced-out", 1, (short) 1);
		}
	}

	void start(String... properties) {
		this.registry = TestObservationRegistry.create();
		Tracing tracing = Tracing.newBuilder()
			.currentTraceContext(ThreadLocalCurrentTraceContext.newBuilder().build())
			.sampler(Sampler.ALWAYS_SAMPLE)
			.build();
		BraveTracer tracer = new BraveTracer(tracing.tracer(), new BraveCurrentTraceContext(tracing.currentTraceContext()),
				new BraveBaggageManager());
		BravePropagator propagator = new BravePropagator(tracing);
		this.registry.observationConfig()
			.observationHandler(new FirstMatchingCompositeObservationHandler(
					new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
					new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
					new DefaultTracingObservationHandler(tracer)))
			.observationHandler(new EventRecorder(this.events, this.stopped));
		this.context = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.initializers((applicationContext) -> applicationContext.getBeanFactory()
				.registerSingleton("observationRegistry", this.registry))
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.transaction.id-prefix=observation-tests", "tandem.transaction.instance-id=app-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"),
					"spring.kafka.listener.observation-enabled=true")
			.properties(properties)
			.run();
	}

	@AfterEach
	void stop() {
		this.context.close();
	}

	@Test
	void eachTransactionIsOneObservationWithItsStepsAsEventsAndItsOutcomeAndClusterCountAsTags() {
		start(SEND_OBSERVATIONS);
		Sender sender = this.context.getBean(Sender.class);
		sender.sendToBoth("a");
		assertThatIllegalStateException().isThrownBy(() -> sender.sendToEastAndFail("b"));
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasNumberOfObservationsWithNameEqualTo(ObservationTransactionObserver.NAME, 2)
			.hasNumberOfObservationsWithNameEqualTo(ObservationTransactionObserver.SEND_NAME, 3)
			.hasObservationWithNameEqualTo(ObservationTransactionObserver.NAME)
			.that()
			.hasBeenStarted()
			.hasBeenStopped()
			.hasLowCardinalityKeyValueWithKey(ObservationTransactionObserver.OUTCOME)
			.hasLowCardinalityKeyValueWithKey(ObservationTransactionObserver.CLUSTERS)
			.hasHighCardinalityKeyValueWithKey(ObservationTransactionObserver.TRANSACTION_ID);
		List<Observation.Context> transactions = this.stopped.stream()
			.filter((context) -> context.getName().equals(ObservationTransactionObserver.NAME))
			.toList();
		assertThat(transactions).hasSize(2);
		Observation.Context committed = transactions.get(0);
		assertThat(committed.getLowCardinalityKeyValue(ObservationTransactionObserver.OUTCOME).getValue())
			.isEqualTo("committed");
		assertThat(committed.getLowCardinalityKeyValue(ObservationTransactionObserver.CLUSTERS).getValue()).isEqualTo("2");
		String id = committed.getHighCardinalityKeyValue(ObservationTransactionObserver.TRANSACTION_ID).getValue();
		assertThat(this.events).containsSubsequence(id + " tandem.prepare", id + " tandem.prepared",
				id + " tandem.decided", id + " tandem.committed");
		Observation.Context aborted = transactions.get(1);
		assertThat(aborted.getLowCardinalityKeyValue(ObservationTransactionObserver.OUTCOME).getValue())
			.isEqualTo("aborted");
		assertThat(aborted.getLowCardinalityKeyValue(ObservationTransactionObserver.CLUSTERS).getValue()).isEqualTo("1");
		assertThat(aborted.getError()).isInstanceOf(IllegalStateException.class);
		assertThat(this.stopped.stream()
			.filter((context) -> context.getName().equals(ObservationTransactionObserver.SEND_NAME))
			.map((context) -> context.getLowCardinalityKeyValue("tandem.cluster").getValue()))
			.containsExactlyInAnyOrder("east", "west", "east");
	}

	@Test
	void withoutTemplateObservationsEachTransactionIsObservedButNotEachRecordItSends() {
		start();
		Sender sender = this.context.getBean(Sender.class);
		sender.sendToBoth("c");
		TestObservationRegistryAssert.assertThat(this.registry)
			.hasNumberOfObservationsWithNameEqualTo(ObservationTransactionObserver.NAME, 1)
			.hasNumberOfObservationsWithNameEqualTo(ObservationTransactionObserver.SEND_NAME, 0);
		assertThat(this.stopped.stream()
			.filter((context) -> context.getName().equals(ObservationTransactionObserver.NAME))
			.map((context) -> context.getLowCardinalityKeyValue(ObservationTransactionObserver.OUTCOME).getValue()))
			.containsExactly("committed");
	}

	@Test
	void aTraceIdGoesFromAListenersRecordToTheRecordsItSentOnBothClusters() {
		start(SEND_OBSERVATIONS);
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			ProducerRecord<String, String> record = new ProducerRecord<>("traced-in", "k", "traced");
			record.headers().add("b3", (TRACE_ID + "-a2fb4a1d1a96d312-1").getBytes(StandardCharsets.UTF_8));
			producer.send(record);
		}
		for (String cluster : List.of("east", "west")) {
			await().atMost(Duration.ofSeconds(60))
				.until(() -> !ReadCommitted.records(kafka.cluster(cluster).bootstrapServers(), "traced-out",
						ReadCommitted.DEFAULT_TIMEOUT).isEmpty());
			List<ConsumerRecord<byte[], byte[]>> sent = ReadCommitted.records(kafka.cluster(cluster).bootstrapServers(),
					"traced-out", ReadCommitted.DEFAULT_TIMEOUT);
			assertThat(sent).hasSize(1);
			assertThat(traceId(sent.get(0))).as("trace id of the record sent to %s", cluster).isEqualTo(TRACE_ID);
		}
	}

	/** The trace id of B3 headers, single ({@code b3}) or multiple ({@code X-B3-TraceId}). */
	private static String traceId(ConsumerRecord<byte[], byte[]> record) {
		Header single = record.headers().lastHeader("b3");
		if (single != null) {
			return new String(single.value(), StandardCharsets.UTF_8).split("-")[0];
		}
		Header multi = record.headers().lastHeader("X-B3-TraceId");
		return (multi != null) ? new String(multi.value(), StandardCharsets.UTF_8) : null;
	}

	/** Records each observation event as "transaction-id event-name", and each stopped context. */
	static final class EventRecorder implements ObservationHandler<Observation.Context> {

		private final Queue<String> events;

		private final Queue<Observation.Context> stopped;

		EventRecorder(Queue<String> events, Queue<Observation.Context> stopped) {
			this.events = events;
			this.stopped = stopped;
		}

		@Override
		public void onStop(Observation.Context context) {
			this.stopped.add(context);
		}

		@Override
		public void onEvent(Observation.Event event, Observation.Context context) {
			var id = context.getHighCardinalityKeyValue(ObservationTransactionObserver.TRANSACTION_ID);
			this.events.add(((id != null) ? id.getValue() : "?") + " " + event.getName());
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import({ Sender.class, TracedListener.class })
	static class App {

	}

	static class Sender {

		private final ClusterTransactionalTemplate<String, String> east;

		private final ClusterTransactionalTemplate<String, String> west;

		Sender(@Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.east = east;
			this.west = west;
		}

		@CrossClusterTransactional
		public void sendToBoth(String value) {
			this.east.send("observed", value);
			this.west.send("observed", value);
		}

		@CrossClusterTransactional
		public void sendToEastAndFail(String value) {
			this.east.send("observed", value);
			throw new IllegalStateException("fails after one send");
		}

	}

	static class TracedListener {

		private final ClusterTransactionalTemplate<String, String> east;

		private final ClusterTransactionalTemplate<String, String> west;

		TracedListener(@Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.east = east;
			this.west = west;
		}

		@KafkaListener(id = "traced", topics = "traced-in", groupId = "traced",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void route(ConsumerRecord<String, String> record) {
			this.east.send("traced-out", record.key(), record.value());
			this.west.send("traced-out", record.key(), record.value());
		}

	}

}
