package dev.tandem.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import javax.sql.DataSource;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.xa.PGXADataSource;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.tandem.autoconfigure.diagnostics.PreparedTransactionsDisabledFailureAnalyzer;
import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterDataSource;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code JdbcTemplate} writes inside {@code @CrossClusterTransactional} methods join the
 * cross-cluster transaction through a {@link CrossClusterDataSource} bean, which the
 * auto-configuration registers with the manager: the row and the records on two real Kafka
 * clusters commit together, or neither does. A real PostgreSQL started by the test.
 */
class CrossClusterDataSourceTests {

	/** Its own name: the clusters are shared with other test classes ({@code DeadLetterTopicsTests} has "payments"). */
	static final String TOPIC = "datasource-payments";

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	private static EmbeddedPostgres postgres;

	@TempDir
	Path dataDir;

	private ConfigurableApplicationContext context;

	@BeforeAll
	static void start() throws IOException, SQLException {
		postgres = EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "10").start();
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE TABLE payments (id VARCHAR(64) PRIMARY KEY, amount INT NOT NULL)");
		}
		for (String cluster : List.of("east", "west")) {
			kafka.cluster(cluster).createTopic(TOPIC, 1, (short) 1);
		}
	}

	@AfterAll
	static void stopPostgres() throws IOException {
		if (postgres != null) {
			postgres.close();
		}
	}

	@AfterEach
	void stop() {
		if (this.context != null) {
			this.context.close();
		}
	}

	@Test
	void jdbcTemplateWritesInACrossClusterTransactionalMethodCommitOrRollBackWithItsRecords() {
		this.context = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.transaction.id-prefix=datasource-tests", "tandem.transaction.instance-id=app-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"))
			.run();
		assertThat(this.context.getBean(CrossClusterTransactionManager.class).databases()).containsExactly("payments");
		Payments payments = this.context.getBean(Payments.class);
		JdbcTemplate jdbc = this.context.getBean(JdbcTemplate.class);

		payments.pay("p-1", 10);
		assertThatIllegalStateException().isThrownBy(() -> payments.payAndFail("p-2", 20));

		assertThat(jdbc.queryForList("SELECT id FROM payments", String.class)).containsExactly("p-1");
		for (String cluster : List.of("east", "west")) {
			assertThat(ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), TOPIC)).containsExactly("p-1");
		}
		assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_prepared_xacts", Integer.class)).isZero();
	}

	@Test
	void aDatabaseThatCannotPrepareTransactionsFailsTheStartWithAnAnalysisNamingTheSetting() throws IOException {
		try (EmbeddedPostgres server = EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "0")
			.start()) {
			disabled = server;
			Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(DisabledApp.class)
				.web(WebApplicationType.NONE)
				.properties(kafka.clusters().tandemProperties())
				.properties("tandem.transaction.id-prefix=datasource-tests", "tandem.transaction.instance-id=app-1",
						"tandem.coordinator.data-dir=" + this.dataDir.resolve("disabled-coordinator"))
				.run());
			FailureAnalysis analysis = new PreparedTransactionsDisabledFailureAnalyzer().analyze(failure);
			assertThat(analysis).isNotNull();
			assertThat(analysis.getDescription()).contains("Database 'ledger'")
				.contains("max_prepared_transactions = 0");
			assertThat(analysis.getAction()).contains("max_prepared_transactions").contains("restart");
		}
		finally {
			disabled = null;
		}
	}

	private static EmbeddedPostgres disabled;

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(excludeName = { JdbcOnly.HIBERNATE, JdbcOnly.DATA_JPA })
	static class DisabledApp {

		@Bean
		CrossClusterDataSource ledgerDataSource() {
			PGXADataSource xa = new PGXADataSource();
			xa.setUrl(disabled.getJdbcUrl("postgres", "postgres"));
			return new CrossClusterDataSource("ledger", xa, disabled.getPostgresDatabase());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(excludeName = { JdbcOnly.HIBERNATE, JdbcOnly.DATA_JPA })
	@Import(Payments.class)
	static class App {

		// declared with its own type, so that the auto-configuration finds it before it is created
		@Bean
		CrossClusterDataSource paymentsDataSource() {
			PGXADataSource xa = new PGXADataSource();
			xa.setUrl(postgres.getJdbcUrl("postgres", "postgres"));
			DataSource pool = postgres.getPostgresDatabase();
			return new CrossClusterDataSource("payments", xa, pool);
		}

		@Bean
		JdbcTemplate jdbcTemplate(DataSource dataSource) {
			return new JdbcTemplate(dataSource);
		}

	}

	static class Payments {

		private final JdbcTemplate jdbc;

		private final ClusterTransactionalTemplate<String, String> east;

		private final ClusterTransactionalTemplate<String, String> west;

		Payments(JdbcTemplate jdbc, @Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.jdbc = jdbc;
			this.east = east;
			this.west = west;
		}

		@CrossClusterTransactional
		public void pay(String id, int amount) {
			this.jdbc.update("INSERT INTO payments (id, amount) VALUES (?, ?)", id, amount);
			this.east.send(TOPIC, id, id);
			this.west.send(TOPIC, id, id);
		}

		@CrossClusterTransactional
		public void payAndFail(String id, int amount) {
			this.jdbc.update("INSERT INTO payments (id, amount) VALUES (?, ?)", id, amount);
			this.east.send(TOPIC, id, id);
			this.west.send(TOPIC, id, id);
			throw new IllegalStateException("fails after the insert and the sends");
		}

	}

}
