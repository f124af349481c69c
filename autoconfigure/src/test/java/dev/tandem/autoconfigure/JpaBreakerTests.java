package dev.tandem.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.FetchType;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.OneToMany;
import jakarta.persistence.Table;
import jakarta.persistence.Version;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.hibernate.LazyInitializationException;
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
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.orm.jpa.EntityManagerHolder;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.tandem.autoconfigure.diagnostics.PreparedTransactionsDisabledFailureAnalyzer;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationFailureAnalyzer;
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
import static org.awaitility.Awaitility.await;

/**
 * Adversarial trials of the JPA path of the database participant (issue 28), each on real parts: a
 * PostgreSQL started by the test, two real Kafka clusters, the embedded Ratis coordinator. Every
 * trial asserts the guarantee: no row without its records, no record without its row, no success
 * reported that did not happen; and a start-up mistake fails naming the property.
 */
class JpaBreakerTests {

	/** Its own name: the clusters are shared with other test classes. */
	static final String TOPIC = "jpa-breaker";

	/** The listener's input on east and its output on west. */
	static final String IN = "jpa-breaker-in";

	static final String OUT = "jpa-breaker-out";

	static final int COPIES = 500;

	/** The input and output of the listener whose flush fails once for w100 and once for w300. */
	static final String FLUSH_IN = "jpa-breaker-flush-in";

	static final String FLUSH_OUT = "jpa-breaker-flush-out";

	/** The id of an account that exists before the listener starts: persisting it again fails at the flush. */
	static final long TAKEN = 9999;

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	private static EmbeddedPostgres postgres;

	@TempDir
	static Path dataDir;

	private static ConfigurableApplicationContext context;

	private Bank bank;

	private JdbcTemplate jdbc;

	@BeforeAll
	static void start() throws IOException, SQLException {
		postgres = EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "10").start();
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE TABLE brk_account (id BIGINT PRIMARY KEY, owner VARCHAR(64) NOT NULL, "
					+ "balance INT NOT NULL, version BIGINT NOT NULL)");
			statement.execute("CREATE TABLE brk_posting (id BIGINT PRIMARY KEY, "
					+ "account_id BIGINT NOT NULL REFERENCES brk_account (id), amount INT NOT NULL)");
			statement.execute("CREATE TABLE brk_bulk (id BIGINT PRIMARY KEY, n INT NOT NULL)");
			// no key on the value: a row written twice is counted, not refused
			statement.execute("CREATE TABLE brk_copied (seq BIGSERIAL PRIMARY KEY, value VARCHAR(64) NOT NULL)");
		}
		for (String cluster : List.of("east", "west")) {
			kafka.cluster(cluster).createTopic(TOPIC, 1, (short) 1);
		}
		kafka.cluster("east").createTopic(IN, 3, (short) 1);
		kafka.cluster("west").createTopic(OUT, 3, (short) 1);
		kafka.cluster("east").createTopic(FLUSH_IN, 3, (short) 1);
		kafka.cluster("west").createTopic(FLUSH_OUT, 3, (short) 1);
		outside("INSERT INTO brk_account (id, owner, balance, version) VALUES (?, 'taken', 0, 0)", TAKEN);
		context = app("app-0", "tandem.datasources.ledger.url=" + postgres.getJdbcUrl("postgres", "postgres"),
				"tandem.datasources.ledger.username=postgres")
			.run();
	}

	private static SpringApplicationBuilder app(String instance, String... properties) {
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.transaction.id-prefix=jpa-breaker", "tandem.transaction.instance-id=" + instance,
					"tandem.coordinator.data-dir=" + dataDir.resolve(instance),
					"tandem.clusters.east.consumer.max.poll.records=20", "tandem.listener.back-off=0")
			.properties(properties);
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
		this.bank = context.getBean(Bank.class);
		this.jdbc = context.getBean(JdbcTemplate.class);
	}

	@AfterEach
	void noBranchLeftPrepared() {
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM pg_prepared_xacts", Integer.class)).isZero();
	}

	private List<String> owners(String prefix) {
		return this.jdbc.queryForList("SELECT owner FROM brk_account WHERE owner LIKE ? ORDER BY id", String.class,
				prefix + "%");
	}

	private Integer balance(long id) {
		return this.jdbc.queryForObject("SELECT balance FROM brk_account WHERE id = ?", Integer.class, id);
	}

	private static List<String> records(String cluster, String prefix) {
		return ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), TOPIC)
			.stream()
			.filter((value) -> value.startsWith(prefix))
			.toList();
	}

	private static void assertRecords(String prefix, String... values) {
		assertThat(records("east", prefix)).containsExactly(values);
		assertThat(records("west", prefix)).containsExactly(values);
	}

	/** Runs one statement on a connection of its own, outside Tandem (auto-commit). */
	private static int outside(String sql, Object... args) {
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				java.sql.PreparedStatement statement = connection.prepareStatement(sql)) {
			for (int i = 0; i < args.length; i++) {
				statement.setObject(i + 1, args[i]);
			}
			return statement.executeUpdate();
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void aPipelinedBatchListenerWritingWithJpaCopiesEveryRecordOnceWithItsRowAcrossAFailedDelivery()
			throws Exception {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < COPIES; i++) {
				producer.send(new ProducerRecord<>(IN, "k" + i, "v" + i));
			}
		}
		await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
			.until(() -> ReadCommitted.groupOffsets(kafka.cluster("east").bootstrapServers(), IN, IN)
				.values()
				.stream()
				.mapToLong(OffsetAndMetadata::offset)
				.sum() == COPIES);

		assertThat(Copier.failed).as("one delivery failed after its persists and sends").isTrue();
		List<String> expected = new ArrayList<>();
		for (int i = 0; i < COPIES; i++) {
			expected.add("v" + i);
		}
		assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), OUT))
			.containsExactlyInAnyOrderElementsOf(expected);
		assertThat(this.jdbc.queryForList("SELECT value FROM brk_copied WHERE value LIKE 'v%'", String.class))
			.containsExactlyInAnyOrderElementsOf(expected);
	}

	@Test
	void aPipelinedJpaListenerWhoseFlushFailsBeforePrepareHasTheDeliveryAgainAndLosesNothing() throws Exception {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < COPIES; i++) {
				producer.send(new ProducerRecord<>(FLUSH_IN, "k" + i, "w" + i));
			}
		}
		await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
			.until(() -> ReadCommitted.groupOffsets(kafka.cluster("east").bootstrapServers(), FLUSH_IN, FLUSH_IN)
				.values()
				.stream()
				.mapToLong(OffsetAndMetadata::offset)
				.sum() == COPIES);

		assertThat(FlushFailingCopier.duplicates).as("deliveries whose flush met the duplicate key").hasValue(2);
		List<String> expected = new ArrayList<>();
		for (int i = 0; i < COPIES; i++) {
			expected.add("w" + i);
		}
		assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), FLUSH_OUT))
			.containsExactlyInAnyOrderElementsOf(expected);
		assertThat(this.jdbc.queryForList("SELECT value FROM brk_copied WHERE value LIKE 'w%'", String.class))
			.containsExactlyInAnyOrderElementsOf(expected);
	}

	@Test
	void aNestedCrossClusterTransactionWithItsOwnPersistenceContextCommitsAloneAndTheOuterOneKeepsItsOwn() {
		assertThatIllegalStateException()
			.isThrownBy(() -> this.bank.openAroundANewCrossClusterTransaction(801, 802, 803, "nested-1"));

		// the inner transaction committed on its own; the outer one, before and after it, rolled back
		assertThat(owners("nested-")).containsExactly("nested-1-inner");
		assertRecords("nested-", "nested-1-inner");

		this.bank.openAroundANewCrossClusterTransactionAndCommit(811, 812, 813, "nested-2");
		assertThat(owners("nested-2")).containsExactly("nested-2", "nested-2-inner", "nested-2-after");
		assertRecords("nested-2", "nested-2-inner", "nested-2");
	}

	@Test
	void aCheckedExceptionWhoseCommitFailsAtTheFlushReportsTheAbortNotTheCheckedException() {
		this.bank.open(151, "checkedflush-1", 0);

		// the rule commits on the checked exception, but the flush before phase one fails
		assertThatExceptionOfType(TransactionAbortedException.class)
			.isThrownBy(() -> this.bank.openDuplicateThenThrowChecked(152, 151, "checkedflush-2"))
			.withRootCauseInstanceOf(org.postgresql.util.PSQLException.class);

		assertThat(owners("checkedflush-")).containsExactly("checkedflush-1");
		assertRecords("checkedflush-", "checkedflush-1");
	}

	/**
	 * With an entity manager open in view (Spring Boot's spring.jpa.open-in-view, on by default in
	 * web apps), an entity the view loaded and the method changes is not the transaction's write:
	 * the binding sets the view's entity manager aside and the branch's own never saw the entity.
	 * Found by a breaker: the records committed and the row kept its old value. The commit is now
	 * refused, naming the fix, and nothing of it is visible.
	 */
	@Test
	void anEntityOfAnOpenEntityManagerInViewChangedInsideIsRefusedNotLost() {
		this.bank.open(901, "view-1", 0);
		// what Spring's OpenEntityManagerInViewInterceptor does for a web request (spring.jpa.open-in-view)
		EntityManagerFactory factory = context.getBean(EntityManagerFactory.class);
		EntityManager view = factory.createEntityManager();
		TransactionSynchronizationManager.bindResource(factory, new EntityManagerHolder(view));
		try {
			Account managed = this.bank.findOutside(901);
			assertThat(view.contains(managed)).isTrue();
			assertThatExceptionOfType(TransactionAbortedException.class)
				.isThrownBy(() -> this.bank.add(managed, 5, "view-2"))
				.withMessageContaining("spring.jpa.open-in-view");
		}
		finally {
			TransactionSynchronizationManager.unbindResource(factory);
			view.close();
		}

		assertRecords("view-", "view-1");
		assertThat(balance(901)).as("neither the change nor its records").isZero();
	}

	@Test
	void aCheckedExceptionTheRuleCommitsOnCommitsThePersistedEntityWithItsRecords() {
		assertThatExceptionOfType(Bank.Refused.class).isThrownBy(() -> this.bank.openThenThrowChecked(101, "checked-1"))
			.withMessage("checked, after the persist and the sends");

		assertThat(owners("checked-")).containsExactly("checked-1");
		assertRecords("checked-", "checked-1");
	}

	@Test
	void aFlushByTheUserCodeWritesInTheBranchAndStillRollsBackWithTheRecords() {
		assertThat(this.bank.openWithUserFlush(201, "flush-1", false)).as("rows a JdbcTemplate sees after the flush")
			.isOne();
		assertThatIllegalStateException().isThrownBy(() -> this.bank.openWithUserFlush(202, "flush-2", true));

		assertThat(owners("flush-")).containsExactly("flush-1");
		assertRecords("flush-", "flush-1");
	}

	@Test
	void aFailedUserFlushWhoseExceptionIsCaughtStillAbortsEverywhere() {
		this.bank.open(251, "caught-1", 0);

		Throwable failure = catchThrowable(() -> this.bank.openDuplicateAndCatchTheFlush(252, 251, "caught-2"));

		// the method returned normally: the commit must not report a success that did not happen
		assertThat(failure).isInstanceOf(TransactionAbortedException.class);
		assertThat(owners("caught-")).containsExactly("caught-1");
		assertRecords("caught-", "caught-1");
	}

	@Test
	void aLazyAssociationLoadedAfterTheCommitFailsLikeAnyClosedPersistenceContext() {
		this.bank.openWithPostings(301, "lazy-1", 3);

		Account loaded = this.bank.load(301);
		assertThat(loaded.balance).isEqualTo(3);
		// the session was closed before phase one: outside the transaction a lazy association cannot load
		assertThatExceptionOfType(LazyInitializationException.class).isThrownBy(() -> loaded.postings.size());
		assertThat(this.bank.postingCount(301)).as("inside a transaction it loads").isEqualTo(3);
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM brk_posting WHERE account_id = 301", Integer.class))
			.isEqualTo(3);
		assertRecords("lazy-", "lazy-1", "lazy-1/3");
	}

	@Test
	void anEntitySavedInOneTransactionAndUpdatedInTheNextIsNeitherStaleNorLost() {
		Account detached = this.bank.open(401, "detach-1", 10);
		// a write by someone else between the two transactions
		assertThat(outside("UPDATE brk_account SET balance = 500, version = version + 1 WHERE id = 401")).isOne();

		// the next transaction has a new persistence context: it sees the database, not the old entity
		assertThat(this.bank.load(401).balance).isEqualTo(500);
		// merging the stale detached copy is refused by its version, and nothing commits
		detached.balance = 11;
		assertThatExceptionOfType(RuntimeException.class).isThrownBy(() -> this.bank.merge(detached, "detach-stale"));
		assertThat(balance(401)).isEqualTo(500);
		// a fresh detached copy merges
		Account fresh = this.bank.load(401);
		fresh.balance = 501;
		this.bank.merge(fresh, "detach-fresh");

		assertThat(balance(401)).isEqualTo(501);
		assertRecords("detach-", "detach-1", "detach-fresh");
	}

	@Test
	void requiresNewInsideJoinsTheCrossClusterTransactionAsDocumented() {
		this.bank.openWithRequiresNew(501, 502, "new-1", false);
		assertThatIllegalStateException().isThrownBy(() -> this.bank.openWithRequiresNew(503, 504, "new-2", true));

		// the inner REQUIRES_NEW did not commit on its own: it went with the outer transaction
		assertThat(owners("new-")).containsExactly("new-1", "new-1-inner");
		assertRecords("new-", "new-1");
	}

	@Test
	void aVersionConflictFoundAtTheFlushBeforePrepareAbortsEverywhere() {
		this.bank.open(601, "version-1", 0);

		assertThatExceptionOfType(TransactionAbortedException.class)
			.isThrownBy(() -> this.bank.addAfterAConcurrentChange(601, "version-2"))
			.withRootCauseInstanceOf(org.hibernate.StaleStateException.class);

		assertThat(balance(601)).as("only the concurrent change").isEqualTo(100);
		assertRecords("version-", "version-1");
	}

	@Test
	void twentyThousandEntitiesInOneTransactionCommitWithTheirRecord() {
		long started = System.nanoTime();
		this.bank.bulk(20_000, "bulk-1");
		long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM brk_bulk", Integer.class)).isEqualTo(20_000);
		assertRecords("bulk-", "bulk-1");
		org.slf4j.LoggerFactory.getLogger(JpaBreakerTests.class).info("20,000 entities in one transaction: {} ms",
				millis);
	}

	@Test
	void aSecondTransactionUpdatingARowLockedByTheFirstWaitsForItsCommitAndBothCommit() throws Exception {
		this.bank.open(701, "lock-0", 0);
		CountDownLatch locked = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(2);
		try {
			CompletableFuture<Void> first = CompletableFuture
				.runAsync(() -> this.bank.addHolding(701, 1, "lock-1", locked, release), threads);
			assertThat(locked.await(60, TimeUnit.SECONDS)).isTrue();
			CompletableFuture<Void> second = CompletableFuture
				.runAsync(() -> this.bank.addHolding(701, 10, "lock-2", new CountDownLatch(1), new CountDownLatch(0)),
						threads);
			// the second transaction's UPDATE waits on the first's row lock
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.jdbc.queryForObject(
						"SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%brk_account%'",
						Integer.class) == 1);
			assertThat(second).isNotDone();
			release.countDown();
			first.get(60, TimeUnit.SECONDS);
			second.get(60, TimeUnit.SECONDS);
		}
		finally {
			release.countDown();
			threads.shutdownNow();
		}

		assertThat(balance(701)).isEqualTo(11);
		assertThat(records("east", "lock-")).containsExactlyInAnyOrder("lock-0", "lock-1", "lock-2");
		assertThat(records("west", "lock-")).containsExactlyInAnyOrder("lock-0", "lock-1", "lock-2");
	}

	@Test
	void aWrongPasswordFailsTheStartNamingTheDatabaseProperties() throws Exception {
		String hba;
		try (Connection connection = postgres.getPostgresDatabase().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE ROLE breaker LOGIN PASSWORD 'right'");
			try (var result = statement.executeQuery("SHOW hba_file")) {
				result.next();
				hba = result.getString(1);
			}
			// the embedded server trusts everyone: ask for passwords from the role of this trial only
			String original = Files.readString(Path.of(hba));
			Files.writeString(Path.of(hba), "host all breaker 127.0.0.1/32 md5\n"
					+ "host all breaker ::1/128 md5\n" + original);
			statement.execute("SELECT pg_reload_conf()");
		}
		String url = "jdbc:postgresql://localhost:" + postgres.getPort() + "/postgres";
		FailureAnalysis analysis = analysis(catchThrowable(() -> app("app-1",
				"tandem.datasources.ledger.url=" + url, "tandem.datasources.ledger.username=breaker",
				"tandem.datasources.ledger.password=wrong")
			.run()));
		assertThat(((TandemConfigurationException) analysis.getCause()).getProperty())
			.isEqualTo("tandem.datasources.ledger.url");
		assertThat(analysis.getDescription()).contains("password authentication failed");
		assertThat(analysis.getAction()).contains("tandem.datasources.ledger.password");
	}

	@Test
	void aDatabaseThatDoesNotExistFailsTheStartNamingTheUrl() {
		String url = postgres.getJdbcUrl("postgres", "no_such_db");
		FailureAnalysis analysis = analysis(
				catchThrowable(() -> app("app-2", "tandem.datasources.ledger.url=" + url).run()));
		assertThat(((TandemConfigurationException) analysis.getCause()).getProperty())
			.isEqualTo("tandem.datasources.ledger.url");
		assertThat(analysis.getDescription()).contains("no_such_db").contains("does not exist");
	}

	@Test
	void anEntryWithoutUrlFailsTheStartNamingTheUrlWithJpaOnTheClassPath() {
		FailureAnalysis analysis = analysis(
				catchThrowable(() -> app("app-3", "tandem.datasources.ledger.username=postgres").run()));
		assertThat(((TandemConfigurationException) analysis.getCause()).getProperty())
			.isEqualTo("tandem.datasources.ledger.url");
	}

	@Test
	void aDatabaseThatCannotPrepareFailsTheStartNamingTheSettingWithJpaOnTheClassPath() throws IOException {
		try (EmbeddedPostgres disabled = EmbeddedPostgres.builder().setServerConfig("max_prepared_transactions", "0")
			.start()) {
			Throwable failure = catchThrowable(() -> app("app-4",
					"tandem.datasources.orders.url=" + disabled.getJdbcUrl("postgres", "postgres"))
				.run());
			FailureAnalysis analysis = new PreparedTransactionsDisabledFailureAnalyzer().analyze(failure);
			assertThat(analysis).as("analysis of %s", failure).isNotNull();
			assertThat(analysis.getDescription()).contains("max_prepared_transactions = 0");
			assertThat(analysis.getAction()).contains("max_prepared_transactions").contains("tandem.datasources.orders");
		}
	}

	private static FailureAnalysis analysis(Throwable failure) {
		assertThat(failure).isNotNull();
		FailureAnalysis analysis = new TandemConfigurationFailureAnalyzer().analyze(failure);
		assertThat(analysis).as("analysis of %s", failure).isNotNull();
		return analysis;
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import({ Bank.class, Inner.class, Copier.class, FlushFailingCopier.class })
	static class App {

	}

	@Entity(name = "BrkAccount")
	@Table(name = "brk_account")
	static class Account {

		@Id
		Long id;

		String owner;

		int balance;

		@Version
		long version;

		@OneToMany(mappedBy = "account", fetch = FetchType.LAZY)
		List<Posting> postings = new ArrayList<>();

		protected Account() {
		}

		Account(long id, String owner, int balance) {
			this.id = id;
			this.owner = owner;
			this.balance = balance;
		}

	}

	@Entity(name = "BrkPosting")
	@Table(name = "brk_posting")
	static class Posting {

		@Id
		Long id;

		@ManyToOne(fetch = FetchType.LAZY)
		@JoinColumn(name = "account_id")
		Account account;

		int amount;

		protected Posting() {
		}

		Posting(long id, Account account, int amount) {
			this.id = id;
			this.account = account;
			this.amount = amount;
		}

	}

	@Entity(name = "BrkCopied")
	@Table(name = "brk_copied")
	static class Copied {

		@Id
		@GeneratedValue(strategy = GenerationType.IDENTITY)
		Long seq;

		String value;

		protected Copied() {
		}

		Copied(String value) {
			this.value = value;
		}

	}

	/** A pipelined batch listener (the default depth) that persists a row and copies a record per record. */
	static class Copier {

		static final AtomicBoolean failed = new AtomicBoolean();

		private final EntityManager entityManager;

		private final ClusterTransactionalTemplate<String, String> west;

		Copier(EntityManager entityManager,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.entityManager = entityManager;
			this.west = west;
		}

		@KafkaListener(id = "jpa-breaker", topics = IN, groupId = IN, batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void copy(List<ConsumerRecord<String, String>> records) {
			boolean fail = false;
			for (ConsumerRecord<String, String> record : records) {
				this.entityManager.persist(new Copied(record.value()));
				this.west.send(new ProducerRecord<>(OUT, record.partition(), record.key(), record.value()));
				fail |= record.value().equals("v250");
			}
			if (fail && !failed.getAndSet(true)) {
				throw new IllegalStateException("the first delivery of v250 fails after its persists and sends");
			}
		}

	}

	/**
	 * A pipelined batch listener whose first delivery of w100 persists a taken key (found at the flush
	 * before phase one, after the method returned) and whose first delivery of w300 does the same and
	 * then throws a checked exception, on which the rollback rule commits.
	 */
	static class FlushFailingCopier {

		static final AtomicInteger duplicates = new AtomicInteger();

		static final Set<String> failedOnce = ConcurrentHashMap.newKeySet();

		private final EntityManager entityManager;

		private final ClusterTransactionalTemplate<String, String> west;

		FlushFailingCopier(EntityManager entityManager,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.entityManager = entityManager;
			this.west = west;
		}

		@KafkaListener(id = "jpa-breaker-flush", topics = FLUSH_IN, groupId = FLUSH_IN, batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void copy(List<ConsumerRecord<String, String>> records) throws Bank.Refused {
			boolean checked = false;
			for (ConsumerRecord<String, String> record : records) {
				this.entityManager.persist(new Copied(record.value()));
				this.west.send(new ProducerRecord<>(FLUSH_OUT, record.partition(), record.key(), record.value()));
				if ((record.value().equals("w100") || record.value().equals("w300"))
						&& failedOnce.add(record.value())) {
					this.entityManager.persist(new Account(TAKEN, "taken-again", 0));
					duplicates.incrementAndGet();
					checked |= record.value().equals("w300");
				}
			}
			if (checked) {
				throw new Bank.Refused("checked, with a duplicate key waiting for the flush");
			}
		}

	}

	@Entity(name = "BrkBulk")
	@Table(name = "brk_bulk")
	static class Bulk {

		@Id
		Long id;

		int n;

		protected Bulk() {
		}

		Bulk(long id, int n) {
			this.id = id;
			this.n = n;
		}

	}

	/** A Spring transaction with its own propagation, called from inside a cross-cluster one. */
	static class Inner {

		private final EntityManager entityManager;

		private final ClusterTransactionalTemplate<String, String> east;

		private final ClusterTransactionalTemplate<String, String> west;

		Inner(EntityManager entityManager,
				@Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.entityManager = entityManager;
			this.east = east;
			this.west = west;
		}

		@Transactional(propagation = Propagation.REQUIRES_NEW)
		public void open(long id, String owner) {
			this.entityManager.persist(new Account(id, owner, 0));
		}

		@CrossClusterTransactional(propagation = dev.tandem.transaction.Propagation.REQUIRES_NEW)
		public void openInANewCrossClusterTransaction(long id, String owner) {
			this.entityManager.persist(new Account(id, owner, 0));
			this.east.send(TOPIC, owner, owner);
			this.west.send(TOPIC, owner, owner);
		}

	}

	static class Bank {

		private final EntityManager entityManager;

		private final JdbcTemplate jdbc;

		private final Inner inner;

		private final ClusterTransactionalTemplate<String, String> east;

		private final ClusterTransactionalTemplate<String, String> west;

		Bank(EntityManager entityManager, JdbcTemplate jdbc, Inner inner,
				@Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
				@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
			this.entityManager = entityManager;
			this.jdbc = jdbc;
			this.inner = inner;
			this.east = east;
			this.west = west;
		}

		private void send(String value) {
			this.east.send(TOPIC, value, value);
			this.west.send(TOPIC, value, value);
		}

		static class Refused extends Exception {

			Refused(String message) {
				super(message);
			}

		}

		@CrossClusterTransactional
		public Account open(long id, String owner, int balance) {
			Account account = new Account(id, owner, balance);
			this.entityManager.persist(account);
			send(owner);
			return account;
		}

		@CrossClusterTransactional
		public void openThenThrowChecked(long id, String owner) throws Refused {
			this.entityManager.persist(new Account(id, owner, 0));
			send(owner);
			throw new Refused("checked, after the persist and the sends");
		}

		@CrossClusterTransactional
		public void openDuplicateThenThrowChecked(long id, long takenId, String owner) throws Refused {
			this.entityManager.persist(new Account(id, owner, 0));
			this.entityManager.persist(new Account(takenId, owner + "-duplicate", 0));
			send(owner);
			throw new Refused("checked, with a duplicate key waiting for the flush");
		}

		/** Returns the rows a JdbcTemplate on the same branch sees after the user's flush. */
		@CrossClusterTransactional
		public int openWithUserFlush(long id, String owner, boolean fail) {
			this.entityManager.persist(new Account(id, owner, 0));
			this.entityManager.flush();
			Integer seen = this.jdbc.queryForObject("SELECT count(*) FROM brk_account WHERE id = ?", Integer.class,
					id);
			send(owner);
			if (fail) {
				throw new IllegalStateException("fails after the flush and the sends");
			}
			return seen;
		}

		/** A new row and one whose key is taken; the user's flush fails and the method catches it. */
		@CrossClusterTransactional
		public void openDuplicateAndCatchTheFlush(long id, long takenId, String owner) {
			this.entityManager.persist(new Account(id, owner, 0));
			this.entityManager.persist(new Account(takenId, owner + "-duplicate", 0));
			try {
				this.entityManager.flush();
			}
			catch (jakarta.persistence.PersistenceException expected) {
				// swallowed by the application
			}
			send(owner);
		}

		/** Persists, runs a new cross-cluster transaction that persists, persists again, then fails. */
		@CrossClusterTransactional
		public void openAroundANewCrossClusterTransaction(long id, long innerId, long afterId, String owner) {
			this.entityManager.persist(new Account(id, owner, 0));
			this.inner.openInANewCrossClusterTransaction(innerId, owner + "-inner");
			this.entityManager.persist(new Account(afterId, owner + "-after", 0));
			send(owner);
			throw new IllegalStateException("the outer transaction fails after the inner one committed");
		}

		@CrossClusterTransactional
		public void openAroundANewCrossClusterTransactionAndCommit(long id, long innerId, long afterId,
				String owner) {
			this.entityManager.persist(new Account(id, owner, 0));
			this.inner.openInANewCrossClusterTransaction(innerId, owner + "-inner");
			this.entityManager.persist(new Account(afterId, owner + "-after", 0));
			// the outer persistence context is the one bound again: it still manages its first entity
			assertThat(this.entityManager.find(Account.class, id)).isNotNull();
			assertThat(this.entityManager.contains(this.entityManager.find(Account.class, innerId))).isTrue();
			send(owner);
		}

		/** Outside any transaction: the entity manager bound to the thread (open in view), if any. */
		public Account findOutside(long id) {
			return this.entityManager.find(Account.class, id);
		}

		/** Changes an entity it is handed, counting on dirty checking to write it. */
		@CrossClusterTransactional
		public void add(Account account, int amount, String value) {
			account.balance += amount;
			send(value);
		}

		@CrossClusterTransactional
		public void openWithPostings(long id, String owner, int postings) {
			Account account = new Account(id, owner, postings);
			this.entityManager.persist(account);
			for (int i = 0; i < postings; i++) {
				this.entityManager.persist(new Posting(id * 1000 + i, account, 1));
			}
			send(owner);
			send(owner + "/" + postings);
		}

		@CrossClusterTransactional
		public Account load(long id) {
			return this.entityManager.find(Account.class, id);
		}

		@CrossClusterTransactional
		public int postingCount(long id) {
			return this.entityManager.find(Account.class, id).postings.size();
		}

		@CrossClusterTransactional
		public void merge(Account detached, String value) {
			this.entityManager.merge(detached);
			send(value);
		}

		@CrossClusterTransactional
		public void openWithRequiresNew(long id, long innerId, String owner, boolean fail) {
			this.entityManager.persist(new Account(id, owner, 0));
			this.inner.open(innerId, owner + "-inner");
			send(owner);
			if (fail) {
				throw new IllegalStateException("fails after the REQUIRES_NEW call and the sends");
			}
		}

		/** Loads, lets another connection change the row, then changes the loaded entity. */
		@CrossClusterTransactional
		public void addAfterAConcurrentChange(long id, String value) {
			Account account = this.entityManager.find(Account.class, id);
			assertThat(outside("UPDATE brk_account SET balance = balance + 100, version = version + 1 WHERE id = ?",
					id))
				.isOne();
			account.balance += 1;
			send(value);
		}

		@CrossClusterTransactional
		public void bulk(int count, String value) {
			for (int i = 0; i < count; i++) {
				this.entityManager.persist(new Bulk(i, i));
			}
			send(value);
		}

		/** Updates the row (taking its lock), then waits for the release before it sends and commits. */
		@CrossClusterTransactional
		public void addHolding(long id, int amount, String value, CountDownLatch locked, CountDownLatch release) {
			int updated = this.entityManager
				.createQuery("update BrkAccount a set a.balance = a.balance + :amount where a.id = :id")
				.setParameter("amount", amount)
				.setParameter("id", id)
				.executeUpdate();
			assertThat(updated).isOne();
			locked.countDown();
			try {
				assertThat(release.await(60, TimeUnit.SECONDS)).isTrue();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			send(value);
		}

	}

}
