package dev.tandem.autoconfigure;

import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;

/**
 * The exactly-once listener test on two embedded 3-broker KRaft clusters (no Docker needed).
 */
class ExactlyOnceListenerTests extends AbstractExactlyOnceListenerTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST3_WEST3);

	@Override
	String bootstrapServers(String cluster) {
		return kafka.cluster(cluster).bootstrapServers();
	}

}
