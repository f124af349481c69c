package dev.tandem.failover;

import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client's leader cache as its leader-tracking interceptor holds it: registered in
 * {@code configure} from the registry and cluster name that {@link LeaderCacheRegistry#instrument}
 * put in the client's properties, removed from the registry when the interceptor closes. The one
 * {@code configure} of {@link LeaderTrackingProducerInterceptor} and
 * {@link LeaderTrackingConsumerInterceptor}. Immutable.
 */
final class TrackedClient {

	private static final Logger logger = LoggerFactory.getLogger(TrackedClient.class);

	private final LeaderCacheRegistry registry;

	private final LeaderCache cache;

	private TrackedClient(LeaderCacheRegistry registry, LeaderCache cache) {
		this.registry = registry;
		this.cache = cache;
	}

	/**
	 * Registers the client's cache.
	 * @param configs the client's properties, as given to the interceptor's {@code configure}
	 * @param type the client type
	 * @param interceptor the interceptor's class, for the warning
	 * @return the tracked client, or null (with one WARN) if the properties were not instrumented
	 */
	static @Nullable TrackedClient register(Map<String, ?> configs, ClientType type, Class<?> interceptor) {
		Object registry = configs.get(LeaderCacheRegistry.REGISTRY_CONFIG);
		Object cluster = configs.get(LeaderCacheRegistry.CLUSTER_CONFIG);
		Object clientId = configs.get(CommonClientConfigs.CLIENT_ID_CONFIG);
		if (!(registry instanceof LeaderCacheRegistry leaderCacheRegistry) || cluster == null) {
			String client = type.name().toLowerCase(java.util.Locale.ROOT);
			logger.warn("{} is configured without '{}' and '{}'; leaders of {} '{}' are not tracked. "
					+ "Use LeaderCacheRegistry.instrument(...) to build the {}'s properties", interceptor.getSimpleName(),
					LeaderCacheRegistry.REGISTRY_CONFIG, LeaderCacheRegistry.CLUSTER_CONFIG, client, clientId, client);
			return null;
		}
		return new TrackedClient(leaderCacheRegistry,
				leaderCacheRegistry.register(cluster.toString(), String.valueOf(clientId), type, configs));
	}

	LeaderCache cache() {
		return this.cache;
	}

	/** Removes the cache from its registry. */
	void close() {
		this.registry.remove(this.cache);
	}

}
