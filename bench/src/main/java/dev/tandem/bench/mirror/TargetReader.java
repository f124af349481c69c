package dev.tandem.bench.mirror;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;

import dev.tandem.bench.RegionClusters;

/**
 * A {@code read_committed} reader of the mirrored topic on the target, from its beginning, on
 * its own thread, started before the mirror: counts every record id it sees (distinct,
 * duplicated, not of this run), notes when the backlog became visible, and records the
 * end-to-end latency of the live records, and whether each partition's records come in their
 * source order: the time the reader got the record minus the record's
 * timestamp, which is the source's append time ({@code LogAppendTime} on the source topic, kept
 * by the mirror). Reader and producer are in one JVM, so both read the same clock. The reader
 * asks for data every 20 ms at most ({@code fetch.max.wait.ms=20}).
 */
final class TargetReader implements AutoCloseable {

	private final KafkaConsumer<byte[], byte[]> consumer;

	private final Thread thread;

	private final long backlog;

	private final long total;

	private final BitSet seen;

	private final Histogram latency = new Histogram(TimeUnit.MINUTES.toMillis(10), 3);

	private volatile long distinct;

	private volatile long backlogSeen;

	private volatile long duplicates;

	private volatile long foreign;

	private volatile long reordered;

	private final long[] lastSourceOffset;

	private final SourceLog log;

	private volatile long firstSeenNanos;

	private volatile long backlogDoneNanos;

	private volatile boolean running = true;

	private volatile @Nullable Throwable failure;

	TargetReader(RegionClusters.Cluster target, String remoteTopic, SourceLog log, long backlog, long total) {
		int partitions = log.partitions();
		this.log = log;
		this.lastSourceOffset = new long[partitions];
		java.util.Arrays.fill(this.lastSourceOffset, -1);
		this.backlog = backlog;
		this.total = total;
		this.seen = new BitSet((int) total);
		Map<String, Object> config = target.clientProperties();
		config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
		config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		config.put(ConsumerConfig.CLIENT_ID_CONFIG, "mirror-bench-target-reader");
		config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
		// a fetch parked on the broker answers within 20 ms instead of 500 (the default), so a record is
		// seen soon after it becomes visible, whoever wrote it
		config.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 20);
		this.consumer = new KafkaConsumer<>(config);
		List<TopicPartition> assigned = new ArrayList<>();
		for (int p = 0; p < partitions; p++) {
			assigned.add(new TopicPartition(remoteTopic, p));
		}
		this.consumer.assign(assigned);
		this.consumer.seekToBeginning(assigned);
		this.thread = new Thread(this::read, "mirror-bench-target-reader");
		this.thread.setDaemon(true);
		this.thread.start();
	}

	private void read() {
		try {
			while (this.running) {
				var records = this.consumer.poll(Duration.ofMillis(100));
				if (records.isEmpty()) {
					continue;
				}
				long nowMillis = System.currentTimeMillis();
				long nowNanos = System.nanoTime();
				if (this.firstSeenNanos == 0) {
					this.firstSeenNanos = nowNanos;
				}
				long distinct = this.distinct;
				long backlogSeen = this.backlogSeen;
				for (ConsumerRecord<byte[], byte[]> record : records) {
					long id = SourceLog.id(record.key());
					if (id < 0 || id >= this.total) {
						this.foreign++;
					}
					else if (this.seen.get((int) id)) {
						this.duplicates++;
					}
					else {
						long sourceOffset = this.log.offset(id);
						if (sourceOffset >= 0 && record.partition() < this.lastSourceOffset.length) {
							if (sourceOffset < this.lastSourceOffset[record.partition()]) {
								this.reordered++;
							}
							this.lastSourceOffset[record.partition()] = Math.max(sourceOffset,
									this.lastSourceOffset[record.partition()]);
						}
						this.seen.set((int) id);
						distinct++;
						if (id < this.backlog) {
							backlogSeen++;
						}
						else {
							this.latency.recordValue(Math.min(this.latency.getHighestTrackableValue(),
									Math.max(0, nowMillis - record.timestamp())));
						}
					}
				}
				this.distinct = distinct;
				this.backlogSeen = backlogSeen;
				if (backlogSeen == this.backlog && this.backlogDoneNanos == 0) {
					this.backlogDoneNanos = nowNanos;
				}
			}
		}
		catch (WakeupException ex) {
			// closing
		}
		catch (Throwable ex) {
			this.failure = ex;
		}
		finally {
			this.consumer.close(Duration.ofSeconds(5));
		}
	}

	/**
	 * Waits until the reader has seen {@code count} distinct records.
	 * @param mirrorFailure returns why the mirror stopped, or null while it runs
	 * @throws IllegalStateException if the reader or the mirror failed, or on timeout
	 */
	void await(long count, Duration timeout, Supplier<@Nullable String> mirrorFailure) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (this.distinct < count) {
			Throwable failure = this.failure;
			if (failure != null) {
				throw new IllegalStateException("The target reader failed", failure);
			}
			String stopped = mirrorFailure.get();
			if (stopped != null) {
				throw new IllegalStateException(stopped + "; " + this.distinct + " of " + count + " records mirrored");
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Only " + this.distinct + " of " + count + " records visible on the target after "
						+ timeout.toSeconds() + " s");
			}
			Thread.sleep(20);
		}
	}

	long distinct() {
		return this.distinct;
	}

	long firstSeenNanos() {
		return this.firstSeenNanos;
	}

	long backlogDoneNanos() {
		return this.backlogDoneNanos;
	}

	/**
	 * Stops the reader after a last quiet second (so that late duplicates are counted) and
	 * returns what it saw.
	 */
	Tally finish() throws InterruptedException {
		long quietSince = System.nanoTime();
		long last = this.distinct + this.duplicates + this.foreign;
		while (System.nanoTime() - quietSince < TimeUnit.SECONDS.toNanos(1)) {
			Thread.sleep(100);
			long now = this.distinct + this.duplicates + this.foreign;
			if (now != last) {
				last = now;
				quietSince = System.nanoTime();
			}
		}
		close();
		return new Tally(this.distinct, this.duplicates, this.foreign, this.total - this.distinct, this.reordered,
				this.latency.copy());
	}

	@Override
	public void close() throws InterruptedException {
		this.running = false;
		this.consumer.wakeup();
		this.thread.join(10_000);
	}

	/**
	 * What the reader saw: distinct record ids, duplicated ones, records not of this run,
	 * ids never seen, records that came before a record of a lower source offset in the same
	 * partition (the target's order differs from the source's), and the live records' latency
	 * in milliseconds.
	 */
	record Tally(long distinct, long duplicates, long foreign, long missing, long reordered, Histogram latency) {

		boolean exact() {
			return this.duplicates == 0 && this.foreign == 0 && this.missing == 0;
		}

	}

}
