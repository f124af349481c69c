package dev.tandem.transaction;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * A cluster that is down at start-up or known to be unreachable: the instance starts without it
 * unless every cluster is required, and only the transactions that need it fail, leaving nothing
 * visible anywhere. East is a real 3-broker cluster; west's bootstrap address is a port nobody
 * listens on.
 */
class ClusterAvailabilityTests {

	private static final StringSerializer STRING = new StringSerializer();

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST3);

	private static String deadBootstrap;

	private final InMemoryDecisionLog decisionLog = new InMemoryDecisionLog();

	private final List<CrossClusterTransactionManager> managers = new ArrayList<>();

	private String topic = "";

	@BeforeAll
	static void start() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			deadBootstrap = "localhost:" + socket.getLocalPort(); // closed again: connections are refused
		}
	}

	@BeforeEach
	void createTopic(TestInfo info) {
		this.topic = "t-" + info.getTestMethod().orElseThrow().getName();
		kafka.cluster("east").createTopic(this.topic, 3, (short) 3);
	}

	@AfterEach
	void closeManagers() {
		this.managers.forEach(CrossClusterTransactionManager::close);
	}

	private CrossClusterTransactionManagerBuilder builder() {
		Map<String, Object> east = new HashMap<>();
		east.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("east").bootstrapServers());
		Map<String, Object> west = new HashMap<>();
		west.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, deadBootstrap);
		return CrossClusterTransactionManager.builder()
			.cluster("east", east)
			.cluster("west", west)
			.idPrefix("availability")
			.instanceId(this.topic)
			.decisionLog(this.decisionLog)
			.commitTimeout(Duration.ofSeconds(3));
	}

	private CrossClusterTransactionManager started(CrossClusterTransactionManagerBuilder builder) {
		CrossClusterTransactionManager manager = builder.build();
		this.managers.add(manager);
		manager.start();
		return manager;
	}

	@Test
	void anInstanceStartsWithoutAClusterThatIsDownAndOnlyTheTransactionsNeedingItFail() {
		CrossClusterTransactionManager manager = started(builder());
		CrossClusterTransaction eastOnly = manager.begin();
		eastOnly.send("east", new ProducerRecord<>(this.topic, "k", "east-only"), STRING, STRING);
		eastOnly.commit();
		assertThat(eastOnly.state()).isEqualTo(TransactionState.COMMITTED);

		CrossClusterTransaction both = manager.begin();
		Throwable failure = catchThrowable(() -> {
			both.send("east", new ProducerRecord<>(this.topic, "k", "east-of-both"), STRING, STRING);
			both.send("west", new ProducerRecord<>(this.topic, "k", "west-of-both"), STRING, STRING);
			both.commit();
		});
		assertThat(failure).isInstanceOf(TandemException.class);
		both.close(); // aborts what it started on east
		assertThat(both.state()).isEqualTo(TransactionState.ABORTED);
		// commitTransaction() returns before the commit markers reach the partitions
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
				ReadCommitted.values(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("east-only"));
	}

	@Test
	void everyClusterRequiredAtStartFailsTheStartNamingTheCluster() {
		assertThatExceptionOfType(ClusterUnavailableException.class)
			.isThrownBy(() -> started(builder().requireAllClustersAtStart(true)))
			.satisfies((ex) -> assertThat(ex.getCluster()).isEqualTo("west"))
			.withMessageContaining("west");
	}

	@Test
	void aTransactionNeedingAClusterKnownUnreachableFailsBeforeWritingThere() {
		Set<String> unreachable = new java.util.concurrent.CopyOnWriteArraySet<>();
		CrossClusterTransactionManager manager = started(builder().clusterReachability(unreachable::contains));
		unreachable.add("east");
		CrossClusterTransaction txn = manager.begin();
		assertThatExceptionOfType(ClusterUnavailableException.class)
			.isThrownBy(() -> txn.send("east", new ProducerRecord<>(this.topic, "k", "never"), STRING, STRING))
			.satisfies((ex) -> assertThat(ex.getCluster()).isEqualTo("east"));
		assertThat(txn.enlistedClusters()).isEmpty();
		txn.close();
		unreachable.clear();
		CrossClusterTransaction next = manager.begin();
		next.send("east", new ProducerRecord<>(this.topic, "k", "after"), STRING, STRING);
		next.commit();
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
				ReadCommitted.values(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("after"));
	}

}
