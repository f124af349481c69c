package dev.tandem.bench;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Sends flight records at a steady rate, round-robin over the partitions of a topic, and logs
 * every record's latency. Uses only kafka-clients API that exists in 3.6 and 4.x, so the same
 * class runs in the legacy producer JVM.
 *
 * @author Tandem
 * @since 0.1.0
 */
final class ProducerLoop implements AutoCloseable {

	private final KafkaProducer<String, String> producer;

	private final String topic;

	private final int partitions;

	private final int ratePerSecond;

	private final FlightRecords records;

	private final Sink sink;

	private final Thread thread;

	private volatile boolean running = true;

	ProducerLoop(String name, Map<String, Object> properties, String topic, int partitions, int ratePerSecond,
			FlightRecords records, Sink sink) {
		this.producer = new KafkaProducer<>(properties, new StringSerializer(), new StringSerializer());
		this.topic = topic;
		this.partitions = partitions;
		this.ratePerSecond = ratePerSecond;
		this.records = records;
		this.sink = sink;
		this.thread = new Thread(this::run, "bench-producer-" + name);
		this.thread.setDaemon(true);
	}

	KafkaProducer<String, String> producer() {
		return this.producer;
	}

	ProducerLoop start() {
		this.thread.start();
		return this;
	}

	private void run() {
		long periodNanos = 1_000_000_000L / this.ratePerSecond;
		long next = System.nanoTime();
		long n = 0;
		while (this.running) {
			long wait = next - System.nanoTime();
			if (wait > 0) {
				LockSupport.parkNanos(wait);
				continue;
			}
			long sentAtMs = System.currentTimeMillis();
			long started = System.nanoTime();
			int partition = (int) (n % this.partitions);
			try {
				this.producer.send(new ProducerRecord<>(this.topic, partition, Long.toString(n), this.records.value(n)),
						(metadata, exception) -> this.sink.record(sentAtMs, (System.nanoTime() - started) / 1000,
								exception != null));
			}
			catch (RuntimeException ex) {
				this.sink.record(sentAtMs, (System.nanoTime() - started) / 1000, true);
			}
			n++;
			next += periodNanos;
		}
	}

	/**
	 * Stop sending, wait for every outstanding acknowledgement and close the producer.
	 */
	@Override
	public void close() throws InterruptedException {
		this.running = false;
		this.thread.join(10_000);
		this.producer.flush();
		this.producer.close(Duration.ofSeconds(10));
	}

	/**
	 * Where latencies go.
	 */
	@FunctionalInterface
	interface Sink {

		void record(long sentAtMs, long latencyMicros, boolean failed);

	}

}
