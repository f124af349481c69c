package dev.tandem.bench;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads every partition of the topic from its end (no group) and logs each record's
 * end-to-end delay: poll time minus the record's create timestamp. A fetch pause after a
 * leader change shows up as a burst of late records; the consumers of both client
 * configurations read the same records, so their numbers pair up.
 *
 * @author Tandem
 * @since 0.1.0
 */
final class ConsumerLoop implements AutoCloseable {

	private final KafkaConsumer<String, String> consumer;

	private final Thread thread;

	private final LatencyLog log;

	private volatile boolean running = true;

	ConsumerLoop(String name, Map<String, Object> properties, String topic, int partitions, LatencyLog log) {
		this.consumer = new KafkaConsumer<>(properties, new StringDeserializer(), new StringDeserializer());
		this.log = log;
		List<TopicPartition> assignment = new java.util.ArrayList<>();
		for (int i = 0; i < partitions; i++) {
			assignment.add(new TopicPartition(topic, i));
		}
		this.consumer.assign(assignment);
		this.consumer.seekToEnd(assignment);
		this.thread = new Thread(this::run, "bench-consumer-" + name);
		this.thread.setDaemon(true);
		this.thread.start();
	}

	private void run() {
		try {
			while (this.running) {
				for (ConsumerRecord<String, String> record : this.consumer.poll(Duration.ofMillis(200))) {
					long now = System.currentTimeMillis();
					this.log.add(record.timestamp(), Math.max(0, now - record.timestamp()) * 1000, false);
				}
			}
		}
		catch (WakeupException ex) {
			// closing
		}
		finally {
			this.consumer.close(Duration.ofSeconds(5));
		}
	}

	@Override
	public void close() throws InterruptedException {
		this.running = false;
		this.consumer.wakeup();
		this.thread.join(10_000);
	}

}
