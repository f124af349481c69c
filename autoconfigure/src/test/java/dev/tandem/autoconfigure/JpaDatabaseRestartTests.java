package dev.tandem.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.persistence.EntityManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactional;
import dev.tandem.transaction.InDoubtTransactionException;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * A JPA write in a {@code @CrossClusterTransactional} method whose PostgreSQL stops after the
 * decision, before the branch's commit, and an application closed while it is still down: the
 * caller is told in-doubt (never success), the close returns, and the next start commits the
 * prepared branch from the decision log once the database is back (issue 28, tried by a breaker).
 * Real brokers, the embedded Ratis coordinator on disk, a real PostgreSQL started again on the same
 * port and data directory.
 */
class JpaDatabaseRestartTests {

	static final String TOPIC = "jpa-restart";

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	/** The database the app writes to; started again on the same port and data directory. */
	static volatile RestartablePostgres database;

	@TempDir
	Path dataDir;

	@BeforeEach
	void startDatabase() throws IOException, SQLException {
		database = RestartablePostgres.start(this.dataDir, 10, "CREATE TABLE brk_account (id BIGINT PRIMARY KEY, "
				+ "owner VARCHAR(64) NOT NULL, balance INT NOT NULL, version BIGINT NOT NULL)");
		for (String cluster : List.of("east", "west")) {
			kafka.cluster(cluster).createTopic(TOPIC, 1, (short) 1);
		}
	}

	@AfterEach
	void stopDatabase() throws IOException {
		if (database != null) {
			database.close();
		}
	}

	private ConfigurableApplicationContext start() {
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.transaction.id-prefix=jpa-restart", "tandem.transaction.instance-id=app-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"),
					"tandem.datasources.ledger.url=jdbc:postgresql://localhost:" + database.port() + "/postgres",
					"tandem.datasources.ledger.username=postgres",
					"tandem.datasources.ledger.xa-properties.connect-timeout=5",
					"tandem.datasources.ledger.xa-properties.socket-timeout=10")
			.run();
	}

	@Test
	void theDatabaseStoppedAfterTheDecisionAndTheAppClosedWhileItIsDownCommitsTheRowAtTheNextStart()
			throws Exception {
		ConfigurableApplicationContext first = start();
		StopDatabaseAfterTheDecision hook = first.getBean(StopDatabaseAfterTheDecision.class);
		hook.armed.set(true);

		Throwable failure = catchThrowable(() -> first.getBean(Writer.class).open(1, "restart-1"));

		assertThat(hook.stopped).isTrue();
		assertThat(failure).as("never reported committed while the branch is not")
			.isInstanceOf(InDoubtTransactionException.class);
		assertThat(CompletableFuture.runAsync(first::close)).succeedsWithin(Duration.ofSeconds(60));

		database.start();
		assertThat(count("SELECT count(*) FROM pg_prepared_xacts")).as("the prepared branch survived").isOne();
		assertThat(count("SELECT count(*) FROM brk_account")).isZero();
		try (ConfigurableApplicationContext second = start()) {
			await().atMost(Duration.ofSeconds(60))
				.until(() -> count("SELECT count(*) FROM pg_prepared_xacts") == 0);
			assertThat(count("SELECT count(*) FROM brk_account WHERE owner = 'restart-1'")).isOne();
			assertThat(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), TOPIC))
				.containsExactly("restart-1");
			assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), TOPIC))
				.containsExactly("restart-1");
			// and the restarted app writes again
			second.getBean(Writer.class).open(2, "restart-2");
			assertThat(count("SELECT count(*) FROM brk_account")).isEqualTo(2);
		}
	}

	private static long count(String query) throws SQLException {
		try (Connection connection = database.dataSource().getConnection();
				Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery(query)) {
			result.next();
			return result.getLong(1);
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ Writer.class, StopDatabaseAfterTheDecision.class })
	static class App {

	}

	/** Stops the database once, when armed, between the decision and the commits. */
	static class StopDatabaseAfterTheDecision implements ProtocolHook {

		final AtomicBoolean armed = new AtomicBoolean();

		final AtomicBoolean stopped = new AtomicBoolean();

		@Override
		public void reached(String transactionId, ProtocolStep step) {
			if (step == ProtocolStep.AFTER_DECISION && this.armed.getAndSet(false)) {
				try {
					database.stop();
				}
				catch (IOException ex) {
					throw new IllegalStateException(ex);
				}
				this.stopped.set(true);
			}
		}

	}

	static class Writer {

		private final EntityManager entityManager;

		private final ClusterTransactionalTemplate<String, String> east;

		private final ClusterTransactionalTemplate<String, String> west;

		Writer(EntityManager entityManager,
				@Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.entityManager = entityManager;
			this.east = east;
			this.west = west;
		}

		@CrossClusterTransactional
		public void open(long id, String owner) {
			this.entityManager.persist(new JpaBreakerTests.Account(id, owner, 0));
			this.east.send(TOPIC, owner, owner);
			this.west.send(TOPIC, owner, owner);
		}

	}

}
