package dev.tandem.autoconfigure;

import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.kafka.KafkaContainer;

/**
 * The exactly-once listener test on two Kafka brokers in Docker containers; skipped where no
 * Docker engine runs ({@link ExactlyOnceListenerTests} covers the same on embedded brokers).
 */
@Testcontainers(disabledWithoutDocker = true)
class ExactlyOnceListenerContainerTests extends AbstractExactlyOnceListenerTests {

	@Container
	static final KafkaContainer EAST = new KafkaContainer("apache/kafka:4.1.1");

	@Container
	static final KafkaContainer WEST = new KafkaContainer("apache/kafka:4.1.1");

	@Override
	String bootstrapServers(String cluster) {
		return "east".equals(cluster) ? EAST.getBootstrapServers() : WEST.getBootstrapServers();
	}

}
