package dev.tandem.test;

import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import dev.tandem.test.EnableEmbeddedKafkaClusters.KafkaCluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * Tests for {@link EnableEmbeddedKafkaClusters} and the parameters
 * {@link EmbeddedKafkaClustersExtension} injects.
 *
 * @author Tandem
 */
@EnableEmbeddedKafkaClusters(
		clusters = { @KafkaCluster(name = "east", brokers = 1),
				@KafkaCluster(name = "west", brokers = 1, brokerProperties = "log.retention.ms=3600000") },
		brokerProperties = "num.partitions=2")
class EmbeddedKafkaClustersExtensionTests {

	private final EmbeddedKafkaClusters clusters;

	EmbeddedKafkaClustersExtensionTests(EmbeddedKafkaClusters clusters) {
		this.clusters = clusters;
	}

	@Test
	void constructorAndMethodParametersReceiveTheSameRunningClusters(EmbeddedKafkaClusters fromMethod) {
		assertThat(fromMethod).isSameAs(this.clusters);
		assertThat(fromMethod.names()).containsExactly("east", "west");
		assertThat(fromMethod.bootstrapServers()).containsOnlyKeys("east", "west");
	}

	@Test
	void clusterNameSelectsTheInjectedCluster(@ClusterName("east") EmbeddedKafkaCluster east,
			@ClusterName("west") EmbeddedKafkaCluster west) {
		assertThat(east).isSameAs(this.clusters.cluster("east"));
		assertThat(west).isSameAs(this.clusters.cluster("west"));
		assertThat(east.brokerIds()).containsExactly(0);
	}

	@Test
	void brokerPropertiesOfTheAnnotationReachTheBrokers(@ClusterName("east") EmbeddedKafkaCluster east,
			@ClusterName("west") EmbeddedKafkaCluster west) throws Exception {
		assertThat(brokerConfig(east, "num.partitions")).isEqualTo("2");
		assertThat(brokerConfig(west, "num.partitions")).isEqualTo("2");
		assertThat(brokerConfig(west, "log.retention.ms")).isEqualTo("3600000");
		assertThat(brokerConfig(east, "log.retention.ms")).isNotEqualTo("3600000");
		assertThat(brokerConfig(east, "min.insync.replicas")).isEqualTo("1");
		assertThat(brokerConfig(east, "auto.create.topics.enable")).isEqualTo("false");
	}

	@Test
	void tandemPropertiesPointAnApplicationAtEveryCluster() {
		assertThat(this.clusters.tandemProperties()).containsExactly(
				entry("tandem.clusters.east.bootstrap-servers", this.clusters.cluster("east").bootstrapServers()),
				entry("tandem.clusters.west.bootstrap-servers", this.clusters.cluster("west").bootstrapServers()));
	}

	private static String brokerConfig(EmbeddedKafkaCluster cluster, String name) throws Exception {
		ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "0");
		Map<ConfigResource, org.apache.kafka.clients.admin.Config> configs = cluster.admin()
			.describeConfigs(List.of(broker))
			.all()
			.get();
		return configs.get(broker).get(name).value();
	}

	@Nested
	class NestedTests {

		@Test
		void nestedClassesReuseTheClustersOfTheEnclosingClass(EmbeddedKafkaClusters nested) {
			assertThat(nested).isSameAs(EmbeddedKafkaClustersExtensionTests.this.clusters);
		}

	}

}
