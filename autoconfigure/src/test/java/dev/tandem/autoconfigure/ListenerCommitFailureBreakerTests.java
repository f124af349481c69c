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

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Trials against a listener commit that fails on the database (a deferred constraint checked by
 * the prepare, a failure the listener caught: 25P02): the stop policy, a record listener, and a
 * transient failure the listener swallowed. Real brokers, a real PostgreSQL started by the test.
 */
class ListenerCommitFailureBreakerTests {

	private static final int RECORDS = 1500;

	/** The record whose row is taken first, or whose statement fails transiently. */
	private static final int POISON = 777;

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	static volatile RestartablePostgres database;

	@TempDir
	Path dataDir;

	@BeforeEach
	void startDatabase() throws IOException, SQLException {
		Copier.transientFailures.set(0);
		Copier.poisonTries.set(0);
		database = RestartablePostgres.start(this.dataDir, 20, "CREATE TABLE copied (id VARCHAR(64) NOT NULL)");
	}

	@AfterEach
	void stopDatabase() throws IOException {
		if (database != null) {
			database.close();
		}
	}

	/**
	 * Trial: failed-record=stop with a deferred constraint, so the failure comes from the
	 * pipeline's prepare, not the listener. The container must stop at the poison's offset with
	 * every record before it committed once with its row, the poison's row not written twice.
	 */
	@Test
	void aDeferredConstraintWithTheStopPolicyStopsTheContainerAtThePoisonsOffset() throws Exception {
		String topic = topics("breaker-stop-deferred");
		takeThePoisonRow("ALTER TABLE copied ADD CONSTRAINT copied_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED");
		produce(topic);
		ConsumerRecord<byte[], byte[]> poison = ReadCommitted
			.records(kafka.cluster("east").bootstrapServers(), topic, ReadCommitted.DEFAULT_TIMEOUT)
			.stream()
			.filter((record) -> new String(record.value(), StandardCharsets.UTF_8).equals("v" + POISON))
			.findFirst()
			.orElseThrow();
		TopicPartition partition = new TopicPartition(topic, poison.partition());
		try (ConfigurableApplicationContext context = start(BatchApp.class, topic, "tandem.listener.failed-record=stop")) {
			MessageListenerContainer container = context.getBean(KafkaListenerEndpointRegistry.class)
				.getListenerContainer("breaker");
			await().atMost(Duration.ofSeconds(120)).until(() -> !container.isRunning());
			Map<TopicPartition, OffsetAndMetadata> offsets = ReadCommitted
				.groupOffsets(kafka.cluster("east").bootstrapServers(), topic, topic);
			assertThat(offsets.get(partition).offset()).isEqualTo(poison.offset());
			List<String> copied = ReadCommitted.values(kafka.cluster("west"), topic + "-out");
			assertThat(copied).doesNotHaveDuplicates().doesNotContain("v" + POISON);
			assertThat(copied).hasSizeGreaterThanOrEqualTo((int) poison.offset());
			assertThat(offsets.values().stream().mapToLong(OffsetAndMetadata::offset).sum()).isEqualTo(copied.size());
			await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
				.until(() -> count("SELECT count(*) FROM pg_prepared_xacts") == 0);
			assertThat(count("SELECT count(*) FROM copied")).isEqualTo(copied.size() + 1);
			assertThat(count("SELECT count(DISTINCT id) FROM copied")).isEqualTo(copied.size() + 1);
		}
	}

	/**
	 * Trial: a record listener (batch=false, not pipelined) under a deferred constraint: the
	 * commit of the poison's own transaction fails at the prepare; it must be dead-lettered once,
	 * every other record copied once with its row.
	 */
	@Test
	void aRecordListenerUnderADeferredConstraintDeadLettersThePoisonOnce() throws Exception {
		String topic = topics("breaker-record-deferred");
		kafka.cluster("east").createTopic(topic + "-dlt", 1, (short) 1);
		takeThePoisonRow("ALTER TABLE copied ADD CONSTRAINT copied_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED");
		produce(topic);
		try (ConfigurableApplicationContext context = start(RecordApp.class, topic,
				"tandem.listener.failed-record=dead-letter", "tandem.listener.back-off=0")) {
			await().atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(200))
				.until(() -> committedOffset(topic) == RECORDS);
			context.getBean(KafkaListenerEndpointRegistry.class).getListenerContainer("breaker").stop();
			assertThat(ReadCommitted.values(kafka.cluster("east"), topic + "-dlt")).containsExactly("v" + POISON);
			assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).hasSize(RECORDS - 1)
				.doesNotHaveDuplicates()
				.doesNotContain("v" + POISON);
			await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
				.until(() -> count("SELECT count(*) FROM pg_prepared_xacts") == 0);
			assertThat(count("SELECT count(*) FROM copied")).isEqualTo(RECORDS);
			assertThat(count("SELECT count(DISTINCT id) FROM copied")).isEqualTo(RECORDS);
		}
	}

	/**
	 * Trial: the listener catches a transient failure (a serialization failure, 40001) of the
	 * poison's statement and returns; the branch can then only roll back and the prepare fails
	 * with 25P02, which is non-transient. The failure lasts the poison's first three tries only
	 * (as a conflicting writer's would): a record that would pass on its next try must not be
	 * dead-lettered. Every record copied once with its row, nothing dead-lettered.
	 */
	@Test
	void aTransientFailureTheListenerCaughtDoesNotDeadLetterARecordThatWouldPass() throws Exception {
		String topic = topics("breaker-caught-transient");
		kafka.cluster("east").createTopic(topic + "-dlt", 1, (short) 1);
		Copier.transientFailures.set(3);
		produce(topic);
		try (ConfigurableApplicationContext context = start(BatchApp.class, topic,
				"tandem.listener.failed-record=dead-letter")) {
			await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
				.until(() -> committedOffset(topic) == RECORDS);
			context.getBean(KafkaListenerEndpointRegistry.class).getListenerContainer("breaker").stop();
			List<String> deadLettered = ReadCommitted.values(kafka.cluster("east"), topic + "-dlt");
			assertThat(Copier.poisonTries.get()).as("tries of the poison").isGreaterThan(3);
			assertThat(deadLettered).as("dead-lettered after %d tries of the poison", Copier.poisonTries.get()).isEmpty();
			assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).hasSize(RECORDS)
				.doesNotHaveDuplicates();
			await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
				.until(() -> count("SELECT count(*) FROM pg_prepared_xacts") == 0);
			assertThat(count("SELECT count(*) FROM copied")).isEqualTo(RECORDS);
			assertThat(count("SELECT count(DISTINCT id) FROM copied")).isEqualTo(RECORDS);
		}
	}

	private static void takeThePoisonRow(String constraint) throws SQLException {
		try (Connection connection = database.dataSource().getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute(constraint);
			statement.execute("INSERT INTO copied (id) VALUES ('v" + POISON + "')");
		}
	}

	private static long count(String query) throws SQLException {
		try (Connection connection = database.dataSource().getConnection();
				Statement statement = connection.createStatement();
				java.sql.ResultSet result = statement.executeQuery(query)) {
			result.next();
			return result.getLong(1);
		}
	}

	private ConfigurableApplicationContext start(Class<?> app, String topic, String... properties) {
		return new SpringApplicationBuilder(app).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.clusters.east.consumer.max.poll.records=10", "tandem.transaction.id-prefix=" + topic,
					"tandem.transaction.instance-id=" + topic + "-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"), "tandem.listener.back-off=0",
					"tandem.listener.max-records=100", "tandem.listener.growth=1", "tandem.listener.max-interval=1000ms",
					"test.topic=" + topic, "spring.kafka.listener.observation-enabled=false")
			.properties(properties)
			.run();
	}

	private static String topics(String topic) {
		kafka.cluster("east").createTopic(topic, 3, (short) 1);
		kafka.cluster("west").createTopic(topic + "-out", 3, (short) 1);
		return topic;
	}

	private static void produce(String topic) {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < RECORDS; i++) {
				producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
			}
			producer.flush();
		}
	}

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
	static class Database {

		@Bean
		CrossClusterDataSource copiedDataSource() {
			PGXADataSource xa = new PGXADataSource();
			xa.setUrl("jdbc:postgresql://localhost:" + database.port() + "/postgres?user=postgres");
			PGSimpleDataSource outside = new PGSimpleDataSource();
			outside.setUrl("jdbc:postgresql://localhost:" + database.port() + "/postgres?user=postgres");
			return new CrossClusterDataSource("copied", xa, outside);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import({ Database.class, BatchCopier.class })
	static class BatchApp {

	}

	@Configuration(proxyBeanMethods = false)
	@Import({ Database.class, RecordCopier.class })
	static class RecordApp {

	}

	/** Writes the rows and the copies; the poison's statement may fail transiently, caught. */
	abstract static class Copier {

		/** How many more times the poison's statement fails with 40001 (caught by the listener). */
		static final AtomicInteger transientFailures = new AtomicInteger();

		/** Times the listener was given the poison. */
		static final AtomicInteger poisonTries = new AtomicInteger();

		private final ClusterTransactionalTemplate<String, String> west;

		private final CrossClusterDataSource dataSource;

		private final String out;

		Copier(ClusterTransactionalTemplate<String, String> west, CrossClusterDataSource dataSource, String topic) {
			this.west = west;
			this.dataSource = dataSource;
			this.out = topic + "-out";
		}

		void copyAll(List<ConsumerRecord<String, String>> records) throws SQLException {
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
				for (ConsumerRecord<String, String> record : records) {
					if (record.value().equals("v" + POISON)) {
						poisonTries.incrementAndGet();
						if (transientFailures.getAndUpdate((left) -> Math.max(0, left - 1)) > 0) {
							try (Statement statement = connection.createStatement()) {
								statement.execute("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$");
							}
							catch (SQLException caught) {
								// swallowed: the branch can only roll back now (25P02 at the prepare)
							}
						}
					}
				}
			}
		}

	}

	static class BatchCopier extends Copier {

		BatchCopier(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				CrossClusterDataSource dataSource, @Value("${test.topic}") String topic) {
			super(west, dataSource, topic);
		}

		@KafkaListener(id = "breaker", topics = "${test.topic}", groupId = "${test.topic}", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void copy(List<ConsumerRecord<String, String>> records) throws SQLException {
			copyAll(records);
		}

	}

	static class RecordCopier extends Copier {

		RecordCopier(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				CrossClusterDataSource dataSource, @Value("${test.topic}") String topic) {
			super(west, dataSource, topic);
		}

		@KafkaListener(id = "breaker", topics = "${test.topic}", groupId = "${test.topic}", batch = "false",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void copy(ConsumerRecord<String, String> record) throws SQLException {
			copyAll(List.of(record));
		}

	}

}
