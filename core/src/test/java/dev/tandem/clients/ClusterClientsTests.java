package dev.tandem.clients;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A cluster's client properties cut to one client type keep that type's settings and the
 * objects client plugins need (Spring Boot's SSL bundle for its SSL engine factory), and drop
 * other clients' settings.
 */
class ClusterClientsTests {

	@Test
	void keepsTheClientTypesSettingsAndPluginObjectsAndDropsOtherSettings() {
		Object bundle = new Object();
		Map<String, Object> config = new HashMap<>();
		config.put("bootstrap.servers", "east:9092");
		config.put("ssl.engine.factory.class", "org.springframework.boot.kafka.autoconfigure.SslBundleSslEngineFactory");
		config.put("org.springframework.boot.ssl.SslBundle", bundle);
		config.put("max.poll.records", 50);
		config.put("acks", "all");
		config.put("transactional.id", "x");
		config.put("interceptor.classes", List.of("a.B"));
		config.put("some.flag", Boolean.TRUE);
		assertThat(ClusterClients.only(config, ConsumerConfig.configNames())).containsEntry("bootstrap.servers", "east:9092")
			.containsEntry("org.springframework.boot.ssl.SslBundle", bundle)
			.containsEntry("max.poll.records", 50)
			.containsKeys("ssl.engine.factory.class", "interceptor.classes")
			.doesNotContainKeys("acks", "transactional.id", "some.flag");
	}

}
