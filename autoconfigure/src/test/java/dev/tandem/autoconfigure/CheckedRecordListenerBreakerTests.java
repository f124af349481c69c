package dev.tandem.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.core.ConditionTimeoutException;
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

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransactional;
import dev.tandem.transaction.TransactionListener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Trying to break the listener's handling of a checked exception the rollback rule commits on
 * (issue 28, {@code ListenerTransactions}) with a record listener (not a batch one, so not
 * pipelined): every tenth record makes the listener throw a checked exception after copying it;
 * the first time, the copy is followed by a send that fails (larger than the producer's
 * {@code max.request.size}), so the commit the rule asks for aborts; the second time the commit
 * succeeds. What must hold: every record copied exactly once ({@code read_committed}), each
 * throwing record delivered exactly twice (the aborted commit's redelivery, then never again once
 * committed), the group's offsets at the end. Real brokers.
 */
class CheckedRecordListenerBreakerTests {

	private static final int RECORDS = 300;

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@TempDir
	Path dataDir;

	@BeforeEach
	void reset() {
		Copier.sent.clear();
		Copier.thrown.set(0);
		Outcomes.aborted.set(0);
	}

	@Test
	void aRecordListenersCheckedExceptionWhoseCommitFailsIsDeliveredAgainAndCopiedOnce() throws Exception {
		String topic = "checked-record";
		kafka.cluster("east").createTopic(topic, 3, (short) 1);
		kafka.cluster("west").createTopic(topic + "-out", 3, (short) 1);
		produce(topic);
		try (ConfigurableApplicationContext context = start(topic)) {
			boolean done = awaitOffsets(topic, Duration.ofSeconds(90));
			List<String> copied = ReadCommitted.values(kafka.cluster("west"), topic + "-out");
			List<String> throwing = new ArrayList<>();
			for (int i = 9; i < RECORDS; i += 10) {
				throwing.add("v" + i);
			}
			List<String> deliveredTwice = throwing.stream()
				.filter((value) -> Collections.frequency(Copier.sent, value) == 2)
				.toList();
			long others = Copier.sent.stream().filter((value) -> !throwing.contains(value)).count();
			System.out.printf("[brk] checked record listener: copied %d (distinct %d) of %d; thrown %d; aborted %d; "
					+ "throwing records delivered twice %d of %d; other deliveries %d for %d records%n", copied.size(),
					copied.stream().distinct().count(), RECORDS, Copier.thrown.get(), Outcomes.aborted.get(),
					deliveredTwice.size(), throwing.size(), others, RECORDS - throwing.size());
			System.out.printf("[brk] checked record listener: group offsets %d of %d (reached: %s); copied values "
					+ "missing %s; big records committed %d%n", committedOffset(topic), RECORDS, done,
					missing(copied), ReadCommitted.records(kafka.cluster("west").bootstrapServers(), topic + "-out",
							Duration.ofSeconds(5)).stream().filter((record) -> record.value().length > 1024).count());
			assertThat(done).isTrue();
			assertThat(copied).hasSize(RECORDS).doesNotHaveDuplicates();
			assertThat(Outcomes.aborted.get()).isGreaterThanOrEqualTo(throwing.size());
			assertThat(deliveredTwice).containsExactlyElementsOf(throwing);
		}
	}

	private static boolean awaitOffsets(String topic, Duration within) {
		try {
			await().atMost(within).pollInterval(Duration.ofMillis(200)).until(() -> committedOffset(topic) == RECORDS);
			return true;
		}
		catch (ConditionTimeoutException ex) {
			return false;
		}
	}

	private static List<String> missing(List<String> copied) {
		List<String> missing = new ArrayList<>();
		for (int i = 0; i < RECORDS; i++) {
			if (!copied.contains("v" + i)) {
				missing.add("v" + i);
			}
		}
		return missing;
	}

	private ConfigurableApplicationContext start(String topic) {
		return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
			.properties(kafka.clusters().tandemProperties())
			.properties("tandem.clusters.east.consumer.max.poll.records=10", "tandem.transaction.id-prefix=" + topic,
					"tandem.transaction.instance-id=" + topic + "-0",
					"tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"), "tandem.listener.back-off=0",
					"test.topic=" + topic, "spring.kafka.listener.observation-enabled=false")
			.run();
	}

	private static void produce(String topic) {
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(
				Map.of("bootstrap.servers", kafka.cluster("east").bootstrapServers()), new StringSerializer(),
				new StringSerializer())) {
			for (int i = 0; i < RECORDS; i++) {
				producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
			}
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
	@EnableAutoConfiguration
	@EnableKafka
	@Import(Copier.class)
	static class App {

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

		/** Every value the listener copied, by deliveries whose transaction aborted too. */
		static final List<String> sent = Collections.synchronizedList(new ArrayList<>());

		/** Checked exceptions thrown. */
		static final AtomicInteger thrown = new AtomicInteger();

		private final ClusterTransactionalTemplate<String, String> west;

		private final String out;

		Copier(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				@Value("${test.topic}") String topic) {
			this.west = west;
			this.out = topic + "-out";
		}

		@KafkaListener(id = "checked", topics = "${test.topic}", groupId = "${test.topic}",
				containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void copy(ConsumerRecord<String, String> record) throws IOException {
			this.west.send(new ProducerRecord<>(this.out, record.partition(), record.key(), record.value()));
			sent.add(record.value());
			int index = Integer.parseInt(record.value().substring(1));
			if (index % 10 == 9) {
				boolean first = Collections.frequency(sent, record.value()) == 1;
				if (first) {
					// larger than the producer's max.request.size: the send fails, so does the commit
					this.west.send(new ProducerRecord<>(this.out, "too-large", "x".repeat(2 * 1024 * 1024)));
				}
				thrown.incrementAndGet();
				throw new IOException("Listener throws a checked exception on " + record.value()
						+ (first ? " (its commit fails)" : " (its commit succeeds)"));
			}
		}

	}

}
