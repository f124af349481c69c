package dev.tandem.autoconfigure;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.EmbeddedKafkaCluster;
import dev.tandem.test.EmbeddedKafkaClusters;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An app that configures its Kafka security once, under {@code spring.kafka.*}, reaches two
 * clusters under {@code tandem.clusters} that accept only SASL/PLAIN: a cross-cluster
 * transaction commits on both, verified with {@code read_committed}.
 */
class SharedSecurityTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(
			EmbeddedKafkaClusters.builder().saslPlainCluster("east", 1).saslPlainCluster("west", 1));

	@TempDir
	Path dataDir;

	@Test
	void securityConfiguredOnceUnderSpringKafkaReachesBothClusters() {
		kafka.cluster("east").createTopic("secured", 1, (short) 1);
		kafka.cluster("west").createTopic("secured", 1, (short) 1);
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
			.web(WebApplicationType.NONE)
			.properties("spring.kafka.security.protocol=SASL_PLAINTEXT", "spring.kafka.properties.sasl.mechanism=PLAIN",
					"spring.kafka.properties.sasl.jaas.config=" + EmbeddedKafkaCluster.saslJaasConfig(),
					"tandem.clusters.east.bootstrap-servers=" + kafka.cluster("east").bootstrapServers(),
					"tandem.clusters.west.bootstrap-servers=" + kafka.cluster("west").bootstrapServers(),
					"tandem.transaction.id-prefix=security-tests", "tandem.transaction.instance-id=app-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"))
			.run()) {
			@SuppressWarnings("unchecked")
			ClusterTransactionalTemplate<String, String> east = context.getBean("eastTandemTemplate",
					ClusterTransactionalTemplate.class);
			@SuppressWarnings("unchecked")
			ClusterTransactionalTemplate<String, String> west = context.getBean("westTandemTemplate",
					ClusterTransactionalTemplate.class);
			context.getBean(CrossClusterTransactionTemplate.class).execute((transaction) -> {
				east.send("secured", "k", "to-east");
				west.send("secured", "k", "to-west");
				return null;
			});
			assertThat(ReadCommitted.values(kafka.cluster("east"), "secured")).isEqualTo(List.of("to-east"));
			assertThat(ReadCommitted.values(kafka.cluster("west"), "secured")).isEqualTo(List.of("to-west"));
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

	}

}
