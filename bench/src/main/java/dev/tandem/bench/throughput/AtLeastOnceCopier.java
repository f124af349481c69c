package dev.tandem.bench.throughput;

import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;

/**
 * Contender (a), the ceiling: a plain consumer on the source cluster and an idempotent producer
 * on the target; per poll: send every record, {@code flush()}, then {@code commitSync} of the
 * poll's offsets. At least once: a crash between the flush and the commit copies the poll again.
 *
 * @since 0.1.0
 */
final class AtLeastOnceCopier extends LoopCopier {

	private final Copier.Route route;

	private final ClientSettings settings;

	private final String sourceBootstrap;

	private final String targetBootstrap;

	private final AtomicReference<@Nullable Exception> sendFailure = new AtomicReference<>();

	private @Nullable KafkaConsumer<byte[], byte[]> consumer;

	private @Nullable KafkaProducer<byte[], byte[]> producer;

	AtLeastOnceCopier(String name, Copier.Route route, ClientSettings settings, String sourceBootstrap,
			String targetBootstrap) {
		super(name);
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
			return;
		}
		probe.polled();
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

	@Override
	void finish() {
		if (this.producer != null) {
			this.producer.close();
		}
		if (this.consumer != null) {
			this.consumer.close();
		}
	}

}
