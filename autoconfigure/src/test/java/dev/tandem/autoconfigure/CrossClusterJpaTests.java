package dev.tandem.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.SequenceGenerator;
import jakarta.persistence.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.FilterType;
import org.springframework.context.annotation.Import;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;

import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationFailureAnalyzer;
import dev.tandem.autoconfigure.jpa.CrossClusterJpaTransactionManager;
import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactional;
import dev.tandem.transaction.TransactionAbortedException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * JPA on a {@code tandem.datasources.<name>} database: Spring Boot's own JPA auto-configuration
 * builds the entity manager factory on the cross-cluster data source, and an injected
 * {@code EntityManager} or a Spring Data JPA repository used in a {@code @CrossClusterTransactional}
 * method writes in the transaction's branch, which commits or rolls back with the records on two
 * real Kafka clusters; a constraint violation found at the flush before phase one aborts
 * everything, and so does a Spring transaction inside that rolls back after JPA was used; plain
 * {@code @Transactional} JPA outside commits on the pool; several databases with none primary fail
 * the start naming the property. A real PostgreSQL started by the test.
 */
class CrossClusterJpaTests {

	/** Its own name: the clusters are shared with other test classes. */
	static final String TOPIC = "jpa-ledger";

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	private static EmbeddedPostgres postgres;

	@TempDir
	static Path dataDir;

	private static ConfigurableApplicationContext context;

	private Ledger ledger;

	private JdbcTemplate jdbc;

	@BeforeAll
	static void start() throws IOException, SQLException {
		postgres = EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "10").start();
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE SEQUENCE jpa_entry_seq");
			statement.execute("CREATE TABLE jpa_entry (id BIGINT PRIMARY KEY, reference VARCHAR(64) NOT NULL UNIQUE, "
					+ "amount INT NOT NULL)");
		}
		for (String cluster : List.of("east", "west")) {
			kafka.cluster(cluster).createTopic(TOPIC, 1, (short) 1);
		}
		context = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.transaction.id-prefix=jpa-tests", "tandem.transaction.instance-id=app-0",
					"tandem.coordinator.data-dir=" + dataDir.resolve("app-0"),
					"tandem.datasources.ledger.url=" + postgres.getJdbcUrl("postgres", "postgres"),
					"tandem.datasources.ledger.username=postgres")
			.run();
	}

	@AfterAll
	static void stop() throws IOException {
		if (context != null) {
			context.close();
		}
		if (postgres != null) {
			postgres.close();
		}
	}

	@BeforeEach
	void beans() {
		this.ledger = context.getBean(Ledger.class);
		this.jdbc = context.getBean(JdbcTemplate.class);
	}

	@AfterEach
	void noBranchLeftPrepared() {
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM pg_prepared_xacts", Integer.class)).isZero();
	}

	private List<String> rows(String prefix) {
		return this.jdbc.queryForList("SELECT reference FROM jpa_entry WHERE reference LIKE ? ORDER BY id",
				String.class, prefix + "%");
	}

	private static List<String> records(String cluster, String prefix) {
		return ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), TOPIC)
			.stream()
			.filter((value) -> value.startsWith(prefix))
			.toList();
	}

	@Test
	void entityManagerWritesCommitWithTheRecordsOnBothClusters() {
		assertThat(context.getBean(PlatformTransactionManager.class))
			.isInstanceOf(CrossClusterJpaTransactionManager.class);

		this.ledger.recordWithEntityManager("em-1", 10);

		assertThat(rows("em-")).containsExactly("em-1");
		assertThat(this.jdbc.queryForObject("SELECT amount FROM jpa_entry WHERE reference = 'em-1'", Integer.class))
			.isEqualTo(15);
		assertThat(records("east", "em-")).containsExactly("em-1");
		assertThat(records("west", "em-")).containsExactly("em-1");
	}

	@Test
	void anExceptionLeavesNoRowAndNoRecord() {
		assertThatIllegalStateException().isThrownBy(() -> this.ledger.recordWithEntityManagerAndFail("fail-1", 20))
			.withMessage("fails after the persist, the update and the sends");
		// a later transaction's records are visible, so the failed one's would be too had they committed
		this.ledger.recordWithEntityManager("fail-2", 21);

		assertThat(rows("fail-")).containsExactly("fail-2");
		assertThat(records("east", "fail-")).containsExactly("fail-2");
		assertThat(records("west", "fail-")).containsExactly("fail-2");
	}

	@Test
	void aSpringDataJpaRepositorySaveJoinsTheTransaction() {
		this.ledger.recordWithRepository("repo-1", 30);
		assertThatIllegalStateException().isThrownBy(() -> this.ledger.recordWithRepositoryAndFail("repo-2", 40));

		assertThat(rows("repo-")).containsExactly("repo-1");
		assertThat(context.getBean(JpaEntryRepository.class).findByReference("repo-1")).get()
			.extracting(JpaEntry::getAmount)
			.isEqualTo(30);
		assertThat(records("east", "repo-")).containsExactly("repo-1");
		assertThat(records("west", "repo-")).containsExactly("repo-1");
	}

	@Test
	void aConstraintViolationAtTheFlushBeforePrepareAbortsTheTransactionEverywhere() {
		this.ledger.recordWithEntityManager("dup-1", 50);

		// the insert is deferred to the flush (sequence ids): the duplicate is found before phase one
		assertThatExceptionOfType(TransactionAbortedException.class)
			.isThrownBy(() -> this.ledger.recordDuplicate("dup-1", "dup-2", 60))
			.withRootCauseInstanceOf(org.postgresql.util.PSQLException.class);
		this.ledger.recordWithEntityManager("dup-3", 70);

		assertThat(rows("dup-")).containsExactly("dup-1", "dup-3");
		assertThat(records("east", "dup-")).containsExactly("dup-1", "dup-3");
		assertThat(records("west", "dup-")).containsExactly("dup-1", "dup-3");
	}

	@Test
	void plainTransactionalJpaOutsideACrossClusterTransactionCommitsOnThePool() {
		PlainLedger plain = context.getBean(PlainLedger.class);
		plain.record("plain-1", 80);
		context.getBean(JpaEntryRepository.class).save(new JpaEntry("plain-2", 90));

		assertThat(rows("plain-")).containsExactly("plain-1", "plain-2");
		assertThat(this.jdbc.queryForObject("SELECT sum(amount) FROM jpa_entry WHERE reference LIKE 'plain-%'",
				Integer.class)).isEqualTo(170);
		assertThat(records("east", "plain-")).isEmpty();
	}

	@Test
	void aSpringTransactionThatRollsBackAfterJpaWasUsedMakesTheTransactionAbortAtCommit() {
		assertThatExceptionOfType(TransactionAbortedException.class)
			.isThrownBy(() -> this.ledger.recordAfterAFailedSpringTransaction("inner-1", 100))
			.withMessageContaining("a persistence context cannot be rolled back to a savepoint");

		assertThat(rows("inner-")).isEmpty();
		assertThat(records("east", "inner-")).isEmpty();
		assertThat(records("west", "inner-")).isEmpty();
	}

	@Test
	void severalDatabasesWithNoPrimaryFailTheStartNamingTheProperty() {
		String url = postgres.getJdbcUrl("postgres", "postgres");
		Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.transaction.id-prefix=jpa-tests", "tandem.transaction.instance-id=app-1",
					"tandem.coordinator.data-dir=" + dataDir.resolve("app-1"), "tandem.datasources.ledger.url=" + url,
					"tandem.datasources.ledger.username=postgres", "tandem.datasources.audit.url=" + url,
					"tandem.datasources.audit.username=postgres")
			.run());
		FailureAnalysis analysis = new TandemConfigurationFailureAnalyzer().analyze(failure);
		assertThat(analysis).as("analysis of %s", failure).isNotNull();
		assertThat(((TandemConfigurationException) analysis.getCause()).getProperty())
			.matches("tandem\\.datasources\\.(ledger|audit)\\.primary");
		assertThat(analysis.getAction()).contains("primary=true");
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableJpaRepositories(basePackageClasses = CrossClusterJpaTests.class, considerNestedRepositories = true,
			includeFilters = @ComponentScan.Filter(type = FilterType.ASSIGNABLE_TYPE,
					classes = JpaEntryRepository.class))
	@Import({ Ledger.class, PlainLedger.class, Savepointed.class })
	static class App {

	}

	@Entity(name = "JpaEntry")
	@Table(name = "jpa_entry")
	static class JpaEntry {

		@Id
		@GeneratedValue(strategy = GenerationType.SEQUENCE, generator = "jpa_entry_seq")
		@SequenceGenerator(name = "jpa_entry_seq", sequenceName = "jpa_entry_seq", allocationSize = 1)
		private Long id;

		@Column(nullable = false, unique = true)
		private String reference;

		private int amount;

		protected JpaEntry() {
		}

		JpaEntry(String reference, int amount) {
			this.reference = reference;
			this.amount = amount;
		}

		Long getId() {
			return this.id;
		}

		String getReference() {
			return this.reference;
		}

		int getAmount() {
			return this.amount;
		}

	}

	interface JpaEntryRepository extends JpaRepository<JpaEntry, Long> {

		Optional<JpaEntry> findByReference(String reference);

	}

	/** Plain Spring transactions, no cross-cluster one. */
	static class PlainLedger {

		private final EntityManager entityManager;

		PlainLedger(EntityManager entityManager) {
			this.entityManager = entityManager;
		}

		@Transactional
		public void record(String reference, int amount) {
			this.entityManager.persist(new JpaEntry(reference, amount));
		}

	}

	/** A Spring transaction that fails after its save. */
	static class Savepointed {

		private final JpaEntryRepository entries;

		Savepointed(JpaEntryRepository entries) {
			this.entries = entries;
		}

		@Transactional
		public void saveAndFail(String reference, int amount) {
			this.entries.save(new JpaEntry(reference, amount));
			throw new IllegalStateException("rolls back its Spring transaction");
		}

	}

	static class Ledger {

		private final Savepointed savepointed;

		private final EntityManager entityManager;

		private final JpaEntryRepository entries;

		private final ClusterTransactionalTemplate<String, String> east;

		private final ClusterTransactionalTemplate<String, String> west;

		Ledger(Savepointed savepointed, EntityManager entityManager, JpaEntryRepository entries,
				@Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.savepointed = savepointed;
			this.entityManager = entityManager;
			this.entries = entries;
			this.east = east;
			this.west = west;
		}

		private void send(String reference) {
			this.east.send(TOPIC, reference, reference);
			this.west.send(TOPIC, reference, reference);
		}

		/** Persists, reads its own write with a JPQL query (flushed first), updates it with JPQL. */
		@CrossClusterTransactional
		public void recordWithEntityManager(String reference, int amount) {
			this.entityManager.persist(new JpaEntry(reference, amount));
			Long seen = this.entityManager
				.createQuery("select count(e) from JpaEntry e where e.reference = :reference",
						Long.class)
				.setParameter("reference", reference)
				.getSingleResult();
			assertThat(seen).isOne();
			int updated = this.entityManager
				.createQuery("update JpaEntry e set e.amount = e.amount + 5 "
						+ "where e.reference = :reference")
				.setParameter("reference", reference)
				.executeUpdate();
			assertThat(updated).isOne();
			send(reference);
		}

		@CrossClusterTransactional
		public void recordWithEntityManagerAndFail(String reference, int amount) {
			recordWithEntityManager(reference, amount);
			throw new IllegalStateException("fails after the persist, the update and the sends");
		}

		@CrossClusterTransactional
		public void recordWithRepository(String reference, int amount) {
			JpaEntry saved = this.entries.save(new JpaEntry(reference, amount));
			assertThat(saved.getId()).isNotNull();
			assertThat(this.entries.findByReference(reference)).get().isSameAs(saved);
			send(reference);
		}

		@CrossClusterTransactional
		public void recordWithRepositoryAndFail(String reference, int amount) {
			this.entries.save(new JpaEntry(reference, amount));
			send(reference);
			throw new IllegalStateException("fails after the save and the sends");
		}

		/** Persists, then calls a Spring transaction that fails, catches its exception and goes on. */
		@CrossClusterTransactional
		public void recordAfterAFailedSpringTransaction(String reference, int amount) {
			this.entityManager.persist(new JpaEntry(reference, amount));
			try {
				this.savepointed.saveAndFail(reference + "-undone", amount);
			}
			catch (IllegalStateException expected) {
				// its Spring transaction rolled back; the persistence context cannot follow
			}
			send(reference);
		}

		/** A new row, then one whose reference is taken: both inserts wait for the flush. */
		@CrossClusterTransactional
		public void recordDuplicate(String taken, String fresh, int amount) {
			this.entityManager.persist(new JpaEntry(fresh, amount));
			this.entityManager.persist(new JpaEntry(taken, amount));
			send(fresh);
		}

	}

}
