package dev.tandem.sample;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.stereotype.Component;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.transaction.CrossClusterTransactionManager;
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
public class FlightRouterApplication {

	/** Input topic on east. */
	static final String INPUT = "flights";

	/** Output topic on east and west. */
	static final String OUTPUT = "flights-by-region";

	public static void main(String[] args) {
		SpringApplication.run(FlightRouterApplication.class, args);
	}

	@Bean
	Regions regions() {
		return Regions.load();
	}

	/**
	 * Routes flights.
	 */
	@Component
	static class FlightRouter {

		private static final ObjectMapper JSON = JsonMapper.builder().build();

		private final Regions regions;

		private final ClusterTransactionalTemplate<String, String> east;

		private final ClusterTransactionalTemplate<String, String> west;

		private final String runId;

		private final String outputTopic;

		FlightRouter(Regions regions, @Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				@Value("${flights.run-id:}") String runId, @Value("${flights.output-topic:" + OUTPUT + "}") String outputTopic) {
			this.regions = regions;
			this.east = east;
			this.west = west;
			this.runId = runId;
			this.outputTopic = outputTopic;
		}

		@KafkaListener(id = "flight-router", topics = "${flights.input-topic:" + INPUT + "}", groupId = "${flights.group:flight-router}", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void route(List<ConsumerRecord<String, String>> records) {
			for (ConsumerRecord<String, String> record : records) {
				ObjectNode flight = (ObjectNode) JSON.readTree(record.value());
				if (!this.runId.isEmpty() && !this.runId.equals(flight.path("runId").asString(""))) {
					continue; // an earlier demo run's record: its offset is committed, nothing is sent
				}
				String cluster = this.regions.clusterOf(flight.get("origin").asString());
				flight.put("region", cluster);
				flight.put("src", record.partition() + ":" + record.offset());
				ClusterTransactionalTemplate<String, String> target = Regions.WEST.equals(cluster) ? this.west : this.east;
				target.send(this.outputTopic, record.key(), JSON.writeValueAsString(flight));
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
