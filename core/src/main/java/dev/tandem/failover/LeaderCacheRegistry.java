package dev.tandem.failover;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.failover.internals.LeaderSource;

/**
 * The {@link LeaderCache leader caches} of all Kafka clients of an application, across
 * clusters: where clients are instrumented and bound, where the snapshot for
 * {@code /actuator/kafkaleaders} comes from, and where metrics listeners are registered.
 * <p>
 * Typical use, once per client:
 * <pre class="code">
 * Map&lt;String, Object&gt; properties = registry.instrument("east", ClientType.PRODUCER,
 * 		FailoverProfile.standard().producerProperties(userProperties));
 * KafkaProducer&lt;String, String&gt; producer = new KafkaProducer&lt;&gt;(properties);
 * LeaderCache cache = registry.bind("east", producer);
 * </pre>
 * {@link #instrument} adds an interceptor to the client's properties; the interceptor
 * creates the client's cache when kafka-clients configures it (so several clients built from
 * one property map, as Spring's client factories do, each get their own cache), and removes
 * it when the client closes. {@link #bind} attaches the cache to the client's own metadata
 * for leaders and epochs; until then the cache records only successes and failures.
 * <p>
 * Instances are thread-safe.
 *
 * @author Tandem
 * @since 0.1.0
 */
public final class LeaderCacheRegistry {

	/**
	 * Client property under which {@link #instrument} passes this registry to the
	 * interceptor; the value is a {@code LeaderCacheRegistry} instance, not a string.
	 * @since 0.1.0
	 */
	public static final String REGISTRY_CONFIG = "tandem.failover.leader-cache-registry";

	/**
	 * Client property under which {@link #instrument} passes the cluster name to the
	 * interceptor.
	 * @since 0.1.0
	 */
	public static final String CLUSTER_CONFIG = "tandem.failover.cluster";

	private static final Logger logger = LoggerFactory.getLogger(LeaderCacheRegistry.class);

	private static final long DEFAULT_DELIVERY_TIMEOUT_MS = 120_000;

	/** kafka-clients' default for producers and consumers. */
	private static final long DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

	private final List<LeaderCache> caches = new CopyOnWriteArrayList<>();

	private final List<LeaderCacheListener> listeners = new CopyOnWriteArrayList<>();

	private final LeaderCacheListener dispatcher = new Dispatcher();

	private final LongSupplier clock;

	/**
	 * Create an empty registry.
	 * @since 0.1.0
	 */
	public LeaderCacheRegistry() {
		this(System::currentTimeMillis);
	}

	LeaderCacheRegistry(LongSupplier clock) {
		this.clock = clock;
	}

	/**
	 * Return a copy of client properties with the leader-tracking interceptor added to
	 * {@code interceptor.classes} (after any interceptors already there) and this registry
	 * and the cluster name passed along.
	 * @param cluster the cluster name, as shown in descriptors and events
	 * @param clientType {@link ClientType#PRODUCER} or {@link ClientType#CONSUMER}
	 * @param properties the client's properties, for example from
	 * {@link FailoverProfile#producerProperties(Map)}
	 * @return a new mutable map
	 * @throws IllegalArgumentException if {@code clientType} is {@link ClientType#ADMIN}
	 * (admin clients have no partition leaders to track) or {@code interceptor.classes} has
	 * an unsupported type
	 * @since 0.1.0
	 */
	public Map<String, Object> instrument(String cluster, ClientType clientType, Map<String, ?> properties) {
		Objects.requireNonNull(cluster, "cluster must not be null");
		Objects.requireNonNull(properties, "properties must not be null");
		Class<?> interceptor = switch (clientType) {
			case PRODUCER -> LeaderTrackingProducerInterceptor.class;
			case CONSUMER -> LeaderTrackingConsumerInterceptor.class;
			case ADMIN -> throw new IllegalArgumentException("Admin clients have no partition leaders to track");
		};
		Map<String, Object> instrumented = new LinkedHashMap<>(properties);
		List<Object> interceptors = new ArrayList<>();
		Object existing = properties.get(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG);
		if (existing instanceof String names) {
			for (String name : names.split(",")) {
				if (!name.isBlank()) {
					interceptors.add(name.trim());
				}
			}
		}
		else if (existing instanceof Collection<?> collection) {
			interceptors.addAll(collection);
		}
		else if (existing instanceof Class<?> type) {
			interceptors.add(type);
		}
		else if (existing != null) {
			throw new IllegalArgumentException(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG
					+ " must be a String, a Class or a Collection but was " + existing.getClass().getName());
		}
		boolean present = interceptors.stream()
			.anyMatch((entry) -> entry == interceptor || interceptor.getName().equals(entry));
		if (!present) {
			interceptors.add(interceptor);
		}
		instrumented.put(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG, interceptors);
		instrumented.put(REGISTRY_CONFIG, this);
		instrumented.put(CLUSTER_CONFIG, cluster);
		return instrumented;
	}

	/**
	 * Attach a producer's leader cache to the producer's metadata, so that it knows leaders
	 * and leader epochs.
	 * @param cluster the cluster name the producer's properties were instrumented with
	 * @param producer a producer created from {@link #instrument instrumented} properties,
	 * possibly wrapped (the wrapper's {@code metrics()} must report the client id)
	 * @return the producer's cache
	 * @throws IllegalArgumentException if the producer was not created from properties
	 * instrumented by this registry for that cluster, or is closed
	 * @since 0.1.0
	 */
	public LeaderCache bind(String cluster, Producer<?, ?> producer) {
		LeaderCache cache = unboundCache(cluster, clientId(producer.metrics()), ClientType.PRODUCER);
		cache.bind(LeaderSource.forProducer(producer));
		logger.debug("Bound leader cache of producer '{}' on cluster '{}'", cache.clientId(), cluster);
		return cache;
	}

	/**
	 * Attach a consumer's leader cache to the consumer's metadata, so that it knows leaders
	 * and leader epochs. Call it from the thread that created the consumer, before polling
	 * from another thread.
	 * @param cluster the cluster name the consumer's properties were instrumented with
	 * @param consumer a consumer created from {@link #instrument instrumented} properties
	 * @return the consumer's cache
	 * @throws IllegalArgumentException if the consumer was not created from properties
	 * instrumented by this registry for that cluster, or is closed
	 * @since 0.1.0
	 */
	public LeaderCache bind(String cluster, Consumer<?, ?> consumer) {
		LeaderCache cache = unboundCache(cluster, clientId(consumer.metrics()), ClientType.CONSUMER);
		LeaderSource source = LeaderSource.forConsumer(consumer);
		if (source != null) {
			cache.bind(source);
		}
		logger.debug("Bound leader cache of consumer '{}' on cluster '{}'", cache.clientId(), cluster);
		return cache;
	}

	private static String clientId(Map<MetricName, ? extends Metric> metrics) {
		for (MetricName name : metrics.keySet()) {
			String clientId = name.tags().get("client-id");
			if (clientId != null) {
				return clientId;
			}
		}
		throw new IllegalArgumentException("The client reports no metric with a client-id tag");
	}

	private LeaderCache unboundCache(String cluster, String clientId, ClientType clientType) {
		for (int i = this.caches.size() - 1; i >= 0; i--) {
			LeaderCache cache = this.caches.get(i);
			if (cache.cluster().equals(cluster) && cache.clientId().equals(clientId)
					&& cache.clientType() == clientType && !cache.isBound()) {
				return cache;
			}
		}
		throw new IllegalArgumentException("No unbound leader cache for " + clientType.name().toLowerCase() + " '"
				+ clientId + "' on cluster '" + cluster + "': create the client from properties returned by "
				+ "instrument(\"" + cluster + "\", " + clientType + ", ...) of this registry, and bind it once");
	}

	/**
	 * Return the caches of all open clients, in creation order.
	 * @return an immutable list
	 * @since 0.1.0
	 */
	public List<LeaderCache> caches() {
		return List.copyOf(this.caches);
	}

	/**
	 * Refresh every cache from its client's metadata; see {@link LeaderCache#refresh()}.
	 * @since 0.1.0
	 */
	public void refresh() {
		this.caches.forEach(LeaderCache::refresh);
	}

	/**
	 * Check every open client's {@link LeaderCache#reachability() reachability} now, so that
	 * listeners hear of a client that lost its brokers even if it sends nothing and nobody
	 * reads its cache (an idle consumer, for example). Reads each client's metadata under its
	 * lock; no broker request. The Spring layer calls it once a second
	 * ({@code tandem.failover.reachability-check-interval}).
	 * @return the clients found {@link BrokerReachability#UNREACHABLE}, in creation order
	 * @since 0.1.0
	 */
	public List<LeaderCache> checkReachability() {
		List<LeaderCache> unreachable = new ArrayList<>();
		for (LeaderCache cache : this.caches) {
			if (!cache.isClosed() && cache.reachability() == BrokerReachability.UNREACHABLE) {
				unreachable.add(cache);
			}
		}
		return unreachable;
	}

	/**
	 * Return the open clients of one cluster that are
	 * {@link BrokerReachability#UNREACHABLE} now, checking each as
	 * {@link LeaderCache#reachability()} does (from its own metadata, no broker request).
	 * @param cluster the cluster name
	 * @return the unreachable clients, in creation order; empty if none
	 * @since 0.1.0
	 */
	public List<LeaderCache> unreachableClients(String cluster) {
		List<LeaderCache> unreachable = new ArrayList<>();
		for (LeaderCache cache : this.caches) {
			if (cache.cluster().equals(cluster) && !cache.isClosed()
					&& cache.reachability() == BrokerReachability.UNREACHABLE) {
				unreachable.add(cache);
			}
		}
		return unreachable;
	}

	/**
	 * Return what every client of every cluster knows about partition leaders.
	 * @return an immutable snapshot, clusters in order of their first client
	 * @since 0.1.0
	 */
	public LeadersDescriptor describe() {
		Map<String, List<ClientLeadersDescriptor>> clusters = new LinkedHashMap<>();
		for (LeaderCache cache : this.caches) {
			clusters.computeIfAbsent(cache.cluster(), (name) -> new ArrayList<>()).add(cache.describe());
		}
		Map<String, ClusterLeadersDescriptor> descriptors = new LinkedHashMap<>();
		clusters.forEach((name, clients) -> descriptors.put(name, new ClusterLeadersDescriptor(name, clients)));
		return new LeadersDescriptor(descriptors);
	}

	/**
	 * Return what the clients of one cluster know about partition leaders.
	 * @param cluster the cluster name
	 * @return the snapshot, or {@code null} if no open client talks to that cluster
	 * @since 0.1.0
	 */
	public @Nullable ClusterLeadersDescriptor describe(String cluster) {
		List<ClientLeadersDescriptor> clients = new ArrayList<>();
		for (LeaderCache cache : this.caches) {
			if (cache.cluster().equals(cluster)) {
				clients.add(cache.describe());
			}
		}
		return clients.isEmpty() ? null : new ClusterLeadersDescriptor(cluster, clients);
	}

	/**
	 * Return what the clients of one cluster know about the leaders of one topic.
	 * @param cluster the cluster name
	 * @param topic the topic
	 * @return the snapshot (clients that have not used the topic have no partitions), or
	 * {@code null} if no open client talks to that cluster
	 * @since 0.1.0
	 */
	public @Nullable ClusterLeadersDescriptor describeTopic(String cluster, String topic) {
		List<ClientLeadersDescriptor> clients = new ArrayList<>();
		for (LeaderCache cache : this.caches) {
			if (cache.cluster().equals(cluster)) {
				clients.add(cache.describe(topic));
			}
		}
		return clients.isEmpty() ? null : new ClusterLeadersDescriptor(cluster, clients);
	}

	/**
	 * Register a listener for leader changes and failovers of every client of this
	 * registry, present and future.
	 * @param listener the listener; see {@link LeaderCacheListener} for threading rules
	 * @since 0.1.0
	 */
	public void addListener(LeaderCacheListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
	}

	/**
	 * Remove a listener added with {@link #addListener}.
	 * @param listener the listener
	 * @return whether it was registered
	 * @since 0.1.0
	 */
	public boolean removeListener(LeaderCacheListener listener) {
		return this.listeners.remove(listener);
	}

	/**
	 * Create and register the cache of a client being configured; called by the
	 * interceptors.
	 */
	LeaderCache register(String cluster, String clientId, ClientType clientType, Map<String, ?> configs) {
		long deliveryTimeoutMs = longConfig(configs, ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG,
				DEFAULT_DELIVERY_TIMEOUT_MS);
		long requestTimeoutMs = longConfig(configs, CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG,
				DEFAULT_REQUEST_TIMEOUT_MS);
		Object bootstrapServers = configs.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
		String bootstrap = (bootstrapServers instanceof Collection<?> addresses)
				? String.join(",", addresses.stream().map(String::valueOf).toList()) : String.valueOf(bootstrapServers);
		LeaderCache cache = new LeaderCache(cluster, clientId, clientType, deliveryTimeoutMs, requestTimeoutMs,
				bootstrap, this.dispatcher, this.clock);
		this.caches.add(cache);
		return cache;
	}

	/**
	 * Drop the cache of a closed client; called by the interceptors.
	 */
	private static long longConfig(Map<String, ?> configs, String name, long defaultValue) {
		Object configured = configs.get(name);
		if (configured != null) {
			try {
				return Long.parseLong(configured.toString().trim());
			}
			catch (NumberFormatException ex) {
				// kafka-clients rejects it; keep the default
			}
		}
		return defaultValue;
	}

	void remove(LeaderCache cache) {
		cache.close();
		this.caches.remove(cache);
	}

	@Override
	public String toString() {
		return "LeaderCacheRegistry{caches=" + this.caches + "}";
	}

	/**
	 * Fans events out to the registered listeners, isolating their failures.
	 */
	private final class Dispatcher implements LeaderCacheListener {

		@Override
		public void leaderChanged(LeaderChangeEvent event) {
			dispatch(event.cluster(), event.clientId(), (listener) -> listener.leaderChanged(event));
		}

		@Override
		public void reachabilityChanged(ReachabilityEvent event) {
			dispatch(event.cluster(), event.clientId(), (listener) -> listener.reachabilityChanged(event));
		}

		@Override
		public void failoverCompleted(FailoverEvent event) {
			dispatch(event.cluster(), event.clientId(), (listener) -> listener.failoverCompleted(event));
		}

		private void dispatch(String cluster, String clientId, java.util.function.Consumer<LeaderCacheListener> call) {
			for (LeaderCacheListener listener : LeaderCacheRegistry.this.listeners) {
				try {
					call.accept(listener);
				}
				catch (RuntimeException ex) {
					logger.warn("Leader cache listener {} failed for client '{}' on cluster '{}'", listener, clientId,
							cluster, ex);
				}
			}
		}

	}

}
