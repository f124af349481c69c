package dev.tandem.failover;

import java.util.Map;

import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.jspecify.annotations.Nullable;

/**
 * Producer interceptor that feeds the producer's {@link LeaderCache} from every
 * acknowledgement. Added to {@code interceptor.classes} by
 * {@link LeaderCacheRegistry#instrument}; it finds its registry and cluster name in the
 * properties {@link LeaderCacheRegistry#REGISTRY_CONFIG} and
 * {@link LeaderCacheRegistry#CLUSTER_CONFIG}, and does nothing (with one warning) without
 * them. Records pass through unchanged.
 * <p>
 * kafka-clients creates one instance per producer and calls
 * {@link #onAcknowledgement(RecordMetadata, Exception)} on the producer's I/O thread;
 * {@link #onSend(ProducerRecord)} checks at most once a second, on the sending thread,
 * whether any broker still answers (see {@link LeaderCache#reachability()}).
 *
 * @param <K> the key type
 * @param <V> the value type
 * @since 0.1.0
 */
public class LeaderTrackingProducerInterceptor<K, V> implements ProducerInterceptor<K, V> {

	private volatile @Nullable TrackedClient tracked;

	@Override
	public void configure(Map<String, ?> configs) {
		this.tracked = TrackedClient.register(configs, ClientType.PRODUCER, getClass());
	}

	@Override
	public ProducerRecord<K, V> onSend(ProducerRecord<K, V> record) {
		TrackedClient tracked = this.tracked;
		if (tracked != null) {
			tracked.cache().onSend();
		}
		return record;
	}

	@Override
	public void onAcknowledgement(@Nullable RecordMetadata metadata, @Nullable Exception exception) {
		TrackedClient tracked = this.tracked;
		if (tracked != null) {
			tracked.cache().onAcknowledgement(metadata, exception);
		}
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
