package dev.tandem.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.data.annotation.Id;
import org.springframework.data.jdbc.repository.config.EnableJdbcRepositories;
import org.springframework.data.relational.core.mapping.Table;
import org.springframework.data.repository.CrudRepository;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;

import dev.tandem.actuate.KafkaTransactionsEndpoint;
import dev.tandem.autoconfigure.diagnostics.PreparedTransactionsDisabledFailureAnalyzer;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationFailureAnalyzer;
import dev.tandem.autoconfigure.jdbc.CrossClusterJdbcTransactionManager;
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
 * {@code tandem.datasources.<name>.*}: the properties alone make a {@link CrossClusterDataSource}
 * bean that Spring Boot's {@code JdbcTemplate} and Spring Data JDBC repositories use, whose writes
 * in {@code @CrossClusterTransactional} methods commit or roll back with the records on two real
 * Kafka clusters; {@code @Transactional} code inside is a savepoint of the branch; the database
 * shows in {@code /actuator/kafkatransactions} and health; mistakes fail the start naming the
 * property. A real PostgreSQL started by the test.
 */
class DataSourcePropertiesTests {

	/** Its own name: the clusters are shared with other test classes. */
	static final String TOPIC = "datasource-properties-ledger";

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
			statement.execute("CREATE TABLE ledger_entry (id BIGSERIAL PRIMARY KEY, reference VARCHAR(64) NOT NULL UNIQUE, "
					+ "amount INT NOT NULL)");
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

	private SpringApplicationBuilder app(String instance, String... properties) {
		List<String> all = new ArrayList<>(List.of("tandem.transaction.id-prefix=datasource-properties-tests",
				"tandem.transaction.instance-id=" + instance,
				"tandem.coordinator.data-dir=" + this.dataDir.resolve(instance)));
		all.addAll(List.of(properties));
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties(all.toArray(String[]::new));
	}

	@Test
	void jdbcTemplateAndSpringDataJdbcWritesOfAPropertyConfiguredDatabaseCommitOrRollBackWithTheRecords()
			throws SQLException {
		this.context = app("app-0", "tandem.datasources.ledger.url=" + postgres.getJdbcUrl("postgres", "postgres"),
				"tandem.datasources.ledger.username=postgres", "tandem.datasources.ledger.xa-properties.socket-timeout=30",
				"management.endpoints.web.exposure.include=kafkatransactions")
			.run();
		CrossClusterDataSource dataSource = this.context.getBean("ledgerDataSource", CrossClusterDataSource.class);
		assertThat(this.context.getBean(DataSource.class)).isSameAs(dataSource);
		// no pool library on this class path: Spring Boot's DataSourceBuilder falls back to Spring's driver data source
		assertThat(dataSource.unwrap(SimpleDriverDataSource.class).getUrl()).isEqualTo(postgres.getJdbcUrl("postgres",
				"postgres"));
		assertThat(this.context.getBean(CrossClusterTransactionManager.class).databases()).containsExactly("ledger");
		assertThat(this.context.getBean(PlatformTransactionManager.class))
			.isInstanceOf(CrossClusterJdbcTransactionManager.class);
		Ledger ledger = this.context.getBean(Ledger.class);
		JdbcTemplate jdbc = this.context.getBean(JdbcTemplate.class);

		ledger.recordWithJdbcTemplate("jdbc-1", 10);
		assertThatIllegalStateException().isThrownBy(() -> ledger.recordWithJdbcTemplateAndFail("jdbc-2", 20));
		ledger.recordWithRepository("repo-1", 30);
		assertThatIllegalStateException().isThrownBy(() -> ledger.recordWithRepositoryAndFail("repo-2", 40));
		ledger.recordAfterAFailedSpringTransaction("inner-1", 50);

		assertThat(jdbc.queryForList("SELECT reference FROM ledger_entry ORDER BY id", String.class))
			.containsExactly("jdbc-1", "repo-1", "inner-1");
		// outside a cross-cluster transaction the repository reads through the pool
		assertThat(this.context.getBean(EntryRepository.class).count()).isEqualTo(3);
		for (String cluster : List.of("east", "west")) {
			assertThat(ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), TOPIC))
				.containsExactly("jdbc-1", "repo-1", "inner-1");
		}
		assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_prepared_xacts", Integer.class)).isZero();

		// the database, like the clusters, in the endpoint and in health
		assertThat(this.context.getBean(KafkaTransactionsEndpoint.class).transactions().databases())
			.containsExactly("ledger");
		CompositeHealthContributor databases = this.context.getBean("tandemDatabasesHealthContributor",
				CompositeHealthContributor.class);
		Health health = ((HealthIndicator) databases.getContributor("ledger")).health(true);
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("maxPreparedTransactions", 10)
			.containsEntry("preparedBranches", 0)
			.containsKey("database");
	}

	@Test
	void aMisconfiguredDatabaseFailsTheStartNamingTheProperty() {
		assertThat(startFailure("app-1", "tandem.datasources.ledger.username=postgres"))
			.containsEntry("property", "tandem.datasources.ledger.url");
		assertThat(startFailure("app-1", "tandem.datasources.ledger.url=" + postgres.getJdbcUrl("postgres", "postgres"),
				"tandem.datasources.ledger.xa-properties.socket-timeuot=30"))
			.containsEntry("property", "tandem.datasources.ledger.xa-properties.socket-timeuot")
			// the property it most likely meant, a real one of PGXADataSource
			.hasEntrySatisfying("action", (action) -> assertThat(action)
				.contains("did you mean tandem.datasources.ledger.xa-properties.socket-timeuot -> "
						+ "tandem.datasources.ledger.xa-properties.socket-timeout?")
				.contains("bean properties of PGXADataSource in kebab case"));
		assertThat(startFailure("app-1", "tandem.datasources.ledger.url=" + postgres.getJdbcUrl("postgres", "postgres"),
				"tandem.datasources.ledger.pool.maximum-pool-size=3"))
			.containsEntry("property", "tandem.datasources.ledger.pool.maximum-pool-size")
			// no HikariCP on this class path: the message names the missing library, not Spring's fallback
			.hasEntrySatisfying("description", (description) -> assertThat(description)
				.contains("tandem.datasources.ledger.pool.* needs HikariCP on the classpath: add com.zaxxer:HikariCP "
						+ "(spring-boot-starter-jdbc brings it) or remove tandem.datasources.ledger.pool")
				.doesNotContain("SimpleDriverDataSource"))
			.hasEntrySatisfying("action", (action) -> assertThat(action).contains("com.zaxxer:HikariCP"));
		// misspelt keys of the entry itself bind to nothing: refused before the database is reached
		assertThat(startFailure("app-1", "tandem.datasources.ledger.url=" + postgres.getJdbcUrl("postgres", "postgres"),
				"tandem.datasources.ledger.usrename=postgres", "tandem.datasources.ledger.xa-propertis.socket-timeout=30"))
			.containsEntry("property", "tandem.datasources.ledger.usrename")
			.hasEntrySatisfying("description", (description) -> assertThat(description)
				.contains("[tandem.datasources.ledger.usrename, tandem.datasources.ledger.xa-propertis.socket-timeout] "
						+ "are not properties of a Tandem database"))
			.hasEntrySatisfying("action", (action) -> assertThat(action)
				.contains("did you mean tandem.datasources.ledger.usrename -> tandem.datasources.ledger.username, "
						+ "tandem.datasources.ledger.xa-propertis.socket-timeout -> "
						+ "tandem.datasources.ledger.xa-properties.socket-timeout?"));
		assertThat(startFailure("app-1", "tandem.datasources.ledger.url=jdbc:h2:mem:ledger"))
			.containsEntry("property", "tandem.datasources.ledger.xa-data-source-class-name");
		assertThat(startFailure("app-1", "tandem.datasources.ledger.url=jdbc:postgresql://127.0.0.1:1/postgres",
				"tandem.datasources.ledger.xa-properties.connect-timeout=2"))
			.containsEntry("property", "tandem.datasources.ledger.url");
	}

	/** The property, the description and the action of the analysis of a failed start. */
	private Map<String, String> startFailure(String instance, String... properties) {
		Throwable failure = catchThrowable(() -> app(instance, properties).run());
		assertThat(failure).isNotNull();
		FailureAnalysis analysis = new TandemConfigurationFailureAnalyzer().analyze(failure);
		assertThat(analysis).as("analysis of %s", failure).isNotNull();
		TandemConfigurationException cause = (TandemConfigurationException) analysis.getCause();
		assertThat(analysis.getAction()).isNotBlank();
		return Map.of("property", cause.getProperty(), "action", analysis.getAction(), "description",
				analysis.getDescription());
	}

	@Test
	void aPropertyConfiguredDatabaseThatCannotPrepareTransactionsFailsTheStartNamingTheSetting() throws IOException {
		try (EmbeddedPostgres disabled = EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "0")
			.start()) {
			Throwable failure = catchThrowable(() -> app("app-2",
					"tandem.datasources.orders.url=" + disabled.getJdbcUrl("postgres", "postgres"))
				.run());
			FailureAnalysis analysis = new PreparedTransactionsDisabledFailureAnalyzer().analyze(failure);
			assertThat(analysis).as("analysis of %s", failure).isNotNull();
			assertThat(analysis.getDescription()).contains("Database 'orders'").contains("max_prepared_transactions = 0");
			assertThat(analysis.getAction()).contains("max_prepared_transactions")
				.contains("restart")
				.contains("tandem.datasources.orders");
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(excludeName = { JdbcOnly.HIBERNATE, JdbcOnly.DATA_JPA })
	@EnableJdbcRepositories(basePackageClasses = DataSourcePropertiesTests.class, considerNestedRepositories = true,
			includeFilters = @org.springframework.context.annotation.ComponentScan.Filter(
					type = org.springframework.context.annotation.FilterType.ASSIGNABLE_TYPE,
					classes = EntryRepository.class))
	@Import({ Ledger.class, Savepointed.class })
	static class App {

	}

	@Table("ledger_entry")
	record Entry(@Id Long id, String reference, int amount) {

	}

	interface EntryRepository extends CrudRepository<Entry, Long> {

	}

	/** A Spring transaction that fails after its insert. */
	static class Savepointed {

		private final EntryRepository entries;

		Savepointed(EntryRepository entries) {
			this.entries = entries;
		}

		@Transactional
		public void insertAndFail(String reference, int amount) {
			this.entries.save(new Entry(null, reference, amount));
			throw new IllegalStateException("rolls back its Spring transaction");
		}

	}

	static class Ledger {

		private final JdbcTemplate jdbc;

		private final EntryRepository entries;

		private final Savepointed savepointed;

		private final ClusterTransactionalTemplate<String, String> east;

		private final ClusterTransactionalTemplate<String, String> west;

		Ledger(JdbcTemplate jdbc, EntryRepository entries, Savepointed savepointed,
				@Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.jdbc = jdbc;
			this.entries = entries;
			this.savepointed = savepointed;
			this.east = east;
			this.west = west;
		}

		private void send(String reference) {
			this.east.send(TOPIC, reference, reference);
			this.west.send(TOPIC, reference, reference);
		}

		@CrossClusterTransactional
		public void recordWithJdbcTemplate(String reference, int amount) {
			this.jdbc.update("INSERT INTO ledger_entry (reference, amount) VALUES (?, ?)", reference, amount);
			send(reference);
		}

		@CrossClusterTransactional
		public void recordWithJdbcTemplateAndFail(String reference, int amount) {
			recordWithJdbcTemplate(reference, amount);
			throw new IllegalStateException("fails after the insert and the sends");
		}

		@CrossClusterTransactional
		public void recordWithRepository(String reference, int amount) {
			Entry saved = this.entries.save(new Entry(null, reference, amount));
			assertThat(saved.id()).isNotNull();
			assertThat(this.entries.findById(saved.id())).isPresent();
			send(reference);
		}

		@CrossClusterTransactional
		public void recordWithRepositoryAndFail(String reference, int amount) {
			this.entries.save(new Entry(null, reference, amount));
			send(reference);
			throw new IllegalStateException("fails after the save and the sends");
		}

		@CrossClusterTransactional
		public void recordAfterAFailedSpringTransaction(String reference, int amount) {
			try {
				this.savepointed.insertAndFail(reference + "-undone", amount);
			}
			catch (IllegalStateException expected) {
				// its insert was rolled back to its savepoint; the branch goes on
			}
			this.entries.save(new Entry(null, reference, amount));
			send(reference);
		}

	}

}
