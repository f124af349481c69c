package dev.tandem.bench.database;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;

/**
 * A {@code read_committed} reader per cluster over every contender's topic, from the beginning:
 * counts each id's records per cluster and notes when each id first became readable on each.
 * One thread per cluster; the maps are read by the bench thread.
 */
final class Readers implements AutoCloseable {

	/** Per cluster: id to how many records with that key were read. */
	private final Map<String, Map<String, Integer>> counts = new ConcurrentHashMap<>();

	/** Per cluster: id to {@code System.nanoTime()} when its first record was read. */
	private final Map<String, Map<String, Long>> seen = new ConcurrentHashMap<>();

	private final List<Reader> readers = new ArrayList<>();

	Readers(Map<String, Map<String, Object>> clusters, List<String> topics) {
		clusters.forEach((cluster, config) -> {
			this.counts.put(cluster, new ConcurrentHashMap<>());
			this.seen.put(cluster, new ConcurrentHashMap<>());
			Reader reader = new Reader(cluster, config, topics);
			this.readers.add(reader);
			reader.thread.start();
		});
	}

	/** Returns how many records of {@code id} {@code cluster}'s reader has read. */
	int count(String cluster, String id) {
		return this.counts.get(cluster).getOrDefault(id, 0);
	}

	/** Returns every id read on {@code cluster}, with its count. */
	Map<String, Integer> counts(String cluster) {
		return this.counts.get(cluster);
	}

	/** Returns when {@code id} became readable on every cluster (the latest), or null if not yet on all. */
	@Nullable Long readableEverywhere(String id) {
		long latest = Long.MIN_VALUE;
		for (Map<String, Long> cluster : this.seen.values()) {
			Long at = cluster.get(id);
			if (at == null) {
				return null;
			}
			latest = Math.max(latest, at);
		}
		return latest;
	}

	/**
	 * Waits until every reader has read up to its partitions' last stable offsets as they are
	 * now.
	 * @throws TimeoutException if a reader did not get there within {@code timeout}
	 */
	void awaitCaughtUp(Duration timeout) throws TimeoutException, InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		List<Reader.Request> requests = new ArrayList<>();
		for (Reader reader : this.readers) {
			Reader.Request request = new Reader.Request();
			reader.requests.add(request);
			requests.add(request);
		}
		for (Reader.Request request : requests) {
			long left = deadline - System.nanoTime();
			synchronized (request) {
				while (!request.done && left > 0) {
					request.wait(Math.max(1, left / 1_000_000));
					left = deadline - System.nanoTime();
				}
				if (!request.done) {
					throw new TimeoutException("a reader did not reach the last stable offsets within " + timeout);
				}
			}
		}
	}

	@Override
	public void close() throws InterruptedException {
		for (Reader reader : this.readers) {
			reader.running = false;
		}
		for (Reader reader : this.readers) {
			reader.thread.join(10_000);
		}
	}

	private final class Reader {

		private final String cluster;

		private final KafkaConsumer<byte[], byte[]> consumer;

		private final Thread thread;

		private final List<Request> requests = new java.util.concurrent.CopyOnWriteArrayList<>();

		private volatile boolean running = true;

		Reader(String cluster, Map<String, Object> config, List<String> topics) {
			this.cluster = cluster;
			Map<String, Object> properties = new HashMap<>(config);
			properties.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
			properties.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
			properties.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10);
			properties.keySet().retainAll(ConsumerConfig.configNames());
			this.consumer = new KafkaConsumer<>(properties, new ByteArrayDeserializer(), new ByteArrayDeserializer());
			List<TopicPartition> partitions = new ArrayList<>();
			for (String topic : topics) {
				for (PartitionInfo info : this.consumer.partitionsFor(topic)) {
					partitions.add(new TopicPartition(topic, info.partition()));
				}
			}
			this.consumer.assign(partitions);
			this.consumer.seekToBeginning(partitions);
			this.thread = new Thread(this::read, "reader-" + cluster);
			this.thread.setDaemon(true);
		}

		private void read() {
			Map<String, Integer> counts = Readers.this.counts.get(this.cluster);
			Map<String, Long> seen = Readers.this.seen.get(this.cluster);
			try (KafkaConsumer<byte[], byte[]> consumer = this.consumer) {
				while (this.running) {
					for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(20))) {
						long now = System.nanoTime();
						String id = new String(record.key(), StandardCharsets.UTF_8);
						counts.merge(id, 1, Integer::sum);
						seen.putIfAbsent(id, now);
					}
					for (Request request : this.requests) {
						if (request.target == null) {
							request.target = consumer.endOffsets(consumer.assignment());
						}
						boolean reached = request.target.entrySet()
							.stream()
							.allMatch((end) -> consumer.position(end.getKey()) >= end.getValue());
						if (reached) {
							this.requests.remove(request);
							synchronized (request) {
								request.done = true;
								request.notifyAll();
							}
						}
					}
				}
			}
		}

		private static final class Request {

			private @Nullable Map<TopicPartition, Long> target;

			private boolean done;

		}

	}

}
