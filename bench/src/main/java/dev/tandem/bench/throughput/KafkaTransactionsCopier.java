package dev.tandem.bench.throughput;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * Contender (b): Kafka's own exactly-once on one cluster, the classic consume-transform-produce
 * loop (KIP-98, KIP-447): a {@code read_committed} consumer and a transactional producer on the
 * same cluster; per poll: {@code beginTransaction()}, send every record,
 * {@code sendOffsetsToTransaction(offsets, consumer.groupMetadata())},
 * {@code commitTransaction()}. The target topic is on the source cluster (Kafka cannot span two).
 *
 * @since 0.1.0
 */
final class KafkaTransactionsCopier extends LoopCopier {

	private final Copier.Route route;

	private final ClientSettings settings;

	private final String bootstrap;

	private final String transactionalId;

	private @Nullable KafkaConsumer<byte[], byte[]> consumer;

	private @Nullable KafkaProducer<byte[], byte[]> producer;

	private TransactionTimes times = TransactionTimes.NONE;

	KafkaTransactionsCopier(String name, Copier.Route route, ClientSettings settings, String bootstrap) {
		super(name);
		this.route = route;
		this.settings = settings;
		this.bootstrap = bootstrap;
		this.transactionalId = "tbench-eos-" + route.groupId();
	}

	@Override
	void open(CopyProbe probe) {
		Map<String, Object> consumerConfig = this.settings.consumer(this.bootstrap, this.route.groupId());
		consumerConfig.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		this.consumer = new KafkaConsumer<>(consumerConfig, new ByteArrayDeserializer(), new ByteArrayDeserializer());
		Map<String, Object> producerConfig = this.settings.producer(this.bootstrap);
		producerConfig.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, this.transactionalId);
		this.producer = new KafkaProducer<>(producerConfig, new ByteArraySerializer(), new ByteArraySerializer());
		this.producer.initTransactions();
		this.consumer.subscribe(this.route.sourceTopics());
	}

	@Override
	void step(CopyProbe probe) {
		KafkaConsumer<byte[], byte[]> consumer = Objects.requireNonNull(this.consumer);
		KafkaProducer<byte[], byte[]> producer = Objects.requireNonNull(this.producer);
		ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL_TIMEOUT);
		if (records.isEmpty()) {
			return;
		}
		probe.polled();
		producer.beginTransaction();
		try {
			for (ConsumerRecord<byte[], byte[]> record : records) {
				producer.send(Copier.copyOf(record, this.route.targetTopic()));
			}
			producer.sendOffsetsToTransaction(nextOffsets(records), consumer.groupMetadata());
			producer.commitTransaction();
		}
		catch (KafkaException ex) {
			producer.abortTransaction();
			throw ex;
		}
		probe.completed();
	}

	@Override
	void finish() {
		if (this.producer != null) {
			this.times = TransactionTimes.of(List.of(this.producer));
			this.producer.close();
		}
		if (this.consumer != null) {
			this.consumer.close();
		}
	}

	@Override
	public Map<String, TransactionTimes> transactionTimes() {
		return Map.of(this.route.targetCluster(), this.times);
	}

}
