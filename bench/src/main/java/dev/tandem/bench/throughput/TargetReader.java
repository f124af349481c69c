package dev.tandem.bench.throughput;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;

/**
 * The target's reader: a {@code read_committed} consumer on its own thread, assigned every
 * partition of the target topic from the beginning, that sees each record when it becomes
 * visible to {@code read_committed} readers. Per record it takes the record's id from its key
 * (a decimal number: {@code 0 .. backlog-1} for the backlog, {@code backlog ..} for the live
 * records) and keeps which ids it saw (exact count, duplicates, unknown ids); for a live record
 * it records the end-to-end latency, now minus the record's timestamp (the copies carry the
 * source record's append time, {@code LogAppendTime} on the source topic; one JVM, one clock),
 * in an HdrHistogram in milliseconds.
 *
 * @since 0.1.0
 */
final class TargetReader implements AutoCloseable {

	private final String topic;

	private final int partitions;

	private final int backlog;

	private final int live;

	private final Map<String, Object> config;

	private final BitSet seen;

	private final Histogram latencyMs = new Histogram(3_600_000L, 3);

	private final CountDownLatch backlogSeen = new CountDownLatch(1);

	private final CountDownLatch liveSeen = new CountDownLatch(1);

	private final CountDownLatch drained = new CountDownLatch(1);

	private volatile boolean running = true;

	private volatile boolean drain;

	private volatile long backlogSeenNanos;

	private volatile long backlogSeenCpuNanos;

	private volatile long total;

	private volatile long distinct;

	private volatile long unknown;

	private volatile @Nullable Throwable failure;

	private final Thread thread;

	TargetReader(String bootstrapServers, String topic, int partitions, int backlog, int live) {
		this.topic = topic;
		this.partitions = partitions;
		this.backlog = backlog;
		this.live = live;
		this.seen = new BitSet(backlog + live);
		this.config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
				ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
				"false", ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "20", ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000",
				ConsumerConfig.CLIENT_ID_CONFIG, "reader-" + topic);
		this.thread = new Thread(this::run, "reader-" + topic);
		this.thread.setDaemon(true);
	}

	TargetReader start() {
		this.thread.start();
		return this;
	}

	private void run() {
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(this.config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			List<TopicPartition> assigned = new ArrayList<>();
			for (int p = 0; p < this.partitions; p++) {
				assigned.add(new TopicPartition(this.topic, p));
			}
			consumer.assign(assigned);
			consumer.seekToBeginning(assigned);
			long backlogDistinct = 0;
			long liveDistinct = 0;
			while (this.running) {
				ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(20));
				long now = System.currentTimeMillis();
				for (ConsumerRecord<byte[], byte[]> record : records) {
					this.total++;
					int id = id(record.key());
					if (id < 0 || id >= this.backlog + this.live) {
						this.unknown++;
						continue;
					}
					if (this.seen.get(id)) {
						continue;
					}
					this.seen.set(id);
					this.distinct++;
					if (id < this.backlog) {
						backlogDistinct++;
					}
					else {
						liveDistinct++;
						this.latencyMs.recordValue(Math.max(0, now - record.timestamp()));
					}
				}
				if (backlogDistinct == this.backlog && this.backlogSeen.getCount() > 0) {
					this.backlogSeenNanos = System.nanoTime();
					this.backlogSeenCpuNanos = CopyProbe.processCpuNanos();
					this.backlogSeen.countDown();
				}
				if (liveDistinct == this.live) {
					this.liveSeen.countDown();
				}
				if (this.drain && atEnd(consumer, assigned)) {
					this.drained.countDown();
					return;
				}
			}
		}
		catch (Throwable ex) {
			this.failure = ex;
		}
		finally {
			this.backlogSeen.countDown();
			this.liveSeen.countDown();
			this.drained.countDown();
		}
	}

	/**
	 * Whether the reader's position is at the last stable offset of every partition (a
	 * {@code read_committed} consumer's end offsets), so every committed copy has been read.
	 */
	private static boolean atEnd(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> assigned) {
		Map<TopicPartition, Long> end = consumer.endOffsets(assigned);
		for (TopicPartition partition : assigned) {
			if (consumer.position(partition) < end.get(partition)) {
				return false;
			}
		}
		return true;
	}

	private static int id(byte[] key) {
		if (key == null || key.length == 0 || key.length > 9) {
			return -1;
		}
		int id = 0;
		for (byte b : key) {
			if (b < '0' || b > '9') {
				return -1;
			}
			id = id * 10 + (b - '0');
		}
		return id;
	}

	/**
	 * Waits until every backlog id was read.
	 * @return whether it happened within the timeout
	 */
	boolean awaitBacklog(Duration timeout) throws InterruptedException {
		return this.backlogSeen.await(timeout.toMillis(), TimeUnit.MILLISECONDS) && this.failure == null
				&& this.backlogSeenNanos != 0;
	}

	/**
	 * Waits until every live id was read.
	 * @return whether it happened within the timeout
	 */
	boolean awaitLive(Duration timeout) throws InterruptedException {
		return this.liveSeen.await(timeout.toMillis(), TimeUnit.MILLISECONDS) && this.failure == null;
	}

	/**
	 * Reads on until the position is at the end of every partition, then stops.
	 * @return whether that happened within the timeout
	 */
	boolean drain(Duration timeout) throws InterruptedException {
		this.drain = true;
		boolean done = this.drained.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
		close();
		return done && this.failure == null;
	}

	long backlogSeenNanos() {
		return this.backlogSeenNanos;
	}

	long backlogSeenCpuNanos() {
		return this.backlogSeenCpuNanos;
	}

	/** Records read, duplicates included. */
	long total() {
		return this.total;
	}

	/** Distinct known ids read. */
	long distinct() {
		return this.distinct;
	}

	/** Records whose key is not an expected id. */
	long unknown() {
		return this.unknown;
	}

	@Nullable Throwable failure() {
		return this.failure;
	}

	/** Latencies of the live records, in ms; read after {@link #close()}. */
	Histogram latencyMs() {
		return this.latencyMs;
	}

	@Override
	public void close() throws InterruptedException {
		this.running = false;
		this.thread.join(30_000);
	}

}
