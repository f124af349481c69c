package dev.tandem.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Configuration;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.EmbeddedKafkaClusters;
import dev.tandem.test.EnableEmbeddedKafkaClusters.KafkaCluster;
import dev.tandem.test.ReadCommitted;
import dev.tandem.test.spring.EmbeddedTandemClusters;
import dev.tandem.transaction.CrossClusterTransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The user guide's {@code @SpringBootTest} recipe (docs/user-guide.md): {@link EmbeddedTandemClusters} starts two
 * embedded clusters, feeds {@code tandem.clusters.*} to the application (no
 * {@code @DynamicPropertySource}) and closes them after the application's beans.
 */
@SpringBootTest(classes = EmbeddedTandemClustersSpringBootTests.App.class,
		properties = { "tandem.transaction.id-prefix=recipe", "tandem.transaction.instance-id=test-0",
				"tandem.coordinator.data-dir=target/recipe-${random.uuid}/coordinator" })
@EmbeddedTandemClusters(clusters = { @KafkaCluster(name = "east", brokers = 1), @KafkaCluster(name = "west", brokers = 1) })
class EmbeddedTandemClustersSpringBootTests {

	@Autowired
	EmbeddedKafkaClusters kafka;

	@Autowired
	CrossClusterTransactionTemplate transactions;

	@Autowired
	@Qualifier("eastTandemTemplate")
	ClusterTransactionalTemplate<String, String> east;

	@Autowired
	@Qualifier("westTandemTemplate")
	ClusterTransactionalTemplate<String, String> west;

	@Test
	void theApplicationReachesBothEmbeddedClustersWithoutDynamicProperties() {
		this.kafka.cluster("east").createTopic("orders", 1, (short) 1);
		this.kafka.cluster("west").createTopic("orders", 1, (short) 1);
		this.transactions.execute((transaction) -> {
			this.east.send("orders", "k", "to-east");
			this.west.send("orders", "k", "to-west");
			return null;
		});
		assertThat(ReadCommitted.values(this.kafka.cluster("east"), "orders")).isEqualTo(List.of("to-east"));
		assertThat(ReadCommitted.values(this.kafka.cluster("west"), "orders")).isEqualTo(List.of("to-west"));
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class App {

	}

}
