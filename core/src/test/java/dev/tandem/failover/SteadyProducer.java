package dev.tandem.failover;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A producer that sends the numbers 0, 1, 2, ... to one partition from its own thread, with
 * a few records in flight, until closed; keeps count of acknowledgements, failures and the
 * worst acknowledgement latency. No sleeps: the next send waits for an acknowledgement
 * permit.
 */
final class SteadyProducer implements AutoCloseable {

	private static final int IN_FLIGHT = 4;

	private final KafkaProducer<String, String> producer;

	private final LeaderCache cache;

	private final TopicPartition partition;

	private final Semaphore permits = new Semaphore(IN_FLIGHT);

	private final AtomicLong sent = new AtomicLong();

	private final AtomicLong acknowledged = new AtomicLong();

	private final AtomicLong maxLatencyNanos = new AtomicLong();

	private final ConcurrentLinkedQueue<Exception> failures = new ConcurrentLinkedQueue<>();

	private final AtomicLong firstFailureMs = new AtomicLong(-1);

	private final Thread thread;

	private volatile boolean running = true;

	private volatile boolean closed;

	SteadyProducer(LeaderCacheRegistry registry, String cluster, Map<String, Object> properties,
			TopicPartition partition) {
		this.producer = new KafkaProducer<>(registry.instrument(cluster, ClientType.PRODUCER, properties),
				new StringSerializer(), new StringSerializer());
		this.cache = registry.bind(cluster, this.producer);
		this.partition = partition;
		this.thread = new Thread(this::run, "steady-producer-" + partition);
		this.thread.setDaemon(true);
		this.thread.start();
	}

	private void run() {
		try {
			while (this.running) {
				if (!this.permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
					continue;
				}
				long number = this.sent.getAndIncrement();
				long started = System.nanoTime();
				this.producer.send(new ProducerRecord<>(this.partition.topic(), this.partition.partition(), null,
						Long.toString(number)), (metadata, exception) -> {
							long latency = System.nanoTime() - started;
							this.maxLatencyNanos.accumulateAndGet(latency, Math::max);
							if (exception != null) {
								this.firstFailureMs.compareAndSet(-1, System.currentTimeMillis());
								this.failures.add(exception);
							}
							else {
								this.acknowledged.incrementAndGet();
							}
							this.permits.release();
						});
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	LeaderCache cache() {
		return this.cache;
	}

	long acknowledged() {
		return this.acknowledged.get();
	}

	long sent() {
		return this.sent.get();
	}

	List<Exception> failures() {
		return List.copyOf(this.failures);
	}

	/**
	 * Return when the first record failed, in ms since the epoch, or -1.
	 */
	long firstFailureMs() {
		return this.firstFailureMs.get();
	}

	/**
	 * Forget the worst latency seen so far, to measure a later phase on its own.
	 */
	void resetMaxLatency() {
		this.maxLatencyNanos.set(0);
	}

	Duration maxLatency() {
		return Duration.ofNanos(this.maxLatencyNanos.get());
	}

	/**
	 * Stop sending and wait until every record sent is acknowledged or failed.
	 */
	void stop() throws InterruptedException {
		this.running = false;
		this.thread.join(10_000);
		this.producer.flush();
	}

	/**
	 * Stop sending and close without waiting for records still queued (they fail).
	 */
	void closeNow() throws InterruptedException {
		this.closed = true;
		this.running = false;
		this.thread.join(10_000);
		this.producer.close(Duration.ZERO);
	}

	@Override
	public void close() throws InterruptedException {
		if (this.closed) {
			return;
		}
		this.closed = true;
		stop();
		this.producer.close(Duration.ofSeconds(5));
	}

}
