package dev.tandem.test;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for the clusters of a plain {@link ClusterPreset}, shared by every registration of the
 * JVM that names it, and for the per-class opt-out. The three registrations resolve no
 * parameters, so they do not compete.
 *
 * @author Tandem
 */
class SharedClusterPresetTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension samePreset = new EmbeddedKafkaClustersExtension(
			ClusterPreset.EAST1_WEST1);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension own = EmbeddedKafkaClustersExtension.perClass(ClusterPreset.EAST1_WEST1);

	@Test
	void everyRegistrationOfAPresetGetsTheSameClustersAndAnOptOutGetsItsOwn() {
		assertThat(samePreset.clusters()).isSameAs(kafka.clusters());
		assertThat(own.clusters()).isNotSameAs(kafka.clusters());
		assertThat(own.clusters().names()).containsExactly("east", "west");
		assertThat(own.cluster("east").bootstrapServers()).isNotEqualTo(kafka.cluster("east").bootstrapServers());
	}

	@Test
	void aSharedClusterRefusesToStopOrRestartABrokerAndNamesTheOptOut() {
		EmbeddedKafkaCluster east = kafka.cluster("east");
		assertThatIllegalStateException().isThrownBy(() -> east.stopBroker(0))
			.withMessage("Cannot stop a broker of cluster 'east': the test classes that use ClusterPreset.EAST1_WEST1 "
					+ "share it; give the class its own clusters with "
					+ "EmbeddedKafkaClustersExtension.perClass(ClusterPreset.EAST1_WEST1) or "
					+ "@EnableEmbeddedKafkaClusters(preset = ClusterPreset.EAST1_WEST1, shared = false)");
		assertThatIllegalStateException().isThrownBy(() -> east.restartBroker(0))
			.withMessageStartingWith("Cannot restart a broker of cluster 'east'");
		assertThat(east.runningBrokerIds()).containsExactly(0);
	}

	@Test
	void aSharedClusterServesTopicsLikeAnyOther() throws Exception {
		EmbeddedKafkaCluster west = kafka.cluster("west");
		west.createTopic("shared-preset-topic", 1, (short) 1);
		KafkaTestRecords.produce(west, "shared-preset-topic", 3);
		assertThat(KafkaTestRecords.consume(west, "shared-preset-topic", 3)).hasSize(3);
	}

}
