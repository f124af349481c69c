package dev.tandem.autoconfigure.transaction;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.Serializer;
import org.jspecify.annotations.Nullable;

import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionTemplate;

/**
 * Sends to one cluster inside the cross-cluster transaction bound to the calling thread (by a
 * {@code @CrossClusterTransactional} method or {@link CrossClusterTransactionTemplate}). Outside
 * such a transaction every send fails with {@link IllegalStateException}: it never commits on its
 * own. One bean per cluster, named {@code <cluster>TandemTemplate}.
 * <p>
 * Thread-safe.
 *
 * @param <K> key type
 * @param <V> value type
 * @since 0.1.0
 */
public class ClusterTransactionalTemplate<K, V> {

	private final String cluster;

	private final Serializer<K> keySerializer;

	private final Serializer<V> valueSerializer;

	private final TandemTransactionObserver observer;

	/**
	 * Creates a template.
	 * @param cluster the cluster name
	 * @param keySerializer key serializer
	 * @param valueSerializer value serializer
	 */
	public ClusterTransactionalTemplate(String cluster, Serializer<K> keySerializer, Serializer<V> valueSerializer) {
		this(cluster, keySerializer, valueSerializer, TandemTransactionObserver.NONE);
	}

	/**
	 * Creates a template whose sends are observed (trace context propagated in the records'
	 * headers).
	 * @param cluster the cluster name
	 * @param keySerializer key serializer
	 * @param valueSerializer value serializer
	 * @param observer observes each send
	 */
	public ClusterTransactionalTemplate(String cluster, Serializer<K> keySerializer, Serializer<V> valueSerializer,
			TandemTransactionObserver observer) {
		this.cluster = Objects.requireNonNull(cluster, "cluster");
		this.keySerializer = keySerializer;
		this.valueSerializer = valueSerializer;
		this.observer = Objects.requireNonNull(observer, "observer");
	}

	/**
	 * Returns the cluster this template sends to.
	 * @return the cluster name
	 */
	public String getCluster() {
		return this.cluster;
	}

	/**
	 * Sends a value without key.
	 * @param topic the topic
	 * @param value the value
	 * @return completes when the broker acknowledged the record (visible only after commit)
	 * @throws IllegalStateException if no cross-cluster transaction is bound to the thread
	 */
	public CompletableFuture<RecordMetadata> send(String topic, @Nullable V value) {
		return send(new ProducerRecord<>(topic, value));
	}

	/**
	 * Sends a keyed value.
	 * @param topic the topic
	 * @param key the key
	 * @param value the value
	 * @return completes when the broker acknowledged the record (visible only after commit)
	 * @throws IllegalStateException if no cross-cluster transaction is bound to the thread
	 */
	public CompletableFuture<RecordMetadata> send(String topic, @Nullable K key, @Nullable V value) {
		return send(new ProducerRecord<>(topic, key, value));
	}

	/**
	 * Sends a record.
	 * @param record the record
	 * @return completes when the broker acknowledged the record (visible only after commit)
	 * @throws IllegalStateException if no cross-cluster transaction is bound to the thread
	 */
	public CompletableFuture<RecordMetadata> send(ProducerRecord<K, V> record) {
		CrossClusterTransaction transaction = CrossClusterTransactionTemplate.currentTransaction();
		if (transaction == null) {
			throw new IllegalStateException("No cross-cluster transaction is bound to this thread: send to cluster '"
					+ this.cluster + "' from a @CrossClusterTransactional method or inside "
					+ "CrossClusterTransactionTemplate.execute(..); for non-transactional sends use the '"
					+ this.cluster + "KafkaTemplate' bean");
		}
		Future<RecordMetadata> future = this.observer.observeSend(this.cluster, record,
				() -> transaction.send(this.cluster, record, this.keySerializer, this.valueSerializer));
		if (future instanceof CompletableFuture<RecordMetadata> completable) {
			return completable;
		}
		return CompletableFuture.supplyAsync(() -> {
			try {
				return future.get();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			catch (ExecutionException ex) {
				throw new java.util.concurrent.CompletionException(ex.getCause());
			}
		});
	}

}
