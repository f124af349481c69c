package dev.tandem.failover;

import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * @author Tandem
 * @since 0.1.0
 */
public class LeaderTrackingConsumerInterceptor<K, V> implements ConsumerInterceptor<K, V> {

	private static final Logger logger = LoggerFactory.getLogger(LeaderTrackingConsumerInterceptor.class);

	private @Nullable LeaderCacheRegistry registry;

	private volatile @Nullable LeaderCache cache;

	@Override
	public void configure(Map<String, ?> configs) {
		Object registry = configs.get(LeaderCacheRegistry.REGISTRY_CONFIG);
		Object cluster = configs.get(LeaderCacheRegistry.CLUSTER_CONFIG);
		Object clientId = configs.get(CommonClientConfigs.CLIENT_ID_CONFIG);
		if (!(registry instanceof LeaderCacheRegistry leaderCacheRegistry) || cluster == null) {
			logger.warn("{} is configured without '{}' and '{}'; leaders of consumer '{}' are not tracked. "
					+ "Use LeaderCacheRegistry.instrument(...) to build the consumer's properties",
					getClass().getSimpleName(), LeaderCacheRegistry.REGISTRY_CONFIG, LeaderCacheRegistry.CLUSTER_CONFIG,
					clientId);
			return;
		}
		this.registry = leaderCacheRegistry;
		this.cache = leaderCacheRegistry.register(cluster.toString(), String.valueOf(clientId), ClientType.CONSUMER,
				configs);
	}

	@Override
	public ConsumerRecords<K, V> onConsume(ConsumerRecords<K, V> records) {
		LeaderCache cache = this.cache;
		if (cache != null) {
			cache.onConsume(records);
		}
		return records;
	}

	@Override
	public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
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
