package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * One cluster's transactional producer within a slot; the Kafka transaction it holds is one
 * participant of a cross-cluster transaction. Not thread-safe beyond what KafkaProducer is: the
 * owning transaction drives begin/commit/abort from one thread.
 */
final class Participant {

	final String cluster;

	final String transactionalId;

	private @Nullable KafkaProducer<byte[], byte[]> producer;

	private boolean inTransaction;

	private final List<Future<RecordMetadata>> sends = new ArrayList<>();

	private int offsetCommits;

	Participant(String cluster, String transactionalId) {
		this.cluster = cluster;
		this.transactionalId = transactionalId;
	}

	boolean isReady() {
		return this.producer != null;
	}

	void open(KafkaProducer<byte[], byte[]> producer) {
		this.producer = producer;
	}

	KafkaProducer<byte[], byte[]> producer() {
		KafkaProducer<byte[], byte[]> p = this.producer;
		if (p == null) {
			throw new IllegalStateException("Participant " + this.transactionalId + " has no producer");
		}
		return p;
	}

	private void beginIfNeeded() {
		if (!this.inTransaction) {
			producer().beginTransaction();
			this.inTransaction = true;
		}
	}

	/**
	 * Sends within the open transaction. The returned future is a {@link CompletableFuture}
	 * completed by the producer's callback (on its network thread), so callers can compose on it
	 * without a thread of their own per record.
	 */
	Future<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
		beginIfNeeded();
		CompletableFuture<RecordMetadata> future = new CompletableFuture<>();
		producer().send(record, (metadata, exception) -> {
			if (exception != null) {
				future.completeExceptionally(exception);
			}
			else {
				future.complete(metadata);
			}
		});
		this.sends.add(future);
		return future;
	}

	void sendOffsets(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
		if (offsets.isEmpty()) {
			return;
		}
		beginIfNeeded();
		producer().sendOffsetsToTransaction(offsets, groupMetadata);
		this.offsetCommits++;
	}

	boolean hasWork() {
		return this.inTransaction && (!this.sends.isEmpty() || this.offsetCommits > 0);
	}

	boolean inTransaction() {
		return this.inTransaction;
	}

	List<Future<RecordMetadata>> sends() {
		return this.sends;
	}

	void flush() {
		producer().flush();
	}

	/** Commits the open transaction; bounded by the producer's {@code max.block.ms}. */
	void commit() {
		producer().commitTransaction();
		reset();
	}

	/** Aborts the open transaction, if any; bounded by the producer's {@code max.block.ms}. */
	void abort() {
		if (this.inTransaction) {
			producer().abortTransaction();
		}
		reset();
	}

	private void reset() {
		this.inTransaction = false;
		this.sends.clear();
		this.offsetCommits = 0;
	}

	/**
	 * Closes the producer without aborting its open transaction, as a crashed process would leave
	 * it (a graceful close aborts).
	 */
	void abandon() {
		KafkaProducer<byte[], byte[]> p = this.producer;
		this.producer = null;
		reset();
		if (p != null) {
			p.close(Duration.ZERO);
		}
	}

	void close(Duration timeout) {
		KafkaProducer<byte[], byte[]> p = this.producer;
		this.producer = null;
		reset();
		if (p != null) {
			p.close(timeout);
		}
	}

}
