package dev.tandem.bench.throughput;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.bench.AcknowledgedOffsets;

/**
 * The at-least-once contenders: a plain consumer on the source cluster and an idempotent producer
 * on the target, in one of two ways:
 * <ul>
 * <li>{@code alo-async} (issue 25, the reference of every ratio): per poll, send every record and
 * {@code commitAsync} the offsets of the polls whose records the target has all acknowledged
 * ({@link AcknowledgedOffsets}); no {@code flush()}, the loop never waits for the target, the best
 * at-least-once copy a user would write;</li>
 * <li>{@code alo}: per poll, send every record, {@code flush()}, then {@code commitSync} of the
 * poll's offsets, one round trip to each cluster per poll (the careful but slow variant).</li>
 * </ul>
 * Both are at least once: a crash copies again what was sent after the last commit.
 *
 * @since 0.1.0
 */
final class AtLeastOnceCopier extends LoopCopier {

	private static final Logger logger = LoggerFactory.getLogger(AtLeastOnceCopier.class);

	private final Copier.Route route;

	private final ClientSettings settings;

	private final String sourceBootstrap;

	private final String targetBootstrap;

	private final boolean async;

	private final AtomicReference<@Nullable Exception> sendFailure = new AtomicReference<>();

	private final AcknowledgedOffsets acknowledged = new AcknowledgedOffsets();

	private final AtomicReference<@Nullable Exception> commitFailure = new AtomicReference<>();

	private @Nullable KafkaConsumer<byte[], byte[]> consumer;

	private @Nullable KafkaProducer<byte[], byte[]> producer;

	AtLeastOnceCopier(String name, Copier.Route route, ClientSettings settings, String sourceBootstrap,
			String targetBootstrap, boolean async) {
		super(name);
		this.async = async;
		this.route = route;
		this.settings = settings;
		this.sourceBootstrap = sourceBootstrap;
		this.targetBootstrap = targetBootstrap;
	}

	@Override
	void open(CopyProbe probe) {
		this.consumer = new KafkaConsumer<>(this.settings.consumer(this.sourceBootstrap, this.route.groupId()),
				new ByteArrayDeserializer(), new ByteArrayDeserializer());
		this.producer = new KafkaProducer<>(this.settings.producer(this.targetBootstrap), new ByteArraySerializer(),
				new ByteArraySerializer());
		this.consumer.subscribe(this.route.sourceTopics());
	}

	@Override
	void step(CopyProbe probe) throws Exception {
		KafkaConsumer<byte[], byte[]> consumer = this.consumer;
		KafkaProducer<byte[], byte[]> producer = this.producer;
		ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL_TIMEOUT);
		if (records.isEmpty()) {
			if (this.async) {
				commitAcknowledged(probe);
			}
			return;
		}
		probe.polled();
		if (this.async) {
			Callback acknowledge = this.acknowledged.add(records);
			for (ConsumerRecord<byte[], byte[]> record : records) {
				producer.send(Copier.copyOf(record, this.route.targetTopic()), acknowledge);
			}
			commitAcknowledged(probe);
			return;
		}
		for (ConsumerRecord<byte[], byte[]> record : records) {
			producer.send(Copier.copyOf(record, this.route.targetTopic()), (metadata, ex) -> {
				if (ex != null) {
					this.sendFailure.compareAndSet(null, ex);
				}
			});
		}
		producer.flush();
		Exception failed = this.sendFailure.get();
		if (failed != null) {
			throw failed;
		}
		consumer.commitSync(nextOffsets(records));
		probe.completed();
	}

	/**
	 * Commits, asynchronously, the offsets of the polls acknowledged since the last commit; a
	 * failed commit is only logged, as the next one covers it.
	 */
	private void commitAcknowledged(CopyProbe probe) throws Exception {
		Exception failed = this.acknowledged.failure();
		if (failed != null) {
			throw failed;
		}
		AcknowledgedOffsets.Acknowledged done = this.acknowledged.takeAcknowledged();
		if (done.polls() == 0) {
			return;
		}
		Objects.requireNonNull(this.consumer).commitAsync(done.offsets(), (offsets, ex) -> {
			if (ex != null && this.commitFailure.compareAndSet(null, ex)) {
				logger.warn("commitAsync failed (the next commit covers it): {}", ex.toString());
			}
		});
		for (int i = 0; i < done.polls(); i++) {
			probe.completed();
		}
	}

	@Override
	void finish() {
		if (this.async && this.producer != null && this.consumer != null) {
			this.producer.flush();
			AcknowledgedOffsets.Acknowledged done = this.acknowledged.takeAcknowledged();
			if (done.polls() > 0) {
				this.consumer.commitSync(done.offsets());
			}
		}
		if (this.producer != null) {
			this.producer.close();
		}
		if (this.consumer != null) {
			this.consumer.close();
		}
	}

}
