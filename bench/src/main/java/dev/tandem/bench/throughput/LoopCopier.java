package dev.tandem.bench.throughput;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * A copier whose loop runs on one thread of its own ("one copying thread") until closed.
 *
 * @since 0.1.0
 */
abstract class LoopCopier implements Copier {

	/** How long one poll waits for records. */
	static final Duration POLL_TIMEOUT = Duration.ofMillis(100);

	private final String name;

	private volatile boolean running = true;

	private volatile @Nullable Throwable failure;

	private @Nullable Thread thread;

	LoopCopier(String name) {
		this.name = name;
	}

	@Override
	public final void start(CopyProbe probe) throws Exception {
		CountDownLatch opened = new CountDownLatch(1);
		Thread loop = new Thread(() -> {
			try {
				open(probe);
				opened.countDown();
				while (this.running) {
					step(probe);
				}
			}
			catch (Throwable ex) {
				this.failure = ex;
			}
			finally {
				opened.countDown();
				try {
					finish();
				}
				catch (Throwable ex) {
					if (this.failure == null) {
						this.failure = ex;
					}
				}
			}
		}, "copier-" + this.name);
		loop.setDaemon(true);
		this.thread = loop;
		loop.start();
		opened.await();
		Throwable failed = this.failure;
		if (failed != null) {
			throw new IllegalStateException("Copier " + this.name + " could not start", failed);
		}
	}

	/**
	 * Creates the clients, on the copier's thread.
	 */
	abstract void open(CopyProbe probe) throws Exception;

	/**
	 * One poll and its copy, on the copier's thread.
	 */
	abstract void step(CopyProbe probe) throws Exception;

	/**
	 * Commits what is open (if the contender does so on shutdown) and closes the clients, on the
	 * copier's thread.
	 */
	abstract void finish() throws Exception;

	@Override
	public final void close() throws Exception {
		this.running = false;
		Thread loop = this.thread;
		if (loop != null) {
			loop.join(Duration.ofSeconds(60).toMillis());
			if (loop.isAlive()) {
				loop.interrupt();
				throw new IllegalStateException("Copier " + this.name + " did not stop within 60 s");
			}
		}
		Throwable failed = this.failure;
		if (failed instanceof Exception ex) {
			throw ex;
		}
		if (failed != null) {
			throw new IllegalStateException("Copier " + this.name + " failed", failed);
		}
	}

	/**
	 * Returns the next offsets to consume after a poll's records, per partition.
	 */
	static Map<TopicPartition, OffsetAndMetadata> nextOffsets(ConsumerRecords<?, ?> records) {
		Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
		for (TopicPartition partition : records.partitions()) {
			java.util.List<? extends ConsumerRecord<?, ?>> list = records.records(partition);
			next.put(partition, new OffsetAndMetadata(list.get(list.size() - 1).offset() + 1));
		}
		return next;
	}

}
