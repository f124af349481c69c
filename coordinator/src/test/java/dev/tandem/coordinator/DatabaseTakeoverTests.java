package dev.tandem.coordinator;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.xa.PGXADataSource;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Takeover of a dead instance's database branches, on the replicated decision log (an embedded
 * Ratis peer, so decisions with database participants go through the coordinator's codec), two
 * real Kafka clusters and a real PostgreSQL started by the test: the survivor commits the branch
 * of a decided transaction and rolls back the branch of an undecided one once the dead instance's
 * lease expires.
 */
class DatabaseTakeoverTests {

	private static final StringSerializer STRING = new StringSerializer();

	private static final Duration LEASE = Duration.ofMillis(1500);

	// Clusters of its own: a dead instance's transactions stay open on the marker topic until taken over.
	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = EmbeddedKafkaClustersExtension.perClass(ClusterPreset.EAST1_WEST1);

	@TempDir
	static Path coordinatorDir;

	private static EmbeddedCoordinator coordinator;

	private static EmbeddedPostgres postgres;

	private final List<CrossClusterTransactionManager> managers = new ArrayList<>();

	private String prefix = "";

	@BeforeAll
	static void start() throws Exception {
		coordinator = EmbeddedCoordinator.start(coordinatorDir);
		postgres = EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "10").start();
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY, amount INT NOT NULL)");
		}
	}

	@AfterAll
	static void stop() throws IOException {
		if (coordinator != null) {
			coordinator.close();
		}
		if (postgres != null) {
			postgres.close();
		}
	}

	@BeforeEach
	void names(TestInfo info) {
		this.prefix = "dt" + Math.abs(info.getTestMethod().orElseThrow().getName().hashCode());
		kafka.cluster("east").createTopic(this.prefix, 1, (short) 1);
		kafka.cluster("west").createTopic(this.prefix, 1, (short) 1);
	}

	@AfterEach
	void closeManagers() {
		this.managers.forEach(CrossClusterTransactionManager::close);
	}

	@Test
	void theBranchOfADecidedTransactionOfAnInstanceThatNeverReturnsIsCommittedByTheSurvivor() throws SQLException {
		manager("survivor", ProtocolHook.NONE);
		String id = killedAt(ProtocolStep.AFTER_DECISION, "o-1");
		assertThat(coordinator.decisionLog().state(id, Duration.ofSeconds(5))).isEqualTo(DecisionState.DECIDED);
		assertThat(preparedBranches()).isEqualTo(1);

		await().atMost(LEASE.plus(Duration.ofSeconds(30))).untilAsserted(() -> assertThat(amountOf("o-1")).isEqualTo(1));
		assertThat(preparedBranches()).isZero();
		assertThat(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), this.prefix)).containsExactly("east-o-1");
		assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), this.prefix)).containsExactly("west-o-1");
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
				coordinator.decisionLog().state(id, Duration.ofSeconds(5))).isEqualTo(DecisionState.COMPLETED));
	}

	@Test
	void theBranchOfAnUndecidedTransactionOfAnInstanceThatNeverReturnsIsRolledBackByTheSurvivor() throws SQLException {
		manager("survivor", ProtocolHook.NONE);
		String id = killedAt(ProtocolStep.AFTER_PREPARE, "o-2");
		assertThat(preparedBranches()).isEqualTo(1);

		await().atMost(LEASE.plus(Duration.ofSeconds(30))).untilAsserted(() -> assertThat(preparedBranches()).isZero());
		assertThat(amountOf("o-2")).isNull();
		assertThat(coordinator.decisionLog().state(id, Duration.ofSeconds(5))).isEqualTo(DecisionState.ABORTED);
		assertThat(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), this.prefix)).isEmpty();
		assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), this.prefix)).isEmpty();
	}

	/** One transaction (a row, a record per cluster) of an instance that dies at a step; returns its id. */
	private String killedAt(ProtocolStep crashStep, String order) throws SQLException {
		CrossClusterTransactionManager doomed = manager("doomed", (transactionId, step) -> {
			if (step == crashStep) {
				throw new ProtocolHook.SimulatedCrashException(step);
			}
		});
		CrossClusterTransaction txn = doomed.begin();
		try (PreparedStatement insert = txn.database("orders")
			.prepareStatement("INSERT INTO orders (id, amount) VALUES (?, 1)")) {
			insert.setString(1, order);
			insert.executeUpdate();
		}
		txn.send("east", new ProducerRecord<>(this.prefix, order, "east-" + order), STRING, STRING);
		txn.send("west", new ProducerRecord<>(this.prefix, order, "west-" + order), STRING, STRING);
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(txn::commit);
		doomed.abandon(); // kill -9: the branch stays prepared, the lease is not released
		return txn.transactionId();
	}

	private CrossClusterTransactionManager manager(String instanceId, ProtocolHook hook) {
		PGXADataSource dataSource = new PGXADataSource();
		dataSource.setUrl(postgres.getJdbcUrl("postgres", "postgres"));
		dataSource.setConnectTimeout(10);
		dataSource.setSocketTimeout(30);
		CrossClusterTransactionManager manager = CrossClusterTransactionManager.builder()
			.cluster("east", clientConfig("east"))
			.cluster("west", clientConfig("west"))
			.database("orders", dataSource)
			.idPrefix(this.prefix)
			.instanceId(instanceId)
			.decisionLog(coordinator.decisionLog())
			.slots(1)
			.commitTimeout(Duration.ofSeconds(10))
			.transactionTimeout(Duration.ofMinutes(5))
			.leaseTimeout(LEASE)
			.recoveryInterval(Duration.ofMillis(500))
			.protocolHook(hook)
			.build();
		manager.start();
		this.managers.add(manager);
		return manager;
	}

	private static Map<String, Object> clientConfig(String cluster) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster(cluster).bootstrapServers());
		config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000);
		config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 4000);
		return config;
	}

	private static Integer amountOf(String id) throws SQLException {
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				PreparedStatement select = connection.prepareStatement("SELECT amount FROM orders WHERE id = ?")) {
			select.setString(1, id);
			try (ResultSet result = select.executeQuery()) {
				return result.next() ? result.getInt(1) : null;
			}
		}
	}

	private static int preparedBranches() throws SQLException {
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery("SELECT count(*) FROM pg_prepared_xacts")) {
			result.next();
			return result.getInt(1);
		}
	}

}
