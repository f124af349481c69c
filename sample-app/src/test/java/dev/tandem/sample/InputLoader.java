package dev.tandem.sample;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes a run's input: real flights keyed by origin airport, in source transactions of which
 * some abort. An aborted transaction's records carry {@code "abortedSource": true} and numbers
 * from {@value #ABORTED_SEQ_BASE} up: the router reads {@code read_committed}, so none of them
 * may ever reach an output.
 */
final class InputLoader implements AutoCloseable {

	/** First number of the records of aborted source transactions. */
	static final long ABORTED_SEQ_BASE = 1_000_000;

	private static final ObjectMapper JSON = JsonMapper.builder().build();

	/** Every how many committed records one is poison, 0 for none; set by each load. */
	private int poisonEvery;

	private final KafkaProducer<byte[], byte[]> producer;

	private final JsonNode flights;

	private int flightCursor;

	InputLoader(String bootstrapServers) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "chaos-loader");
		config.put(ProducerConfig.LINGER_MS_CONFIG, 5);
		this.producer = new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
		this.producer.initTransactions();
		try (InputStream in = InputLoader.class.getResourceAsStream("/data/flights-20k.json")) {
			this.flights = JSON.readTree(in);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * What was loaded for one run.
	 */
	static final class Loaded {

		/** Committed records marked poison. */
		int poison;

		final String topic;

		final String runId;

		int committed;

		int aborted;

		/** Per partition, the offset after the last committed record. */
		final Map<TopicPartition, Long> afterLastRecord = new HashMap<>();

		Loaded(String topic, String runId, int partitions) {
			this.topic = topic;
			this.runId = runId;
			for (int p = 0; p < partitions; p++) {
				this.afterLastRecord.put(new TopicPartition(topic, p), 0L);
			}
		}

		long target() {
			return this.afterLastRecord.values().stream().mapToLong(Long::longValue).sum();
		}

	}

	/**
	 * Loads {@code records} committed records in transactions of {@code chunk}, with an aborted
	 * transaction of {@code chunk / 4} records after every second committed one.
	 */
	synchronized Loaded load(String topic, int partitions, String runId, int records, int chunk) {
		return load(topic, partitions, runId, records, chunk, 0);
	}

	/**
	 * Loads like {@link #load(String, int, String, int, int)}, with every {@code poisonEvery}-th
	 * committed record marked {@code "poison": true} (0: none), which the router fails on.
	 */
	synchronized Loaded load(String topic, int partitions, String runId, int records, int chunk, int poisonEvery) {
		this.poisonEvery = poisonEvery;
		try {
			Loaded loaded = new Loaded(topic, runId, partitions);
			int chunks = 0;
			while (loaded.committed < records) {
				writeChunk(loaded, Math.min(chunk, records - loaded.committed), false);
				if (++chunks % 2 == 0) {
					writeChunk(loaded, Math.max(1, chunk / 4), true);
				}
			}
			return loaded;
		}
		finally {
			this.poisonEvery = 0; // a trickle written meanwhile (same lock) never carries poison
		}
	}

	/**
	 * Writes transactions of {@code chunk} records every {@code pause} until {@code stop} is
	 * set (an aborted one after every third), in the background.
	 */
	CompletableFuture<Loaded> trickle(String topic, int partitions, String runId, int chunk, Duration pause,
			AtomicBoolean stop) {
		return CompletableFuture.supplyAsync(() -> {
			Loaded loaded = new Loaded(topic, runId, partitions);
			int chunks = 0;
			while (!stop.get()) {
				synchronized (this) {
					writeChunk(loaded, chunk, false);
					if (++chunks % 3 == 0) {
						writeChunk(loaded, Math.max(1, chunk / 2), true);
					}
				}
				try {
					Thread.sleep(pause.toMillis()); // the pace of the input, not a wait for a condition
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					break;
				}
			}
			return loaded;
		}, ChaosEnvironment.BACKGROUND);
	}

	private void writeChunk(Loaded loaded, int count, boolean abort) {
		this.producer.beginTransaction();
		Map<TopicPartition, Long> after = new HashMap<>();
		java.util.List<java.util.concurrent.Future<RecordMetadata>> sends = new java.util.ArrayList<>();
		for (int i = 0; i < count; i++) {
			JsonNode flight = this.flights.get(this.flightCursor++ % this.flights.size());
			ObjectNode value = JSON.createObjectNode();
			value.put("runId", loaded.runId);
			value.put("seq", abort ? ABORTED_SEQ_BASE + loaded.aborted + i : loaded.committed + i);
			if (abort) {
				value.put("abortedSource", true);
			}
			else if (this.poisonEvery > 0 && (loaded.committed + i) % this.poisonEvery == this.poisonEvery - 1) {
				value.put("poison", true);
				loaded.poison++;
			}
			value.setAll((ObjectNode) flight);
			sends.add(this.producer.send(new ProducerRecord<>(loaded.topic,
					flight.get("origin").asString().getBytes(StandardCharsets.UTF_8), JSON.writeValueAsBytes(value))));
		}
		try {
			for (java.util.concurrent.Future<RecordMetadata> send : sends) {
				RecordMetadata metadata = send.get();
				after.merge(new TopicPartition(metadata.topic(), metadata.partition()), metadata.offset() + 1, Math::max);
			}
		}
		catch (Exception ex) {
			this.producer.abortTransaction();
			throw new IllegalStateException("Loading " + loaded.topic + " failed", ex);
		}
		if (abort) {
			this.producer.abortTransaction();
			loaded.aborted += count;
		}
		else {
			this.producer.commitTransaction();
			loaded.committed += count;
			after.forEach((partition, offset) -> loaded.afterLastRecord.merge(partition, offset, Math::max));
		}
	}

	@Override
	public void close() {
		this.producer.close(Duration.ofSeconds(10));
	}

}
