package dev.tandem.transaction;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.ClusterClients;
import dev.tandem.text.DurationText;

/**
 * Refuses a second running instance with the same instance id when the instances do not share a
 * decision log (the embedded coordinator: each instance has its own, so the lease in the log
 * cannot see the other one). Each instance writes a heartbeat ({@code incarnation,expiresAtMs},
 * key = owner id) to a compacted topic on the first cluster every third of the lease timeout, and
 * a tombstone at a clean close. Start-up, on the topic's one partition (one total order):
 * <ol>
 * <li>read to the end; a heartbeat of another run that has not expired is watched until it
 * expires (a run that died; a restart after a crash waits at most one lease timeout and a third);
 * <li>write a first heartbeat, the claim;
 * <li>read past the claim: a heartbeat of another run read after step 1 and written before the
 * claim (a run that is alive: a dead one writes nothing) refuses this start with
 * {@link DuplicateInstanceException}.
 * </ol>
 * Of two instances started at the same moment, the one whose claim comes second sees the other's
 * claim before its own and is refused; the first sees nothing before its claim and runs. While
 * running, an instance that reads two heartbeats of one other run (a run that renews: alive, and
 * not refused, which writes only its claim) marks itself a duplicate and begins no transaction.
 * <p>
 * Thread-safe: one daemon thread heartbeats and reads the topic after {@link #acquire()}.
 */
final class KafkaInstanceGuard implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(KafkaInstanceGuard.class);

	/** The topic's default name. */
	static final String DEFAULT_TOPIC = "tandem-instances";

	private final ClusterClients clients;

	private final String cluster;

	private final String topic;

	private final String owner;

	private final String incarnation;

	private final Duration leaseTimeout;

	private final Duration timeout;

	private final LongSupplier clock;

	private final TopicPartition partition;

	private final ScheduledExecutorService scheduler;

	private @Nullable KafkaProducer<String, String> producer;

	private @Nullable KafkaConsumer<byte[], byte[]> consumer;

	private volatile @Nullable String duplicate;

	/** The latest heartbeat of this owner read (any run); guarded by this. */
	private @Nullable Heartbeat latest;

	/**
	 * Expiry of the latest heartbeat read of each other run of this owner written after this
	 * run's claim, by incarnation; guarded by this.
	 */
	private final Map<String, Long> othersAfterClaim = new HashMap<>();

	private volatile boolean started;

	KafkaInstanceGuard(ClusterClients clients, String cluster, String topic, String owner, String incarnation,
			Duration leaseTimeout, Duration timeout, LongSupplier clock) {
		this.clients = clients;
		this.cluster = cluster;
		this.topic = topic;
		this.owner = owner;
		this.incarnation = incarnation;
		this.leaseTimeout = leaseTimeout;
		this.timeout = timeout;
		this.clock = clock;
		this.partition = new TopicPartition(topic, 0);
		this.scheduler = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "tandem-instance-guard-" + owner);
			thread.setDaemon(true);
			return thread;
		});
	}

	/** A heartbeat: which run of the owner wrote it, and until when it holds the id. */
	private record Heartbeat(String incarnation, long expiresAtMs) {

		static @Nullable Heartbeat parse(byte @Nullable [] value) {
			if (value == null) {
				return null;
			}
			String text = new String(value, StandardCharsets.UTF_8);
			int comma = text.lastIndexOf(',');
			try {
				return new Heartbeat(text.substring(0, comma), Long.parseLong(text.substring(comma + 1)));
			}
			catch (RuntimeException ex) {
				return null; // not one of ours
			}
		}

	}

	/** A heartbeat of this owner read, at its offset. */
	private record Read(long offset, Heartbeat heartbeat) {
	}

	/**
	 * Makes sure no other running instance holds this id, then heartbeats in the background.
	 * @throws DuplicateInstanceException if another run renews its heartbeat while this one waits,
	 *     or claimed the id while this one started
	 * @throws TandemException if the cluster cannot be reached, or the wait is interrupted
	 */
	synchronized void acquire() {
		ControlTopics.ensureInstanceTopic(this.clients, this.cluster, this.topic, this.timeout);
		KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(this.clients.readerConfig(this.cluster),
				new ByteArrayDeserializer(), new ByteArrayDeserializer());
		this.consumer = reader;
		reader.assign(List.of(this.partition));
		reader.seekToBeginning(List.of(this.partition));
		readToEnd(reader);
		Heartbeat other = this.latest;
		if (other != null && !other.incarnation().equals(this.incarnation)
				&& other.expiresAtMs() >= this.clock.getAsLong()) {
			logger.info("Instance id of {} has a heartbeat of another run (incarnation {}) until {}; waiting to see "
					+ "whether it is renewed (a running instance) or expires (a run that died)", this.owner,
					other.incarnation(), Instant.ofEpochMilli(other.expiresAtMs()));
			long deadline = other.expiresAtMs() + this.leaseTimeout.dividedBy(3).toMillis();
			while (this.clock.getAsLong() < deadline) {
				sleep(Math.min(200, Math.max(1, deadline - this.clock.getAsLong())));
				for (Read read : readToEnd(reader)) {
					if (!read.heartbeat().incarnation().equals(this.incarnation)) {
						// a dead run writes nothing: any heartbeat written while this one waits is of a live run
						throw refused(read.heartbeat(), "was renewed while this one waited");
					}
				}
				if (this.latest == null) {
					break; // a tombstone: the other run closed cleanly
				}
			}
		}
		Map<String, Object> config = new HashMap<>(this.clients.producerConfig(this.cluster));
		config.keySet().removeIf((key) -> key.startsWith(ClusterClients.TANDEM_CONFIG_PREFIX));
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, this.timeout.toMillis());
		config.remove(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG);
		this.producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
		long claim = heartbeat();
		for (Read read : readToEnd(reader)) {
			Heartbeat heartbeat = read.heartbeat();
			if (heartbeat.incarnation().equals(this.incarnation)) {
				continue;
			}
			if (read.offset() < claim) {
				throw refused(heartbeat, "was written while this one started, before its claim at offset " + claim);
			}
			this.othersAfterClaim.merge(heartbeat.incarnation(), heartbeat.expiresAtMs(), Math::max);
		}
		this.started = true;
		long period = this.leaseTimeout.dividedBy(3).toMillis();
		this.scheduler.scheduleWithFixedDelay(this::tick, period, period, TimeUnit.MILLISECONDS);
	}

	/** Closes the clients without a tombstone (the key's latest value may be the other run's) and says why. */
	private DuplicateInstanceException refused(Heartbeat other, String when) {
		this.scheduler.shutdownNow();
		closeClients(false);
		return new DuplicateInstanceException(this.owner, "Instance id of " + this.owner + " is in use by a running "
				+ "instance: its heartbeat on topic '" + this.topic + "' of cluster '" + this.cluster + "' " + when
				+ " (incarnation " + other.incarnation() + "). Every running instance needs its own instance id.");
	}

	/**
	 * Reads the topic from the reader's position to its end, keeping {@link #latest} up to date.
	 * @return the heartbeats of this owner read (any run), in offset order
	 */
	private List<Read> readToEnd(KafkaConsumer<byte[], byte[]> reader) {
		List<Read> reads = new ArrayList<>();
		long end = reader.endOffsets(List.of(this.partition), this.timeout).get(this.partition);
		long deadline = System.nanoTime() + this.timeout.toNanos();
		while (reader.position(this.partition, this.timeout) < end) {
			if (System.nanoTime() > deadline) {
				throw new TandemException("Could not read topic '" + this.topic + "' of cluster '" + this.cluster
						+ "' within " + DurationText.of(this.timeout));
			}
			for (ConsumerRecord<byte[], byte[]> record : reader.poll(Duration.ofMillis(100))) {
				if (record.key() != null && this.owner.equals(new String(record.key(), StandardCharsets.UTF_8))) {
					Heartbeat heartbeat = Heartbeat.parse(record.value());
					this.latest = heartbeat;
					if (heartbeat != null) {
						reads.add(new Read(record.offset(), heartbeat));
					}
				}
			}
		}
		return reads;
	}

	private synchronized void tick() {
		try {
			heartbeat();
			KafkaConsumer<byte[], byte[]> reader = this.consumer;
			if (reader != null && this.duplicate == null) {
				Heartbeat other = null;
				for (Read read : readToEnd(reader)) {
					Heartbeat heartbeat = read.heartbeat();
					if (heartbeat.incarnation().equals(this.incarnation)) {
						continue;
					}
					// a start-up refused after its claim writes one heartbeat; a running instance renews it
					Long previous = this.othersAfterClaim.put(heartbeat.incarnation(), heartbeat.expiresAtMs());
					if (previous != null && heartbeat.expiresAtMs() > previous) {
						other = heartbeat;
					}
				}
				if (other != null) {
					this.duplicate = other.incarnation();
					logger.error("Another running instance uses the instance id of {} (incarnation {}): two running "
							+ "instances with one id fence each other's producers. This instance begins no transaction "
							+ "any more; give every instance its own tandem.transaction.instance-id", this.owner,
							other.incarnation());
				}
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Instance heartbeat of {} failed, retrying in {}: {}", this.owner,
					DurationText.of(this.leaseTimeout.dividedBy(3)),
					ex.toString());
		}
	}

	/** Writes a heartbeat and returns its offset, or -1 when closed. */
	private long heartbeat() {
		KafkaProducer<String, String> p = this.producer;
		if (p == null) {
			return -1;
		}
		long expiresAtMs = this.clock.getAsLong() + this.leaseTimeout.toMillis();
		try {
			return p.send(new ProducerRecord<>(this.topic, 0, this.owner, this.incarnation + "," + expiresAtMs))
				.get(this.timeout.toMillis(), TimeUnit.MILLISECONDS)
				.offset();
		}
		catch (Exception ex) {
			throw new TandemException("Could not write the instance heartbeat of " + this.owner + ": " + ex, ex);
		}
	}

	/** Returns the incarnation of another running instance with this id, once one was seen. */
	@Nullable String duplicateOf() {
		return this.duplicate;
	}

	/** Stops heartbeating without a tombstone (as a crashed process would). */
	void abandon() {
		this.scheduler.shutdownNow();
		closeClients(false);
	}

	/** Stops heartbeating and writes a tombstone, so that a restart need not wait. */
	@Override
	public void close() {
		this.scheduler.shutdownNow();
		closeClients(this.started && this.duplicate == null);
	}

	private synchronized void closeClients(boolean tombstone) {
		KafkaProducer<String, String> p = this.producer;
		this.producer = null;
		if (p != null) {
			if (tombstone) {
				try {
					p.send(new ProducerRecord<>(this.topic, 0, this.owner, null)).get(this.timeout.toMillis(),
							TimeUnit.MILLISECONDS);
				}
				catch (Exception ex) {
					logger.warn("Could not write the instance tombstone of {} (a restart waits for its heartbeat to "
							+ "expire): {}", this.owner, ex.toString());
				}
			}
			p.close(Duration.ofSeconds(1));
		}
		KafkaConsumer<byte[], byte[]> c = this.consumer;
		this.consumer = null;
		if (c != null) {
			c.close(Duration.ZERO);
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted while waiting for the instance heartbeat", ex);
		}
	}

}
