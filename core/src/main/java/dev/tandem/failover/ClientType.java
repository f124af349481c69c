package dev.tandem.failover;

import java.util.Set;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * Kind of Kafka client a setting, a property map or a leader cache belongs to.
 *
 * @author Tandem
 * @since 0.1.0
 */
public enum ClientType {

	/**
	 * A {@code KafkaProducer}.
	 */
	PRODUCER,

	/**
	 * A {@code KafkaConsumer}.
	 */
	CONSUMER,

	/**
	 * An {@code Admin} client.
	 */
	ADMIN;

	/**
	 * Return the configuration keys this kind of client accepts, as defined by the
	 * kafka-clients on the class path.
	 * @return the known configuration keys, never empty
	 * @since 0.1.0
	 */
	public Set<String> configNames() {
		return switch (this) {
			case PRODUCER -> ProducerConfig.configNames();
			case CONSUMER -> ConsumerConfig.configNames();
			case ADMIN -> AdminClientConfig.configNames();
		};
	}

}
