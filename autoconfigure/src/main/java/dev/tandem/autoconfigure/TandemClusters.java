package dev.tandem.autoconfigure;

import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.SslConfigs;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.clients.ClusterClients;

/**
 * The configured Kafka clusters and the client properties of each, resolved once from
 * {@code spring.kafka.*} (inherited), {@code tandem.clusters.*} and per-cluster connection
 * details (with the failover profile applied where enabled). Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class TandemClusters {

	/**
	 * Kafka's {@code ssl.engine.factory.class} of Spring Boot's SSL bundles; the bundle itself
	 * travels in the client properties under {@link SslBundle}'s class name.
	 */
	static final String SSL_BUNDLE_ENGINE_FACTORY = "org.springframework.boot.kafka.autoconfigure.SslBundleSslEngineFactory";

	private final Map<String, Resolved> clusters;

	/**
	 * Resolves the clusters of the given properties alone (no inherited defaults, no
	 * connection details, no SSL bundles).
	 * @param properties the Tandem properties
	 * @param customizers applied to every cluster's client properties, in order
	 * @throws TandemConfigurationException if a cluster name is invalid or has no bootstrap servers
	 */
	public TandemClusters(TandemProperties properties, List<TandemClusterCustomizer> customizers) {
		this(properties, TandemClientDefaults.NONE, List.of(), null, customizers);
	}

	/**
	 * Resolves the clusters of the given properties. Each client's properties are, from lowest
	 * to highest precedence: the inherited {@code defaults} ({@code spring.kafka.*}),
	 * {@code tandem.clusters.<c>.properties.*}, {@code tandem.clusters.<c>.producer.*} (or
	 * {@code .consumer.*}, {@code .admin.*}), the cluster's {@code ssl.bundle} (which replaces an
	 * inherited bundle), and the cluster's connection details (bootstrap servers, and security
	 * protocol and SSL bundle where they give one). The customizers then fill in what is still
	 * unset.
	 * @param properties the Tandem properties
	 * @param defaults the properties every cluster inherits
	 * @param connectionDetails at most one per cluster
	 * @param sslBundles resolves {@code tandem.clusters.<c>.ssl.bundle}, or null if none are configured
	 * @param customizers applied to every cluster's client properties, in order
	 * @throws TandemConfigurationException if a cluster name is invalid, has no bootstrap servers,
	 *     names an unknown SSL bundle, or has two connection details; or if connection details
	 *     name a cluster that is not declared
	 */
	public TandemClusters(TandemProperties properties, TandemClientDefaults defaults,
			List<TandemClusterConnectionDetails> connectionDetails, @Nullable SslBundles sslBundles,
			List<TandemClusterCustomizer> customizers) {
		this(properties, defaults, connectionDetails, sslBundles, customizers, Map.of());
	}

	/**
	 * Resolves the clusters of the given properties, as
	 * {@link #TandemClusters(TandemProperties, TandemClientDefaults, List, SslBundles, List)} does,
	 * and names the keys written under a cluster when it has no bootstrap servers: a cluster whose
	 * every key is misspelt ({@code tandem.clusters.east.bootstrap-server}) binds to nothing and
	 * is absent from {@code properties}, so only the written keys show it.
	 * @param properties the Tandem properties
	 * @param defaults the properties every cluster inherits
	 * @param connectionDetails at most one per cluster
	 * @param sslBundles resolves {@code tandem.clusters.<c>.ssl.bundle}, or null if none are configured
	 * @param customizers applied to every cluster's client properties, in order
	 * @param declaredKeys the keys written under {@code tandem.clusters.<c>.*} in the environment,
	 *     by cluster name, relative to the cluster ({@code bootstrap-server}); empty if unknown
	 * @throws TandemConfigurationException as the other constructor does, and if keys are written
	 *     under a cluster that none of them configures (the message lists them, with the nearest
	 *     known property of each misspelt one)
	 * @since 0.1.0
	 */
	public TandemClusters(TandemProperties properties, TandemClientDefaults defaults,
			List<TandemClusterConnectionDetails> connectionDetails, @Nullable SslBundles sslBundles,
			List<TandemClusterCustomizer> customizers, Map<String, List<String>> declaredKeys) {
		declaredKeys.forEach((name, keys) -> {
			if (properties.getClusters().keySet().stream().noneMatch(name::equalsIgnoreCase)) {
				throw ClusterKeys.missingBootstrapServers(name, keys);
			}
		});
		Map<String, TandemClusterConnectionDetails> details = byCluster(connectionDetails, properties);
		Map<String, Resolved> resolved = new LinkedHashMap<>();
		properties.getClusters().forEach((name, cluster) -> {
			if (!ClusterClients.isValidName(name)) {
				throw new TandemConfigurationException("tandem.clusters." + name,
						"Cluster name '" + name + "' is not valid.",
						"Use " + ClusterClients.NAME_RULE + " in cluster names under tandem.clusters.");
			}
			TandemClusterConnectionDetails clusterDetails = details.get(name);
			List<String> bootstrapServers = (clusterDetails != null) ? clusterDetails.getBootstrapServers()
					: cluster.getBootstrapServers();
			if (bootstrapServers.stream().allMatch(String::isBlank)) {
				throw ClusterKeys.missingBootstrapServers(name, declaredKeys.getOrDefault(name, List.of()));
			}
			requireKafkaKeys(name, "producer", cluster.getProducer().keySet(), ProducerConfig.configNames());
			requireKafkaKeys(name, "consumer", cluster.getConsumer().keySet(), ConsumerConfig.configNames());
			requireKafkaKeys(name, "admin", cluster.getAdmin().keySet(), AdminClientConfig.configNames());
			Set<String> anyClient = new HashSet<>(ProducerConfig.configNames());
			anyClient.addAll(ConsumerConfig.configNames());
			anyClient.addAll(AdminClientConfig.configNames());
			requireKafkaKeys(name, "properties", cluster.getProperties().keySet(), anyClient);
			Layers layers = new Layers(name, cluster, String.join(",", bootstrapServers), clusterDetails, sslBundles);
			Map<String, Object> common = layers.resolve(defaults.common(), Map.of());
			Map<String, Object> producer = layers.resolve(defaults.producer(), cluster.getProducer());
			Map<String, Object> consumer = layers.resolve(defaults.consumer(), cluster.getConsumer());
			Map<String, Object> admin = layers.resolve(defaults.admin(), cluster.getAdmin());
			for (TandemClusterCustomizer customizer : customizers) {
				try {
					customizer.customizeProducer(name, producer, cluster.getProducer().keySet());
					customizer.customizeConsumer(name, consumer, cluster.getConsumer().keySet());
					customizer.customizeAdmin(name, admin, cluster.getAdmin().keySet());
				}
				catch (IllegalArgumentException ex) {
					throw new TandemConfigurationException("tandem.clusters." + name, "The client properties of cluster '"
							+ name + "' contradict each other: " + ex.getMessage(),
							"Fix tandem.clusters." + name + ".properties / .producer / .consumer (or spring.kafka.*, which "
									+ "every cluster inherits), or set tandem.failover.enabled=false to configure every "
									+ "client setting yourself.");
				}
			}
			resolved.put(name, new Resolved(Map.copyOf(common), Map.copyOf(producer), Map.copyOf(consumer),
					Map.copyOf(admin)));
		});
		this.clusters = Collections.unmodifiableMap(resolved);
	}

	/**
	 * Refuses Spring's dashed form of a Kafka client key ({@code max-poll-records}) in a section
	 * that passes its keys to Kafka as they are: Kafka would only log it as unused.
	 */
	private static void requireKafkaKeys(String cluster, String section, Set<String> keys, Set<String> kafkaKeys) {
		for (String key : keys) {
			String dotted = key.replace('-', '.');
			if (!kafkaKeys.contains(key) && !dotted.equals(key) && kafkaKeys.contains(dotted)) {
				String property = "tandem.clusters." + cluster + "." + section + "." + key;
				throw new TandemConfigurationException(property, property + " is not a Kafka client key: the "
						+ section + " section passes its keys to Kafka as they are, and Kafka would ignore this one.",
						"Write Kafka's own key: tandem.clusters." + cluster + "." + section + "." + dotted + ".");
			}
		}
	}

	private static Map<String, TandemClusterConnectionDetails> byCluster(List<TandemClusterConnectionDetails> details,
			TandemProperties properties) {
		Map<String, TandemClusterConnectionDetails> byCluster = new HashMap<>();
		for (TandemClusterConnectionDetails detail : details) {
			String cluster = detail.getCluster();
			if (!properties.getClusters().containsKey(cluster)) {
				throw new TandemConfigurationException("tandem.clusters." + cluster, "Connection details " + detail
						+ " are for cluster '" + cluster + "', which is not declared; declared clusters: "
						+ properties.getClusters().keySet() + ".", "Declare the cluster under tandem.clusters." + cluster
								+ " (any property of it, for example tandem.clusters." + cluster
								+ ".consumer.max.poll.records), or give the details a declared cluster's name.");
			}
			TandemClusterConnectionDetails previous = byCluster.put(cluster, detail);
			if (previous != null) {
				throw new TandemConfigurationException("tandem.clusters." + cluster, "Cluster '" + cluster
						+ "' has two connection details beans: " + previous + " and " + detail + ".",
						"Keep one TandemClusterConnectionDetails bean per cluster.");
			}
		}
		return byCluster;
	}

	/**
	 * The layers of one cluster's client properties, applied in order of precedence.
	 */
	private record Layers(String name, TandemProperties.Cluster cluster, String bootstrapServers,
			@Nullable TandemClusterConnectionDetails details, @Nullable SslBundles sslBundles) {

		Map<String, Object> resolve(Map<String, Object> inherited, Map<String, String> specific) {
			Map<String, Object> config = new HashMap<>(inherited);
			config.remove(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
			String bundle = this.cluster.getSsl().getBundle();
			if (StringUtils.hasText(bundle) || definesSsl(this.cluster.getProperties()) || definesSsl(specific)) {
				// the cluster configures its own SSL: an inherited bundle would override it
				removeBundle(config);
			}
			config.putAll(this.cluster.getProperties());
			config.putAll(specific);
			if (StringUtils.hasText(bundle)) {
				applyBundle(config, sslBundle(bundle.trim()), "tandem.clusters." + this.name + ".ssl.bundle");
			}
			config.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, this.bootstrapServers);
			if (this.details != null) {
				String protocol = this.details.getSecurityProtocol();
				if (StringUtils.hasText(protocol)) {
					config.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol);
				}
				SslBundle detailsBundle = this.details.getSslBundle();
				if (detailsBundle != null) {
					removeBundle(config);
					applyBundle(config, detailsBundle, "connection details of cluster '" + this.name + "'");
				}
			}
			return config;
		}

		private SslBundle sslBundle(String bundle) {
			String property = "tandem.clusters." + this.name + ".ssl.bundle";
			if (this.sslBundles == null) {
				throw new TandemConfigurationException(property, "Cluster '" + this.name + "' uses SSL bundle '" + bundle
						+ "' but no SSL bundles are configured.", "Define the bundle under spring.ssl.bundle.jks." + bundle
								+ " or spring.ssl.bundle.pem." + bundle + ", or remove " + property + ".");
			}
			try {
				return this.sslBundles.getBundle(bundle);
			}
			catch (NoSuchSslBundleException ex) {
				throw new TandemConfigurationException(property, "Cluster '" + this.name + "' uses SSL bundle '" + bundle
						+ "', which is not defined: " + ex.getMessage(), "Define the bundle under spring.ssl.bundle.jks."
								+ bundle + " or spring.ssl.bundle.pem." + bundle + ", or fix the name in " + property + ".");
			}
		}

		private static boolean definesSsl(Map<String, String> properties) {
			return properties.keySet().stream().anyMatch((key) -> key.startsWith("ssl."));
		}

		private static void removeBundle(Map<String, Object> config) {
			Object factory = config.get(SslConfigs.SSL_ENGINE_FACTORY_CLASS_CONFIG);
			String factoryName = (factory instanceof Class<?> type) ? type.getName() : String.valueOf(factory);
			if (SSL_BUNDLE_ENGINE_FACTORY.equals(factoryName)) {
				config.remove(SslConfigs.SSL_ENGINE_FACTORY_CLASS_CONFIG);
			}
			config.remove(SslBundle.class.getName());
		}

		private static void applyBundle(Map<String, Object> config, SslBundle bundle, String source) {
			if (!ClassUtils.isPresent(SSL_BUNDLE_ENGINE_FACTORY, TandemClusters.class.getClassLoader())) {
				throw new TandemConfigurationException(source.startsWith("tandem.") ? source : "tandem.clusters",
						"An SSL bundle is set by " + source + " but Spring Boot's Kafka module, which adapts bundles to "
								+ "Kafka clients, is not on the class path.",
						"Add org.springframework.boot:spring-boot-kafka (the Tandem starter brings it), or configure "
								+ "ssl.* client properties instead.");
			}
			config.put(SslConfigs.SSL_ENGINE_FACTORY_CLASS_CONFIG, SSL_BUNDLE_ENGINE_FACTORY);
			config.put(SslBundle.class.getName(), bundle);
		}

	}

	/**
	 * Returns the cluster names in configuration order.
	 * @return the names
	 */
	public List<String> names() {
		return List.copyOf(this.clusters.keySet());
	}

	/**
	 * Returns properties every client of the cluster gets (bootstrap servers, security).
	 * @param cluster the cluster name
	 * @return an immutable map
	 * @throws UnknownClusterException if no such cluster is configured
	 */
	public Map<String, Object> commonConfig(String cluster) {
		return get(cluster).common();
	}

	/**
	 * Returns the producer properties of a cluster.
	 * @param cluster the cluster name
	 * @return an immutable map
	 * @throws UnknownClusterException if no such cluster is configured
	 */
	public Map<String, Object> producerConfig(String cluster) {
		return get(cluster).producer();
	}

	/**
	 * Returns the consumer properties of a cluster.
	 * @param cluster the cluster name
	 * @return an immutable map
	 * @throws UnknownClusterException if no such cluster is configured
	 */
	public Map<String, Object> consumerConfig(String cluster) {
		return get(cluster).consumer();
	}

	/**
	 * Returns the admin client properties of a cluster.
	 * @param cluster the cluster name
	 * @return an immutable map
	 * @throws UnknownClusterException if no such cluster is configured
	 */
	public Map<String, Object> adminConfig(String cluster) {
		return get(cluster).admin();
	}

	private Resolved get(String cluster) {
		Resolved resolved = this.clusters.get(cluster);
		if (resolved == null) {
			throw new UnknownClusterException(cluster, names());
		}
		return resolved;
	}

	private record Resolved(Map<String, Object> common, Map<String, Object> producer, Map<String, Object> consumer,
			Map<String, Object> admin) {
	}

	/**
	 * A cluster name that is not configured under {@code tandem.clusters}.
	 *
	 * @since 0.1.0
	 */
	public static class UnknownClusterException extends TandemConfigurationException {

		private static final long serialVersionUID = 1L;

		public UnknownClusterException(String cluster, List<String> known) {
			super("tandem.clusters." + cluster, "Kafka cluster '" + cluster + "' is not configured; configured clusters: "
					+ known + ".", "Add tandem.clusters." + cluster + ".bootstrap-servers, or use one of " + known + ".");
		}

	}

}
