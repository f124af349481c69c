package dev.tandem.failover;

import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * @author Tandem
 * @since 0.1.0
 */
public class LeaderTrackingProducerInterceptor<K, V> implements ProducerInterceptor<K, V> {

	private static final Logger logger = LoggerFactory.getLogger(LeaderTrackingProducerInterceptor.class);

	private @Nullable LeaderCacheRegistry registry;

	private volatile @Nullable LeaderCache cache;

	@Override
	public void configure(Map<String, ?> configs) {
		Object registry = configs.get(LeaderCacheRegistry.REGISTRY_CONFIG);
		Object cluster = configs.get(LeaderCacheRegistry.CLUSTER_CONFIG);
		Object clientId = configs.get(CommonClientConfigs.CLIENT_ID_CONFIG);
		if (!(registry instanceof LeaderCacheRegistry leaderCacheRegistry) || cluster == null) {
			logger.warn("{} is configured without '{}' and '{}'; leaders of producer '{}' are not tracked. "
					+ "Use LeaderCacheRegistry.instrument(...) to build the producer's properties",
					getClass().getSimpleName(), LeaderCacheRegistry.REGISTRY_CONFIG, LeaderCacheRegistry.CLUSTER_CONFIG,
					clientId);
			return;
		}
		this.registry = leaderCacheRegistry;
		this.cache = leaderCacheRegistry.register(cluster.toString(), String.valueOf(clientId), ClientType.PRODUCER,
				configs);
	}

	@Override
	public ProducerRecord<K, V> onSend(ProducerRecord<K, V> record) {
		LeaderCache cache = this.cache;
		if (cache != null) {
			cache.onSend();
		}
		return record;
	}

	@Override
	public void onAcknowledgement(@Nullable RecordMetadata metadata, @Nullable Exception exception) {
		LeaderCache cache = this.cache;
		if (cache != null) {
			cache.onAcknowledgement(metadata, exception);
		}
	}

	@Override
	public void close() {
		LeaderCache cache = this.cache;
		LeaderCacheRegistry registry = this.registry;
		if (cache != null && registry != null) {
			registry.remove(cache);
		}
		this.cache = null;
	}

}
