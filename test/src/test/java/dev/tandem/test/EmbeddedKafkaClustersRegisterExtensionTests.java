package dev.tandem.test;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link EmbeddedKafkaClustersExtension} registered programmatically.
 *
 * @author Tandem
 */
class EmbeddedKafkaClustersRegisterExtensionTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(
			EmbeddedKafkaClusters.builder().cluster("solo", 1));

	@Test
	void theOnlyClusterIsInjectedWithoutClusterName(EmbeddedKafkaCluster solo) throws Exception {
		assertThat(solo).isSameAs(kafka.cluster("solo"));
		solo.createTopic("solo-topic", 1, (short) 1);
		KafkaTestRecords.produce(solo, "solo-topic", 5);
		assertThat(KafkaTestRecords.consume(solo, "solo-topic", 5)).hasSize(5);
	}

	@Test
	void theExtensionFieldExposesTheRunningClusters() {
		assertThat(kafka.clusters().names()).containsExactly("solo");
		assertThat(kafka.clusters().bootstrapServers().get("solo")).startsWith("localhost:");
	}

}
