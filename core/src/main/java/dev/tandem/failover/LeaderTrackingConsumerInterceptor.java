package dev.tandem.failover;

import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Consumer interceptor that feeds the consumer's {@link LeaderCache} from every poll that
 * returns records. Added to {@code interceptor.classes} by
 * {@link LeaderCacheRegistry#instrument}; it finds its registry and cluster name in the
 * properties {@link LeaderCacheRegistry#REGISTRY_CONFIG} and
 * {@link LeaderCacheRegistry#CLUSTER_CONFIG}, and does nothing (with one warning) without
 * them. Records pass through unchanged.
 * <p>
 * kafka-clients creates one instance per consumer and calls {@link #onConsume} on the
 * polling thread.
 *
 * @param <K> the key type
 * @param <V> the value type
 * @since 0.1.0
 */
public class LeaderTrackingConsumerInterceptor<K, V> implements ConsumerInterceptor<K, V> {

	private volatile @Nullable TrackedClient tracked;

	@Override
	public void configure(Map<String, ?> configs) {
		this.tracked = TrackedClient.register(configs, ClientType.CONSUMER, getClass());
	}

	@Override
	public ConsumerRecords<K, V> onConsume(ConsumerRecords<K, V> records) {
		TrackedClient tracked = this.tracked;
		if (tracked != null) {
			tracked.cache().onConsume(records);
		}
		return records;
	}

	@Override
	public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
	}

	@Override
	public void close() {
		TrackedClient tracked = this.tracked;
		if (tracked != null) {
			tracked.close();
		}
		this.tracked = null;
	}

}
