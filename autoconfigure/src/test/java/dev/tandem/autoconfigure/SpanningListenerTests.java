package dev.tandem.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
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
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionTemplate;
import dev.tandem.transaction.CrossClusterTransactional;
import dev.tandem.transaction.TransactionListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A pipelined {@code @CrossClusterTransactional} batch listener whose transactions span container
 * deliveries, on real brokers: the deliveries of one transaction commit together with their
 * offsets; a listener failure on a later delivery aborts the whole open transaction and its
 * records are delivered again; a rebalance commits the open transaction before the partitions go;
 * stopping the container commits what is open. Every copy is read back {@code read_committed}:
 * nothing lost, nothing duplicated.
 */
class SpanningListenerTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@TempDir
	Path dataDir;

	@BeforeEach
	void reset() {
		Spanning.deliveries.clear();
		Spanning.valuesByTransaction.clear();
		Spanning.processed.clear();
		Spanning.failOnce.set(false);
		Spanning.failed.set(false);
		Spanning.abandoned = List.of();
		Spanning.checked = Checked.NONE;
		Spanning.sent.clear();
		Spanning.thrownWith = List.of();
		Outcomes.committed.set(0);
		Outcomes.aborted.set(0);
	}

	@Test
	void deliveriesJoinTheOpenTransactionAndCommitWithIt() throws Exception {
		String topic = topics("spanning", 1000);
		try (ConfigurableApplicationContext context = start(topic, 100, Duration.ofSeconds(1))) {
			awaitCopied(topic, 1000);
			assertThat(Spanning.deliveries.values()).anyMatch((count) -> count >= 2);
			int deliveries = Spanning.deliveries.values().stream().mapToInt(Integer::intValue).sum();
			assertThat(Outcomes.committed.get()).isPositive().isLessThan(deliveries);
			assertThat(Outcomes.aborted.get()).isZero();
			assertThat(Spanning.processed).hasSize(1000).doesNotHaveDuplicates();
		}
	}

	@Test
	void aFailureOnALaterDeliveryAbortsTheWholeOpenTransactionAndDeliversItAgain() throws Exception {
		String topic = topics("spanning-failure", 1000);
		Spanning.failOnce.set(true);
		try (ConfigurableApplicationContext context = start(topic, 100, Duration.ofSeconds(1))) {
			awaitCopied(topic, 1000);
			assertThat(Spanning.failed).isTrue();
			// the failing delivery was the third or later of its transaction: the earlier ones,
			// processed without failing, were aborted with it and processed again
			assertThat(Spanning.abandoned).hasSizeGreaterThanOrEqualTo(2);
			assertThat(Outcomes.aborted.get()).isPositive();
			for (String value : Spanning.abandoned) {
				assertThat(Collections.frequency(Spanning.processed, value)).as(value).isEqualTo(2);
			}
		}
	}

	@Test
	void aRebalanceCommitsTheOpenTransactionBeforeThePartitionsGo() throws Exception {
		String topic = topics("spanning-rebalance", 100);
		// neither size nor age closes the transaction during the test
		try (ConfigurableApplicationContext context = start(topic, 100_000, Duration.ofSeconds(60))) {
			await().atMost(Duration.ofSeconds(60)).until(() -> Spanning.processed.size() == 100);
			assertThat(committedOffset(topic)).isZero();
			assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).isEmpty();
			try (KafkaConsumer<String, String> joining = new KafkaConsumer<>(
					Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("east").bootstrapServers(),
							ConsumerConfig.GROUP_ID_CONFIG, topic, ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
							ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"),
					new StringDeserializer(), new StringDeserializer())) {
				joining.subscribe(List.of(topic));
				List<String> read = new ArrayList<>();
				await().atMost(Duration.ofSeconds(60)).until(() -> {
					joining.poll(Duration.ofMillis(100)).forEach((record) -> read.add(record.value()));
					return !joining.assignment().isEmpty();
				});
				// the join completed only after the listener's consumer gave its partitions up
				assertThat(committedOffset(topic)).isEqualTo(100);
				assertThat(read).isEmpty();
			}
			assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).hasSize(100).doesNotHaveDuplicates();
			assertThat(Outcomes.committed.get()).isEqualTo(1);
			produce(topic, 100, 100);
			await().atMost(Duration.ofSeconds(60)).until(() -> Spanning.processed.size() == 200);
			container(context).stop();
			assertThat(committedOffset(topic)).isEqualTo(200);
			assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).hasSize(200).doesNotHaveDuplicates();
			assertThat(Spanning.processed).hasSize(200).doesNotHaveDuplicates();
		}
	}

	@Test
	void stoppingTheContainerCommitsTheOpenTransaction() throws Exception {
		String topic = topics("spanning-stop", 100);
		try (ConfigurableApplicationContext context = start(topic, 100_000, Duration.ofSeconds(60))) {
			await().atMost(Duration.ofSeconds(60)).until(() -> Spanning.processed.size() == 100);
			assertThat(committedOffset(topic)).isZero();
			container(context).stop();
			assertThat(committedOffset(topic)).isEqualTo(100);
			assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).hasSize(100).doesNotHaveDuplicates();
			produce(topic, 100, 50);
			container(context).start();
			await().atMost(Duration.ofSeconds(60)).until(() -> Spanning.processed.size() == 150);
			container(context).stop();
			assertThat(committedOffset(topic)).isEqualTo(150);
			assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).hasSize(150).doesNotHaveDuplicates();
			assertThat(Spanning.processed).hasSize(150).doesNotHaveDuplicates();
			assertThat(Outcomes.aborted.get()).isZero();
		}
	}

	@Test
	void aCheckedExceptionTheRuleCommitsOnCommitsWithTheOpenTransactionAndIsNotDeliveredAgain() throws Exception {
		// Before issue 28 the exception went on to the container's error handler, which sought the
		// committed delivery back: its records were copied twice.
		String topic = topics("spanning-checked-commits", 1000);
		Spanning.checked = Checked.COMMITS;
		try (ConfigurableApplicationContext context = start(topic, 100, Duration.ofSeconds(1))) {
			awaitCopied(topic, 1000);
			container(context).stop();
			assertThat(Spanning.failed).isTrue();
			assertThat(Spanning.thrownWith).isNotEmpty();
			for (String value : Spanning.thrownWith) {
				assertThat(Collections.frequency(Spanning.sent, value)).as(value).isEqualTo(1);
			}
			assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).hasSize(1000)
				.doesNotHaveDuplicates();
			assertThat(Outcomes.aborted.get()).isZero();
		}
	}

	@Test
	void aCheckedExceptionTheRuleCommitsOnWhoseTransactionAbortsAtCommitIsDeliveredAgainWithTheOpenTransaction()
			throws Exception {
		// The chaos suite's DB_RESTART without the database: the rule commits on the checked
		// exception, the commit aborts (here a send that failed), the pipeline seeks back to the
		// open transaction's first offsets. Before issue 28 the error handler then sought the
		// consumer forward to the failing delivery: the earlier deliveries were lost.
		String topic = topics("spanning-checked-aborts", 1000);
		Spanning.checked = Checked.ABORTS_AT_COMMIT;
		try (ConfigurableApplicationContext context = start(topic, 100, Duration.ofSeconds(1))) {
			awaitCopied(topic, 1000);
			container(context).stop();
			assertThat(Spanning.failed).isTrue();
			assertThat(Outcomes.aborted.get()).isPositive();
			// the failing delivery was the third or later of its transaction: the earlier ones came again
			assertThat(Spanning.abandoned).hasSizeGreaterThanOrEqualTo(2);
			for (String value : Spanning.abandoned) {
				assertThat(Collections.frequency(Spanning.processed, value)).as(value).isEqualTo(2);
			}
			for (String value : Spanning.thrownWith) {
				assertThat(Collections.frequency(Spanning.sent, value)).as(value).isEqualTo(2);
			}
			assertThat(ReadCommitted.values(kafka.cluster("west"), topic + "-out")).hasSize(1000)
				.doesNotHaveDuplicates();
		}
	}

	private ConfigurableApplicationContext start(String topic, int maxRecords, Duration maxInterval) {
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.clusters.east.consumer.max.poll.records=10", "tandem.transaction.id-prefix=" + topic,
					"tandem.transaction.instance-id=" + topic + "-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"), "tandem.listener.back-off=0",
					"tandem.listener.max-records=" + maxRecords, "tandem.listener.growth=1",
					"tandem.listener.max-interval=" + maxInterval.toMillis() + "ms", "test.topic=" + topic,
					"spring.kafka.listener.observation-enabled=false")
			.run();
	}

	private static MessageListenerContainer container(ConfigurableApplicationContext context) {
		MessageListenerContainer container = context.getBean(KafkaListenerEndpointRegistry.class)
			.getListenerContainer("spanning");
		assertThat(container).isNotNull();
		return container;
	}

	private static String topics(String topic, int records) throws Exception {
		kafka.cluster("east").createTopic(topic, 3, (short) 1);
		kafka.cluster("west").createTopic(topic + "-out", 3, (short) 1);
		produce(topic, 0, records);
		return topic;
	}

	private static void produce(String topic, int from, int count) {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = from; i < from + count; i++) {
				producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
			}
		}
	}

	private static void awaitCopied(String topic, int records) {
		await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
			.until(() -> committedOffset(topic) == records);
		List<String> copied = ReadCommitted.values(kafka.cluster("west"), topic + "-out");
		assertThat(copied).hasSize(records).doesNotHaveDuplicates();
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
	@EnableAutoConfiguration
	@EnableKafka
	@Import(Spanning.class)
	static class App {

		@Bean
		Outcomes outcomes() {
			return new Outcomes();
		}

	}

	static class Outcomes implements TransactionListener {

		static final AtomicInteger committed = new AtomicInteger();

		static final AtomicInteger aborted = new AtomicInteger();

		@Override
		public void onCommitted(String transactionId, int participants, Duration commitLatency) {
			committed.incrementAndGet();
		}

		@Override
		public void onAborted(String transactionId, Throwable cause) {
			aborted.incrementAndGet();
		}

	}

	static class Spanning {

		/** Deliveries per transaction id. */
		static final Map<String, Integer> deliveries = new ConcurrentHashMap<>();

		/** Values each transaction's deliveries processed without failing. */
		static final Map<String, List<String>> valuesByTransaction = new ConcurrentHashMap<>();

		/** Every value processed without failing, redeliveries included. */
		static final List<String> processed = Collections.synchronizedList(new ArrayList<>());

		static final AtomicBoolean failOnce = new AtomicBoolean();

		static final AtomicBoolean failed = new AtomicBoolean();

		static volatile List<String> abandoned = List.of();

		/** Every value sent, by failing deliveries too. */
		static final List<String> sent = Collections.synchronizedList(new ArrayList<>());

		/** Once, on the third or later delivery of a transaction: a checked exception (see {@link Checked}). */
		static volatile Checked checked = Checked.NONE;

		/** The values of the delivery that threw the checked exception. */
		static volatile List<String> thrownWith = List.of();

		private final ClusterTransactionalTemplate<String, String> west;

		private final String out;

		Spanning(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				@Value("${test.topic}") String topic) {
			this.west = west;
			this.out = topic + "-out";
		}

		@KafkaListener(id = "spanning", topics = "${test.topic}", groupId = "${test.topic}", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void copy(List<ConsumerRecord<String, String>> records) throws IOException {
			CrossClusterTransaction transaction = CrossClusterTemplateAccess.current();
			String id = transaction.transactionId();
			int delivery = deliveries.merge(id, 1, Integer::sum);
			List<String> values = new ArrayList<>();
			for (ConsumerRecord<String, String> record : records) {
				this.west.send(new ProducerRecord<>(this.out, record.partition(), record.key(), record.value()));
				values.add(record.value());
			}
			sent.addAll(values);
			if (checked != Checked.NONE && delivery >= 3 && failed.compareAndSet(false, true)) {
				abandoned = List.copyOf(valuesByTransaction.getOrDefault(id, List.of()));
				thrownWith = values;
				if (checked == Checked.ABORTS_AT_COMMIT) {
					// larger than the producer's max.request.size: the send fails, so does the commit
					this.west.send(new ProducerRecord<>(this.out, "too-large", "x".repeat(2 * 1024 * 1024)));
				}
				throw new IOException("Listener throws a checked exception once, on delivery " + delivery + " of " + id);
			}
			if (failOnce.get() && delivery >= 3 && failed.compareAndSet(false, true)) {
				abandoned = List.copyOf(valuesByTransaction.getOrDefault(id, List.of()));
				throw new IllegalStateException("Listener fails once, on delivery " + delivery + " of " + id);
			}
			valuesByTransaction.computeIfAbsent(id, (key) -> Collections.synchronizedList(new ArrayList<>()))
				.addAll(values);
			processed.addAll(values);
		}

	}

	/** A checked exception the listener throws once; the default rollback rule commits on it. */
	enum Checked {

		NONE,

		/** The transaction commits. */
		COMMITS,

		/** A send of the transaction failed: the commit aborts. */
		ABORTS_AT_COMMIT

	}

	/** The transaction bound to the listener's thread. */
	static final class CrossClusterTemplateAccess {

		static CrossClusterTransaction current() {
			CrossClusterTransaction transaction = CrossClusterTransactionTemplate.currentTransaction();
			assertThat(transaction).isNotNull();
			return transaction;
		}

	}

}
