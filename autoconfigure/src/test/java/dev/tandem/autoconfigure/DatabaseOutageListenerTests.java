package dev.tandem.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.xa.PGXADataSource;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.MessageListenerContainer;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterDataSource;
import dev.tandem.transaction.CrossClusterTransactional;
import dev.tandem.transaction.TransactionListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A pipelined {@code @CrossClusterTransactional} batch listener that copies each record to
 * another cluster and writes a row per record through a {@link CrossClusterDataSource} (plain
 * JDBC, so a failure is a checked {@code SQLException}, on which the default rollback rule
 * commits), while its PostgreSQL is restarted or its sessions are terminated: the transactions
 * that could not write their rows abort, and their records, the earlier deliveries of the same
 * open transaction among them, are delivered again. Every record copied once, every row written
 * once, nothing lost (issue 28: the container's error handler used to seek past the pipeline's
 * rewind). Real brokers, a real PostgreSQL started by the test.
 * <p>
 * A failure that is not the database's but a record's own (a row that violates a unique
 * constraint, SQL state 23505, thrown as the same checked {@code SQLException}) is narrowed to
 * its record and failed per {@code tandem.listener.failed-record} like any listener failure: the
 * default rollback rule aborts on it ({@code DatabaseFailures}), where it used to commit, abort
 * at the prepare of the broken branch and deliver the records again without end.
 */
class DatabaseOutageListenerTests {

	private static final int RECORDS = 6000;

	/** The record whose row another writer took first, in the poison tests. */
	private static final int POISON = 2345;

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	/** The database the app writes to; started again on the same port and data directory. */
	static volatile RestartablePostgres database;

	@TempDir
	Path dataDir;

	@BeforeEach
	void startDatabase() throws IOException, SQLException {
		Copier.processed.set(0);
		Copier.unchecked = false;
		Copier.caught = false;
		Outcomes.aborted.set(0);
		// no key: a row written twice would be counted, not refused
		database = RestartablePostgres.start(this.dataDir, 20, "CREATE TABLE copied (id VARCHAR(64) NOT NULL)");
	}

	@AfterEach
	void stopDatabase() throws IOException {
		if (database != null) {
			database.close();
		}
	}

	@Test
	void theDatabaseRestartedUnderThePipelinedListenerLosesAndDuplicatesNothing() throws Exception {
		String topic = topics("outage-restart");
		try (ConfigurableApplicationContext context = start(topic)) {
			CompletableFuture<Void> produced = CompletableFuture.runAsync(() -> produce(topic));
			await().atMost(Duration.ofSeconds(60)).until(() -> Copier.processed.get() >= 1000);
			database.stop();
			// transactions that could not write their rows abort while it is down
			await().atMost(Duration.ofSeconds(60)).until(() -> Outcomes.aborted.get() > 0);
			database.start();
			produced.get();
			assertEveryRecordCopiedOnceWithItsRow(context, topic);
		}
	}

	@Test
	void theDatabaseRestartedUnderAListenerThrowingUncheckedDeadLettersNothingAndLosesNothing() throws Exception {
		String topic = topics("outage-unchecked");
		kafka.cluster("east").createTopic(topic + "-dlt", 1, (short) 1);
		Copier.unchecked = true;
		try (ConfigurableApplicationContext context = start(topic, "tandem.listener.failed-record=dead-letter")) {
			CompletableFuture<Void> produced = CompletableFuture.runAsync(() -> produce(topic));
			await().atMost(Duration.ofSeconds(60)).until(() -> Copier.processed.get() >= 1000);
			database.stop();
			// the listener's unchecked exceptions abort the transactions while it is down
			await().atMost(Duration.ofSeconds(60)).until(() -> Outcomes.aborted.get() > 0);
			database.start();
			produced.get();
			assertEveryRecordCopiedOnceWithItsRow(context, topic);
			assertThat(ReadCommitted.values(kafka.cluster("east"), topic + "-dlt")).isEmpty();
		}
	}

	@Test
	void theDatabaseSessionsTerminatedUnderThePipelinedListenerLoseAndDuplicateNothing() throws Exception {
		String topic = topics("outage-terminate");
		try (ConfigurableApplicationContext context = start(topic)) {
			CompletableFuture<Void> produced = CompletableFuture.runAsync(() -> produce(topic));
			await().atMost(Duration.ofSeconds(60)).until(() -> Copier.processed.get() >= 1000);
			for (int i = 0; i < 3; i++) {
				int before = Outcomes.aborted.get();
				// each round until a transaction aborted for it
				await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).until(() -> {
					terminateSessions();
					return Outcomes.aborted.get() > before || produced.isDone();
				});
			}
			produced.get();
			assertThat(Outcomes.aborted.get()).isPositive();
			assertEveryRecordCopiedOnceWithItsRow(context, topic);
		}
	}

	@Test
	void aRowViolatingAUniqueConstraintIsDeadLetteredOnceAndEveryOtherRecordWrittenOnce() throws Exception {
		String topic = topics("poison-dead-letter");
		takeThePoisonRow("CREATE UNIQUE INDEX copied_id ON copied (id)");
		assertThePoisonDeadLetteredOnceAndEveryOtherRecordWrittenOnce(topic);
	}

	/**
	 * A deferred constraint is checked by the prepare, on the pipeline, after the listener
	 * returned: the commit fails, not the listener. The records are delivered again alone and
	 * the failure narrowed to its record, where it used to fail the pipeline's commit again
	 * without end.
	 */
	@Test
	void aRowViolatingADeferredConstraintAtThePrepareIsDeadLetteredOnceAndEveryOtherRecordWrittenOnce()
			throws Exception {
		String topic = topics("poison-deferred");
		takeThePoisonRow("ALTER TABLE copied ADD CONSTRAINT copied_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED");
		assertThePoisonDeadLetteredOnceAndEveryOtherRecordWrittenOnce(topic);
	}

	/**
	 * The listener catches the violation and returns: the branch is aborted, and the commit fails
	 * (25P02 at the prepare). Narrowed and dead-lettered like the failure it caught.
	 */
	@Test
	void aRowFailureTheListenerCaughtIsDeadLetteredOnceAndEveryOtherRecordWrittenOnce() throws Exception {
		String topic = topics("poison-caught");
		takeThePoisonRow("CREATE UNIQUE INDEX copied_id ON copied (id)");
		Copier.caught = true;
		assertThePoisonDeadLetteredOnceAndEveryOtherRecordWrittenOnce(topic);
	}

	private void assertThePoisonDeadLetteredOnceAndEveryOtherRecordWrittenOnce(String topic) throws Exception {
		kafka.cluster("east").createTopic(topic + "-dlt", 1, (short) 1);
		produce(topic);
		try (ConfigurableApplicationContext context = start(topic, "tandem.listener.failed-record=dead-letter")) {
			await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
				.until(() -> committedOffset(topic) == RECORDS);
			context.getBean(KafkaListenerEndpointRegistry.class).getListenerContainer("outage").stop();
			List<String> expected = new ArrayList<>();
			for (int i = 0; i < RECORDS; i++) {
				if (i != POISON) {
					expected.add("v" + i);
				}
			}
			assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).hasSize(RECORDS - 1)
				.containsExactlyInAnyOrderElementsOf(expected);
			assertThat(ReadCommitted.values(kafka.cluster("east"), topic + "-dlt")).containsExactly("v" + POISON);
			await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
				.until(() -> count("SELECT count(*) FROM pg_prepared_xacts") == 0);
			// the poison row is the one written before the app started
			assertThat(count("SELECT count(*) FROM copied")).isEqualTo(RECORDS);
			assertThat(count("SELECT count(DISTINCT id) FROM copied")).isEqualTo(RECORDS);
		}
	}

	@Test
	void aRowViolatingAUniqueConstraintStopsTheContainerAtItsOffsetWithTheRecordsBeforeItWritten() throws Exception {
		String topic = topics("poison-stop");
		kafka.cluster("east").createTopic(topic + "-dlt", 1, (short) 1);
		takeThePoisonRow("CREATE UNIQUE INDEX copied_id ON copied (id)");
		produce(topic);
		ConsumerRecord<byte[], byte[]> poison = ReadCommitted
			.records(kafka.cluster("east").bootstrapServers(), topic, ReadCommitted.DEFAULT_TIMEOUT)
			.stream()
			.filter((record) -> new String(record.value(), StandardCharsets.UTF_8).equals("v" + POISON))
			.findFirst()
			.orElseThrow();
		TopicPartition partition = new TopicPartition(topic, poison.partition());
		try (ConfigurableApplicationContext context = start(topic, "tandem.listener.failed-record=stop")) {
			MessageListenerContainer container = context.getBean(KafkaListenerEndpointRegistry.class)
				.getListenerContainer("outage");
			await().atMost(Duration.ofSeconds(120)).until(() -> !container.isRunning());
			Map<TopicPartition, OffsetAndMetadata> offsets = ReadCommitted
				.groupOffsets(kafka.cluster("east").bootstrapServers(), topic, topic);
			assertThat(offsets.get(partition).offset()).isEqualTo(poison.offset());
			List<String> copied = ReadCommitted.values(kafka.cluster("west"), topic + "-out");
			assertThat(copied).doesNotHaveDuplicates().doesNotContain("v" + POISON);
			// every record of the poison's partition before it is written, with its row
			assertThat(copied).hasSizeGreaterThanOrEqualTo((int) poison.offset());
			assertThat(offsets.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(copied.size());
			assertThat(ReadCommitted.values(kafka.cluster("east"), topic + "-dlt")).isEmpty();
			await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
				.until(() -> count("SELECT count(*) FROM pg_prepared_xacts") == 0);
			assertThat(count("SELECT count(*) FROM copied")).isEqualTo(copied.size() + 1);
			assertThat(count("SELECT count(*) FROM copied WHERE id = 'v" + POISON + "'")).isEqualTo(1);
		}
	}

	/** A unique constraint on the rows, and the row of record {@link #POISON} written before the app runs. */
	private static void takeThePoisonRow(String constraint) throws SQLException {
		try (Connection connection = database.dataSource().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute(constraint);
			statement.execute("INSERT INTO copied (id) VALUES ('v" + POISON + "')");
		}
	}

	private static void terminateSessions() throws SQLException {
		try (Connection connection = database.dataSource().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
					+ "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'");
		}
	}

	private static void assertEveryRecordCopiedOnceWithItsRow(ConfigurableApplicationContext context, String topic)
			throws SQLException {
		await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
			.until(() -> committedOffset(topic) == RECORDS);
		MessageListenerContainer container = context.getBean(KafkaListenerEndpointRegistry.class)
			.getListenerContainer("outage");
		assertThat(container).isNotNull();
		container.stop();
		List<String> expected = new ArrayList<>();
		for (int i = 0; i < RECORDS; i++) {
			expected.add("v" + i);
		}
		assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).hasSize(RECORDS)
			.containsExactlyInAnyOrderElementsOf(expected);
		// the branches of decided transactions that the restart left prepared are committed by recovery
		await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
			.until(() -> count("SELECT count(*) FROM pg_prepared_xacts") == 0);
		assertThat(count("SELECT count(*) FROM copied")).isEqualTo(RECORDS);
		assertThat(count("SELECT count(DISTINCT id) FROM copied")).isEqualTo(RECORDS);
	}

	private static long count(String query) throws SQLException {
		try (Connection connection = database.dataSource().getConnection();
				Statement statement = connection.createStatement();
				java.sql.ResultSet result = statement.executeQuery(query)) {
			result.next();
			return result.getLong(1);
		}
	}

	private ConfigurableApplicationContext start(String topic, String... properties) {
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties(properties)
			.properties("tandem.clusters.east.consumer.max.poll.records=10", "tandem.transaction.id-prefix=" + topic,
					"tandem.transaction.instance-id=" + topic + "-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"), "tandem.listener.back-off=0",
					"tandem.listener.max-records=100", "tandem.listener.growth=1", "tandem.listener.max-interval=1000ms",
					"test.topic=" + topic, "spring.kafka.listener.observation-enabled=false")
			.run();
	}

	private static String topics(String topic) throws Exception {
		kafka.cluster("east").createTopic(topic, 3, (short) 1);
		kafka.cluster("west").createTopic(topic + "-out", 3, (short) 1);
		return topic;
	}

	/** The records at about 2,000 a second, so that the outage falls while the listener works. */
	private static void produce(String topic) {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < RECORDS; i++) {
				producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
				if (i % 20 == 19) {
					producer.flush();
					Thread.sleep(10);
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** The group's committed offsets, summed over the topic's partitions, once no transaction holds them pending. */
	private static long committedOffset(String topic) {
		return ReadCommitted.groupOffsets(kafka.cluster("east").bootstrapServers(), topic, topic)
			.values()
			.stream()
			.mapToLong(OffsetAndMetadata::offset)
			.sum();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(excludeName = { JdbcOnly.HIBERNATE, JdbcOnly.DATA_JPA })
	@EnableKafka
	@Import(Copier.class)
	static class App {

		// declared with its own type, so that the auto-configuration finds it before it is created
		@Bean
		CrossClusterDataSource copiedDataSource() {
			PGXADataSource xa = new PGXADataSource();
			xa.setUrl("jdbc:postgresql://localhost:" + database.port() + "/postgres?user=postgres");
			PGSimpleDataSource outside = new PGSimpleDataSource();
			outside.setUrl("jdbc:postgresql://localhost:" + database.port() + "/postgres?user=postgres");
			return new CrossClusterDataSource("copied", xa, outside);
		}

		@Bean
		Outcomes outcomes() {
			return new Outcomes();
		}

	}

	static class Outcomes implements TransactionListener {

		static final AtomicInteger aborted = new AtomicInteger();

		@Override
		public void onCommitted(String transactionId, int participants, Duration commitLatency) {
		}

		@Override
		public void onAborted(String transactionId, Throwable cause) {
			aborted.incrementAndGet();
		}

	}

	static class Copier {

		/** Records the listener processed without failing, redeliveries included. */
		static final AtomicInteger processed = new AtomicInteger();

		/** Whether a failure is thrown unchecked, as Spring's {@code JdbcTemplate} throws it. */
		static volatile boolean unchecked;

		/** Whether a failure is caught and the listener returns as if the rows were written. */
		static volatile boolean caught;

		private final ClusterTransactionalTemplate<String, String> west;

		private final CrossClusterDataSource dataSource;

		private final String out;

		Copier(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				CrossClusterDataSource dataSource, @Value("${test.topic}") String topic) {
			this.west = west;
			this.dataSource = dataSource;
			this.out = topic + "-out";
		}

		@KafkaListener(id = "outage", topics = "${test.topic}", groupId = "${test.topic}", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void copy(List<ConsumerRecord<String, String>> records) throws SQLException {
			for (ConsumerRecord<String, String> record : records) {
				this.west.send(new ProducerRecord<>(this.out, record.partition(), record.key(), record.value()));
			}
			try (Connection connection = this.dataSource.getConnection();
					PreparedStatement insert = connection.prepareStatement("INSERT INTO copied (id) VALUES (?)")) {
				for (ConsumerRecord<String, String> record : records) {
					insert.setString(1, record.value());
					insert.addBatch();
				}
				insert.executeBatch();
			}
			catch (SQLException ex) {
				if (caught) {
					return;
				}
				if (unchecked) {
					throw new IllegalStateException("Could not write the rows", ex);
				}
				throw ex;
			}
			processed.addAndGet(records.size());
		}

	}

}
