package dev.tandem.bench.mirror;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import dev.tandem.bench.FlightRecords;
import dev.tandem.bench.RegionClusters;

/**
 * What happens on the source cluster during a run: the flight records produced (a backlog as
 * fast as the producer goes, then a paced live phase) and the consumer groups that consume part
 * of them and commit, as applications on the source would before a failover.
 */
final class SourceTraffic {

	private final RegionClusters.Cluster source;

	private final String topic;

	private final SourceLog log;

	private final FlightRecords flights;

	SourceTraffic(RegionClusters.Cluster source, String topic, SourceLog log, FlightRecords flights) {
		this.source = source;
		this.topic = topic;
		this.log = log;
		this.flights = flights;
	}

	/**
	 * Sends records {@code from} (inclusive) to {@code to} (exclusive), {@code rate} per second
	 * (0: as fast as possible), and waits until all are acknowledged.
	 * @throws KafkaException if a send failed
	 */
	void produce(long from, long to, int rate) throws InterruptedException {
		Map<String, Object> config = this.source.clientProperties();
		config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
		config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
		config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
		config.put(ProducerConfig.CLIENT_ID_CONFIG, "mirror-bench-source");
		AtomicReference<Exception> failure = new AtomicReference<>();
		long start = System.nanoTime();
		try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
			for (long id = from; id < to; id++) {
				if (rate > 0) {
					long due = start + (long) ((id - from) * (1e9 / rate));
					long wait = due - System.nanoTime();
					if (wait > 0) {
						LockSupport.parkNanos(wait);
					}
				}
				long recordId = id;
				producer.send(new ProducerRecord<>(this.topic, this.log.partition(id), SourceLog.key(id),
						this.flights.value(id).getBytes(StandardCharsets.UTF_8)), (metadata, exception) -> {
							if (exception != null) {
								failure.compareAndSet(null, exception);
							}
							else {
								this.log.offset(recordId, metadata.offset());
							}
						});
				if (Thread.interrupted()) {
					throw new InterruptedException();
				}
			}
			producer.flush();
		}
		if (failure.get() != null) {
			throw new KafkaException("Producing to " + this.topic + " failed", failure.get());
		}
	}

	/**
	 * Consumes the topic as consumer group {@code group} up to {@code fraction} of what each
	 * partition holds after the first {@code records} ids (1.0: everything), then commits exactly
	 * that position, as an application that processed those records would.
	 * @return the committed source offset of every partition
	 */
	Map<TopicPartition, Long> consumeAndCommit(String group, long records, double fraction) {
		Map<String, Object> config = this.source.clientProperties();
		config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
		config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
		config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
		Map<TopicPartition, Long> stopAt = new HashMap<>();
		List<TopicPartition> partitions = new ArrayList<>();
		for (int p = 0; p < this.log.partitions(); p++) {
			TopicPartition partition = new TopicPartition(this.topic, p);
			partitions.add(partition);
			stopAt.put(partition, (long) Math.floor(this.log.count(p, records) * fraction));
		}
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
			consumer.assign(partitions);
			Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(stopAt.keySet());
			Map<TopicPartition, Long> positions = new HashMap<>();
			for (TopicPartition partition : partitions) {
				OffsetAndMetadata previous = committed.get(partition);
				long position = (previous != null) ? previous.offset() : 0;
				consumer.seek(partition, position);
				positions.put(partition, position);
			}
			long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
			while (positions.entrySet().stream().anyMatch((e) -> e.getValue() < stopAt.get(e.getKey()))) {
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("Group " + group + " could not consume " + this.topic + " to "
							+ stopAt + " in 2 minutes; at " + positions);
				}
				for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
					TopicPartition partition = new TopicPartition(record.topic(), record.partition());
					if (record.offset() < stopAt.get(partition)) {
						positions.put(partition, record.offset() + 1);
					}
				}
				for (TopicPartition partition : partitions) {
					if (positions.get(partition) >= stopAt.get(partition)) {
						consumer.pause(List.of(partition));
					}
				}
			}
			Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
			stopAt.forEach((partition, offset) -> commit.put(partition, new OffsetAndMetadata(offset)));
			consumer.commitSync(commit);
		}
		return stopAt;
	}

}
