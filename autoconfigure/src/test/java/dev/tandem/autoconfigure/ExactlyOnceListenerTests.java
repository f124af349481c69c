package dev.tandem.autoconfigure;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import dev.tandem.test.EmbeddedKafkaClusters;

/**
 * The exactly-once listener test on two embedded 3-broker KRaft clusters (no Docker needed).
 */
class ExactlyOnceListenerTests extends AbstractExactlyOnceListenerTests {

	private static EmbeddedKafkaClusters kafka;

	@BeforeAll
	static void startClusters() {
		kafka = EmbeddedKafkaClusters.builder().cluster("east", 3).cluster("west", 3).build().start();
	}

	@AfterAll
	static void stopClusters() {
		kafka.close();
	}

	@Override
	String bootstrapServers(String cluster) {
		return kafka.cluster(cluster).bootstrapServers();
	}

}
