package dev.tandem.sample;

import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionTemplate;
import dev.tandem.transaction.CrossClusterTransactional;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;

/**
 * The flight router as a Spring Boot app on {@code tandem-spring-boot-starter}: a batch
 * {@code @KafkaListener} on cluster east, {@code @CrossClusterTransactional}, sends each flight to
 * the cluster of its origin airport's region; the consumed offsets are committed on east in the
 * same transaction. Configured only with {@code tandem.*} properties (see application.yml).
 */
@SpringBootApplication
// imported, not only scanned: the chaos suite runs the router from jars without directory entries,
// where component scanning finds no top-level class (nested ones come with this class)
@Import(FlightLedger.class)
public class FlightRouterApplication {

	private static final Logger logger = LoggerFactory.getLogger(FlightRouterApplication.class);

	/** Input topic on east. */
	static final String INPUT = "flights";

	/** Output topic on east and west. */
	static final String OUTPUT = "flights-by-region";

	/** Output header: the id of the cross-cluster transaction that wrote the record. */
	static final String TRANSACTION_HEADER = "flights-txn";

	/** Output header: records of that transaction per cluster, {@code east=3,west=5}. */
	static final String RECORDS_HEADER = "flights-txn-records";

	/** Output header: input consumed by that transaction, {@code partition:first-last,...}. */
	static final String INPUT_HEADER = "flights-txn-input";

	/** Output header: which start of the router wrote the record ({@code flights.incarnation}). */
	static final String INCARNATION_HEADER = "flights-incarnation";

	public static void main(String[] args) {
		SpringApplication.run(FlightRouterApplication.class, args);
	}

	@Bean
	Regions regions() {
		return Regions.load();
	}

	/**
	 * Routes flights. Every output record carries audit headers for an independent checker
	 * ({@link Verification}): {@value #TRANSACTION_HEADER} (the Tandem transaction id),
	 * {@value #RECORDS_HEADER} (how many records that transaction sends to each cluster, as
	 * {@code east=3,west=5}, so a reader of one cluster can tell whether the whole transaction is
	 * visible), {@value #INPUT_HEADER} (the input offsets the transaction consumed, per
	 * partition) and {@value #INCARNATION_HEADER} (which start of the router wrote it, from
	 * {@code flights.incarnation}; empty unless set).
	 */
	@Component
	static class FlightRouter {

		private static final ObjectMapper JSON = JsonMapper.builder().build();

		private final Regions regions;

		private final ClusterTransactionalTemplate<String, String> east;

		private final ClusterTransactionalTemplate<String, String> west;

		private final String runId;

		private final String outputTopic;

		private final byte[] incarnation;

		private final FlightLedger.@Nullable Writer ledger;

		FlightRouter(Regions regions, @Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				@Value("${flights.run-id:}") String runId, @Value("${flights.output-topic:" + OUTPUT + "}") String outputTopic,
				@Value("${flights.incarnation:}") String incarnation, ObjectProvider<FlightLedger.Writer> ledger) {
			this.regions = regions;
			this.east = east;
			this.west = west;
			this.runId = runId;
			this.outputTopic = outputTopic;
			this.incarnation = incarnation.getBytes(StandardCharsets.UTF_8);
			this.ledger = ledger.getIfAvailable();
		}

		@KafkaListener(id = "flight-router", topics = "${flights.input-topic:" + INPUT + "}", groupId = "${flights.group:flight-router}", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void route(List<ConsumerRecord<String, String>> records) throws SQLException {
			Map<String, List<ProducerRecord<String, String>>> byCluster = new TreeMap<>();
			Map<Integer, long[]> consumed = new TreeMap<>();
			List<FlightLedger.Routed> rows = new ArrayList<>();
			for (ConsumerRecord<String, String> record : records) {
				long[] range = consumed.computeIfAbsent(record.partition(), (p) -> new long[] { record.offset(), record.offset() });
				range[0] = Math.min(range[0], record.offset());
				range[1] = Math.max(range[1], record.offset());
				ObjectNode flight = (ObjectNode) JSON.readTree(record.value());
				if (!this.runId.isEmpty() && !this.runId.equals(flight.path("runId").asString(""))) {
					continue; // an earlier demo run's record: its offset is committed, nothing is sent
				}
				if (flight.path("poison").asBoolean(false)) {
					// the chaos suite's POISON_RECORD fault: a record this listener can never process
					throw new IllegalArgumentException("Poison flight " + record.partition() + ":" + record.offset());
				}
				String cluster = this.regions.clusterOf(flight.get("origin").asString());
				flight.put("region", cluster);
				flight.put("src", record.partition() + ":" + record.offset());
				rows.add(new FlightLedger.Routed(flight.path("seq").asLong(-1), cluster));
				byCluster.computeIfAbsent(cluster, (c) -> new ArrayList<>())
					.add(new ProducerRecord<>(this.outputTopic, record.key(), JSON.writeValueAsString(flight)));
			}
			CrossClusterTransaction transaction = CrossClusterTransactionTemplate.currentTransaction();
			byte[] transactionId = ((transaction != null) ? transaction.transactionId() : "")
				.getBytes(StandardCharsets.UTF_8);
			byte[] counts = byCluster.entrySet().stream().map((e) -> e.getKey() + "=" + e.getValue().size())
				.collect(Collectors.joining(",")).getBytes(StandardCharsets.UTF_8);
			byte[] input = consumed.entrySet().stream()
				.map((e) -> e.getKey() + ":" + e.getValue()[0] + "-" + e.getValue()[1])
				.collect(Collectors.joining(",")).getBytes(StandardCharsets.UTF_8);
			byCluster.forEach((cluster, routed) -> {
				ClusterTransactionalTemplate<String, String> target = Regions.WEST.equals(cluster) ? this.west : this.east;
				for (ProducerRecord<String, String> record : routed) {
					record.headers().add(TRANSACTION_HEADER, transactionId).add(RECORDS_HEADER, counts)
						.add(INPUT_HEADER, input).add(INCARNATION_HEADER, this.incarnation);
					target.send(record);
				}
			});
			if (this.ledger != null) {
				// the chaos suite's database faults: a row per flight, in the same transaction
				this.ledger.record(new String(transactionId, StandardCharsets.UTF_8), rows);
			}
		}

	}

	/**
	 * A real process death for the chaos suite: halts the JVM (no shutdown hooks, no graceful
	 * close, as {@code kill -9}) when transaction number {@code flights.halt-at-transaction}
	 * reaches protocol step {@code flights.halt-at-step}. Not for production.
	 */
	@Component
	@ConditionalOnProperty(name = "flights.halt-at-step")
	static class Halt {

		@Bean
		ProtocolHook haltHook(@Value("${flights.halt-at-step}") ProtocolStep haltStep,
				@Value("${flights.halt-at-transaction:1}") int haltAt) {
			AtomicInteger reached = new AtomicInteger();
			return (transactionId, step) -> {
				if (step == haltStep && reached.incrementAndGet() == haltAt) {
					// The chaos suite reads this line to know which transaction was cut off where.
					logger.warn("HALT at {} of transaction {}", step, transactionId);
					Runtime.getRuntime().halt(137);
				}
			};
		}

	}

	/**
	 * The demo's hard stop: right after the decision of transaction number
	 * {@code flights.crash-at}, abandons every producer with the decided transaction open (as a
	 * killed process leaves them) and stops processing. Not for production.
	 */
	@Component
	@ConditionalOnProperty(name = "flights.crash-at")
	static class HardStop {

		final CountDownLatch stopped = new CountDownLatch(1);

		final AtomicInteger decisions = new AtomicInteger();

		@Bean
		ProtocolHook hardStopHook(@Value("${flights.crash-at}") int crashAt,
				ObjectProvider<CrossClusterTransactionManager> manager) {
			return (transactionId, step) -> {
				if (step == ProtocolStep.AFTER_DECISION && this.decisions.incrementAndGet() == crashAt
						&& this.stopped.getCount() > 0) {
					manager.getObject().abandon();
					this.stopped.countDown();
					throw new ProtocolHook.SimulatedCrashException(step);
				}
			};
		}

	}

}
