package dev.tandem.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactional;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;
import dev.tandem.transaction.TransactionListener;
import dev.tandem.transaction.TransactionState;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A pipelined {@code @CrossClusterTransactional} batch listener on real brokers: deliveries
 * execute while the previous delivery's transaction commits, and a commit that fails (the
 * target broker refuses a record) rewinds the consumer, so every record is copied exactly once.
 */
class PipelinedListenerTests {

	static final int RECORDS = 2000;

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@TempDir
	Path dataDir;

	@Test
	void pipelinedDeliveriesCopyEveryRecordOnceThroughAFailedCommit() throws Exception {
		kafka.cluster("east").createTopic("pipelined", 3, (short) 1);
		kafka.cluster("west").createTopic("pipelined-out", 3, (short) 1);
		// the broker refuses records above 2,000 bytes: the poison send fails only at prepare
		kafka.cluster("west").createTopic("pipelined-small", 1, (short) 1, Map.of("max.message.bytes", "2000"));
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < RECORDS; i++) {
				producer.send(new ProducerRecord<>("pipelined", "k" + i, "v" + i));
			}
		}
		Copier.poisoned.set(false);
		Copier.overlapped.set(0);
		HoldFirstCommit.held.set(false);
		Aborts.count.set(0);
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.clusters.east.consumer.max.poll.records=40", "tandem.transaction.id-prefix=pipelined-tests",
					"tandem.transaction.instance-id=pipelined-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"), "tandem.listener.back-off=0",
					// transactions of 200 records: in a warm JVM one transaction of the defaults
					// (up to 5,000, or 100 ms) took every record, so no delivery came after the
					// held commit and none could overlap it
					"tandem.listener.max-records=200", "tandem.listener.growth=1",
					"spring.kafka.listener.observation-enabled=false")
			.run()) {
			await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(200))
				.until(() -> committedOffset("pipelined") == RECORDS);
			List<String> copied = ReadCommitted.values(kafka.cluster("west").bootstrapServers(), "pipelined-out");
			assertThat(copied).hasSize(RECORDS).doesNotHaveDuplicates();
			assertThat(Copier.poisoned).isTrue();
			assertThat(Aborts.count.get()).isPositive();
			assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), "pipelined-small")).isEmpty();
			// some delivery ran while an earlier delivery's transaction was still committing
			assertThat(Copier.overlapped.get()).isPositive();
		}
	}

	private static long committedOffset(String group) throws Exception {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()))) {
			Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
				.partitionsToOffsetAndMetadata()
				.get(30, TimeUnit.SECONDS);
			return offsets.values().stream().filter(java.util.Objects::nonNull).mapToLong(OffsetAndMetadata::offset).sum();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import(Copier.class)
	static class App {

		@Bean
		Aborts aborts() {
			return new Aborts();
		}

		@Bean
		HoldFirstCommit holdFirstCommit() {
			return new HoldFirstCommit();
		}

	}

	/**
	 * Holds the first decided transaction before its participants commit until a later delivery
	 * has run beside it (at most 30 s): whether a delivery overlaps a commit then depends on the
	 * pipeline, not on how fast the brokers commit.
	 */
	static class HoldFirstCommit implements ProtocolHook {

		static final AtomicBoolean held = new AtomicBoolean();

		static final CountDownLatch overlapSeen = new CountDownLatch(1);

		@Override
		public void reached(String transactionId, ProtocolStep step) {
			if (step == ProtocolStep.AFTER_DECISION && held.compareAndSet(false, true)) {
				try {
					overlapSeen.await(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		}

		@Override
		public boolean injectsFaults() {
			return false;
		}

	}

	static class Aborts implements TransactionListener {

		static final AtomicInteger count = new AtomicInteger();

		@Override
		public void onAborted(String transactionId, Throwable cause) {
			count.incrementAndGet();
		}

	}

	static class Copier {

		static final AtomicBoolean poisoned = new AtomicBoolean();

		static final AtomicInteger overlapped = new AtomicInteger();

		private final ClusterTransactionalTemplate<String, String> west;

		private final CrossClusterTransactionManager manager;

		Copier(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				CrossClusterTransactionManager manager) {
			this.west = west;
			this.manager = manager;
		}

		@KafkaListener(id = "pipelined", topics = "pipelined", groupId = "pipelined", batch = "true",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void copy(List<ConsumerRecord<String, String>> records) {
			if (this.manager.activeTransactions().stream().anyMatch((txn) -> txn.state() != TransactionState.ACTIVE)) {
				overlapped.incrementAndGet();
				HoldFirstCommit.overlapSeen.countDown();
			}
			for (ConsumerRecord<String, String> record : records) {
				this.west.send(new ProducerRecord<>("pipelined-out", record.partition(), record.key(), record.value()));
				if (record.value().equals("v1000") && poisoned.compareAndSet(false, true)) {
					this.west.send("pipelined-small", "x".repeat(5000));
				}
			}
		}

	}

}
