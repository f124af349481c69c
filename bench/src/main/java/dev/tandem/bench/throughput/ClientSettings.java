package dev.tandem.bench.throughput;

import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * Client settings of one contender: the run's common settings with the contender's own
 * overrides on top, split into what consumers and what producers know, so that neither client
 * logs a setting it does not know.
 *
 * @param settings every setting, by Kafka property name
 * @since 0.1.0
 */
record ClientSettings(Map<String, String> settings) {

	ClientSettings {
		settings = Map.copyOf(settings);
	}

	/**
	 * Returns the consumer settings with the bootstrap servers and group.
	 * @param bootstrapServers the cluster
	 * @param groupId the group
	 * @return a fresh map
	 */
	Map<String, Object> consumer(String bootstrapServers, String groupId) {
		Map<String, Object> config = new LinkedHashMap<>();
		config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
		this.settings.forEach((key, value) -> {
			if (ConsumerConfig.configNames().contains(key)) {
				config.put(key, value);
			}
		});
		config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		config.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
		return config;
	}

	/**
	 * Returns the producer settings with the bootstrap servers ({@code acks=all}, idempotent).
	 * @param bootstrapServers the cluster
	 * @return a fresh map
	 */
	Map<String, Object> producer(String bootstrapServers) {
		Map<String, Object> config = new LinkedHashMap<>();
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
		this.settings.forEach((key, value) -> {
			if (ProducerConfig.configNames().contains(key)) {
				config.put(key, value);
			}
		});
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		return config;
	}

	/**
	 * Returns the settings of both kinds, without bootstrap servers (Tandem's manager takes one
	 * map per cluster and gives each client the keys it knows).
	 * @return a fresh map
	 */
	Map<String, Object> shared() {
		return new LinkedHashMap<>(this.settings);
	}

	@Override
	public String toString() {
		return this.settings.toString();
	}

}
