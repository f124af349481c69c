package dev.tandem.bench.mirror;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.bench.AcknowledgedOffsets;

/**
 * The best at-least-once copy a user would write (issue 25), the reference of the ratios: one
 * thread in the bench's JVM, a consumer on the source ({@code read_committed}, as MirrorMaker 2's)
 * and an idempotent producer on the target ({@code acks=all}); per poll it sends every record to
 * the remote topic (same partition, key, value and timestamp) and commits with
 * {@code commitAsync}, on the source, the offsets of the polls whose records the target has all
 * acknowledged ({@link AcknowledgedOffsets}); no flush per poll. kafka-clients defaults otherwise.
 * It translates no consumer group, so the failover check does not apply to it.
 */
final class AtLeastOnceMirrorContender implements Contender {

	private static final Logger logger = LoggerFactory.getLogger(AtLeastOnceMirrorContender.class);

	private static final Duration POLL_TIMEOUT = Duration.ofMillis(100);

	private final String id;

	/** {@code producer.<key>} and {@code consumer.<key>} settings of a variant, over the defaults. */
	private final Map<String, String> overrides;

	private volatile boolean running;

	private final AtomicReference<@Nullable Throwable> failure = new AtomicReference<>();

	private @Nullable Thread thread;

	/** The copy as a user writes it, kafka-clients' defaults otherwise. */
	AtLeastOnceMirrorContender() {
		this("alo-async", Map.of());
	}

	/**
	 * A variant with client settings of its own, for the reference to be the best at-least-once copy
	 * whatever setting Tandem's variants try (compression, batch sizes, fetch sizes).
	 * @param id the contender's name in the report, as given ({@code alo-async[...]})
	 * @param overrides {@code producer.<key>} (the target's producer) and {@code consumer.<key>} (the
	 *     source's consumer) settings
	 * @throws IllegalArgumentException for a key without either prefix
	 */
	AtLeastOnceMirrorContender(String id, Map<String, String> overrides) {
		this.id = id;
		this.overrides = Map.copyOf(overrides);
		for (String key : this.overrides.keySet()) {
			if (!key.startsWith("producer.") && !key.startsWith("consumer.")) {
				throw new IllegalArgumentException("--contenders " + id + ": alo-async takes producer.<key> and "
						+ "consumer.<key> settings, not '" + key + "'");
			}
		}
	}

	@Override
	public String id() {
		return this.id;
	}

	@Override
	public String settings() {
		return "at-least-once copy, 1 thread in the bench's JVM: consumer on the source (read_committed), idempotent "
				+ "producer on the target (acks=all); per poll: send, commitAsync of the polls the target acknowledged, "
				+ "no flush; kafka-clients defaults otherwise; no group translation"
				+ (this.overrides.isEmpty() ? "" : "; this variant's own settings: " + this.overrides);
	}

	@Override
	public boolean translatesGroups() {
		return false;
	}

	@Override
	public void start(MirrorRun run) {
		this.running = true;
		this.failure.set(null);
		Thread loop = new Thread(() -> copy(run), "alo-async-" + run.tag());
		loop.setDaemon(true);
		this.thread = loop;
		loop.start();
	}

	private void copy(MirrorRun run) {
		Map<String, Object> consumerConfig = new HashMap<>(Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
				run.sourceBootstrapServers(), ConsumerConfig.GROUP_ID_CONFIG, "alo-async-" + run.tag(),
				ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
				ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
		Map<String, Object> producerConfig = new HashMap<>(Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
				run.targetBootstrapServers(), ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG,
				true));
		this.overrides.forEach((key, value) -> {
			if (key.startsWith("producer.")) {
				producerConfig.put(key.substring("producer.".length()), value);
			}
			else {
				consumerConfig.put(key.substring("consumer.".length()), value);
			}
		});
		AcknowledgedOffsets acknowledged = new AcknowledgedOffsets();
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig, new ByteArrayDeserializer(),
				new ByteArrayDeserializer());
				KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig, new ByteArraySerializer(),
						new ByteArraySerializer())) {
			consumer.subscribe(List.of(run.topic()));
			while (this.running) {
				ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL_TIMEOUT);
				if (!records.isEmpty()) {
					Callback acknowledge = acknowledged.add(records);
					for (ConsumerRecord<byte[], byte[]> record : records) {
						producer.send(new ProducerRecord<>(run.remoteTopic(), record.partition(), record.timestamp(),
								record.key(), record.value()), acknowledge);
					}
				}
				commit(consumer, acknowledged, false);
			}
			producer.flush();
			commit(consumer, acknowledged, true);
		}
		catch (Throwable ex) {
			this.failure.compareAndSet(null, ex);
			logger.error("The at-least-once copy of {} failed", run.tag(), ex);
		}
	}

	private static void commit(KafkaConsumer<byte[], byte[]> consumer, AcknowledgedOffsets acknowledged, boolean sync)
			throws Exception {
		Exception failed = acknowledged.failure();
		if (failed != null) {
			throw failed;
		}
		AcknowledgedOffsets.Acknowledged done = acknowledged.takeAcknowledged();
		if (done.polls() == 0) {
			return;
		}
		if (sync) {
			consumer.commitSync(done.offsets());
		}
		else {
			consumer.commitAsync(done.offsets(), (offsets, ex) -> {
				if (ex != null) {
					logger.warn("commitAsync failed (the next commit covers it): {}", ex.toString());
				}
			});
		}
	}

	@Override
	public @Nullable String failure() {
		Throwable failed = this.failure.get();
		return (failed != null) ? "The at-least-once copy failed: " + failed : null;
	}

	@Override
	public void stop() throws InterruptedException {
		this.running = false;
		Thread loop = this.thread;
		this.thread = null;
		if (loop != null) {
			loop.join(60_000);
		}
	}

}
