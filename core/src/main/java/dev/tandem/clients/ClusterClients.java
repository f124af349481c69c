package dev.tandem.clients;

import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.config.types.Password;
import org.jspecify.annotations.Nullable;

/**
 * The configured Kafka clusters of one app and the client configuration of each, by client type
 * (producer, consumer, admin). Immutable and thread-safe.
 * <p>
 * Each map given for a cluster may hold keys of every client type: a client takes the keys its
 * type knows ({@link #only(Map, Set)}); producers and consumers also keep the
 * {@value #TANDEM_CONFIG_PREFIX} keys that configure Tandem's own client interceptors (the leader
 * cache's registry and cluster name).
 *
 * @since 0.1.0
 */
public final class ClusterClients {

	/** Prefix of the client properties that Tandem's own interceptors read. */
	public static final String TANDEM_CONFIG_PREFIX = "tandem.";

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]+");

	/** The rule a cluster name must follow, as shown in error messages. */
	public static final String NAME_RULE = "letters, digits, '-' and '_' only";

	private final Map<String, Configs> clusters;

	private ClusterClients(Map<String, Configs> clusters) {
		this.clusters = Collections.unmodifiableMap(new LinkedHashMap<>(clusters));
	}

	/**
	 * Returns a builder.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Whether a cluster name is valid: it becomes part of transactional ids and metric tags.
	 * @param name the name
	 * @return whether it has {@value #NAME_RULE}, and at least one character
	 */
	public static boolean isValidName(String name) {
		return NAME.matcher(name).matches();
	}

	/**
	 * Returns the keys of a configuration that one client type knows, and the objects client plugins
	 * need ({@link #isPluginObject(Object)}).
	 * @param config any client configuration
	 * @param configNames the client type's names, for example {@link ProducerConfig#configNames()}
	 * @return a new mutable map
	 */
	public static Map<String, Object> only(Map<String, ?> config, Set<String> configNames) {
		return filtered(config, configNames, false);
	}

	private static Map<String, Object> filtered(Map<String, ?> config, Set<String> configNames,
			boolean tandemKeys) {
		Map<String, Object> result = new HashMap<>();
		config.forEach((key, value) -> {
			if (configNames.contains(key) || (tandemKeys && key.startsWith(TANDEM_CONFIG_PREFIX))
					|| isPluginObject(value)) {
				result.put(key, value);
			}
		});
		return result;
	}

	/**
	 * Returns whether a property value is an object for a client plugin rather than a setting: such
	 * an object travels in the properties under a key of its own, as Spring Boot's SSL bundle does
	 * for its {@code ssl.engine.factory.class}, and the plugin cannot work without it, so every
	 * client type keeps it.
	 * @param value the value
	 * @return false for null, strings, numbers, booleans, classes, lists and passwords
	 */
	public static boolean isPluginObject(@Nullable Object value) {
		return !(value == null || value instanceof CharSequence || value instanceof Number || value instanceof Boolean
				|| value instanceof Class<?> || value instanceof List<?> || value instanceof Password);
	}

	/**
	 * Returns the cluster names in configuration order.
	 * @return the names
	 */
	public List<String> names() {
		return List.copyOf(this.clusters.keySet());
	}

	/**
	 * Returns the producer configuration of a cluster.
	 * @param cluster the cluster name
	 * @return a new mutable map of producer keys and {@value #TANDEM_CONFIG_PREFIX} keys
	 * @throws IllegalArgumentException if the cluster is unknown
	 */
	public Map<String, Object> producerConfig(String cluster) {
		return filtered(configs(cluster).producer(), ProducerConfig.configNames(), true);
	}

	/**
	 * Returns the consumer configuration of a cluster.
	 * @param cluster the cluster name
	 * @return a new mutable map of consumer keys and {@value #TANDEM_CONFIG_PREFIX} keys
	 * @throws IllegalArgumentException if the cluster is unknown
	 */
	public Map<String, Object> consumerConfig(String cluster) {
		return filtered(configs(cluster).consumer(), ConsumerConfig.configNames(), true);
	}

	/**
	 * Returns the configuration of a consumer that reads only committed data and commits no offsets
	 * itself ({@code isolation.level=read_committed}, {@code enable.auto.commit=false}): the one
	 * set-up of every consumer whose offsets a transaction commits, and of Tandem's own readers.
	 * @param cluster the cluster name
	 * @param overrides consumer properties applied over the cluster's (for example {@code group.id})
	 * @return a new mutable map
	 * @throws IllegalArgumentException if the cluster is unknown
	 */
	public Map<String, Object> readCommittedConsumerConfig(String cluster, Map<String, ?> overrides) {
		Map<String, Object> config = consumerConfig(cluster);
		config.putAll(overrides);
		return readCommitted(config);
	}

	private static Map<String, Object> readCommitted(Map<String, Object> config) {
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		return config;
	}

	/**
	 * Returns the configuration of a short-lived {@code read_committed} reader of a cluster that
	 * belongs to no group and runs no interceptor (Tandem's marker and recovery reads).
	 * @param cluster the cluster name
	 * @return a new mutable map
	 * @throws IllegalArgumentException if the cluster is unknown
	 */
	public Map<String, Object> readerConfig(String cluster) {
		Map<String, Object> config = readCommitted(only(configs(cluster).consumer(), ConsumerConfig.configNames()));
		config.remove(ConsumerConfig.GROUP_ID_CONFIG);
		config.remove(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG);
		config.remove(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG);
		return config;
	}

	/**
	 * Returns the admin configuration of a cluster.
	 * @param cluster the cluster name
	 * @return a new mutable map of admin keys
	 * @throws IllegalArgumentException if the cluster is unknown
	 */
	public Map<String, Object> adminConfig(String cluster) {
		return only(configs(cluster).admin(), AdminClientConfig.configNames());
	}

	/**
	 * Creates an admin client of a cluster whose every call is bounded by the timeout
	 * ({@link BoundedAdmin}); the caller closes it.
	 * @param cluster the cluster name
	 * @param timeout the bound of each call
	 * @return the admin client
	 * @throws IllegalArgumentException if the cluster is unknown
	 */
	public Admin admin(String cluster, Duration timeout) {
		return BoundedAdmin.create(configs(cluster).admin(), timeout);
	}

	/**
	 * Returns the bootstrap servers of a cluster, for messages.
	 * @param cluster the cluster name
	 * @return the {@code bootstrap.servers} value
	 * @throws IllegalArgumentException if the cluster is unknown
	 */
	public String bootstrapServers(String cluster) {
		return String.valueOf(configs(cluster).producer().get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG));
	}

	private Configs configs(String cluster) {
		Configs configs = this.clusters.get(cluster);
		if (configs == null) {
			throw new IllegalArgumentException("Unknown cluster '" + cluster + "'; configured clusters: "
					+ this.clusters.keySet());
		}
		return configs;
	}

	private record Configs(Map<String, Object> producer, Map<String, Object> consumer, Map<String, Object> admin) {
	}

	/**
	 * Builds {@link ClusterClients}. Not thread-safe.
	 *
	 * @since 0.1.0
	 */
	public static final class Builder {

		private final Map<String, Configs> clusters = new LinkedHashMap<>();

		private Builder() {
		}

		/**
		 * Adds a cluster whose clients share one configuration; each client type takes the keys it
		 * knows. Its {@code interceptor.classes} are taken as the producers' (consumers get none).
		 * @param name the cluster name ({@value ClusterClients#NAME_RULE})
		 * @param config client properties, at least {@code bootstrap.servers}
		 * @return this builder
		 * @throws IllegalArgumentException if the name is invalid, {@code bootstrap.servers} is
		 *     missing, or {@code transactional.id} is set
		 */
		public Builder cluster(String name, Map<String, ?> config) {
			Map<String, Object> consumer = new HashMap<>(config);
			consumer.remove(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG);
			return cluster(name, config, consumer, config);
		}

		/**
		 * Adds a cluster with a configuration per client type.
		 * @param name the cluster name ({@value ClusterClients#NAME_RULE})
		 * @param producer producer properties, at least {@code bootstrap.servers}
		 * @param consumer consumer properties, at least {@code bootstrap.servers}
		 * @param admin admin client properties, at least {@code bootstrap.servers}
		 * @return this builder
		 * @throws IllegalArgumentException if the name is invalid, {@code bootstrap.servers} is
		 *     missing from one of them, or {@code transactional.id} is set
		 */
		public Builder cluster(String name, Map<String, ?> producer, Map<String, ?> consumer, Map<String, ?> admin) {
			if (!isValidName(name)) {
				throw new IllegalArgumentException("Cluster name '" + name + "' must have " + NAME_RULE);
			}
			for (Map<String, ?> config : List.of(producer, consumer, admin)) {
				if (!config.containsKey(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
					throw new IllegalArgumentException("Cluster '" + name + "' needs bootstrap.servers");
				}
			}
			if (producer.containsKey(ProducerConfig.TRANSACTIONAL_ID_CONFIG)) {
				throw new IllegalArgumentException("Cluster '" + name + "': transactional.id is set by Tandem "
						+ "(<id-prefix>.<cluster>.<instance-id>.<slot>); remove it");
			}
			this.clusters.put(name, new Configs(copy(producer), copy(consumer), copy(admin)));
			return this;
		}

		private static Map<String, Object> copy(Map<String, ?> config) {
			return Collections.unmodifiableMap(new HashMap<>(config));
		}

		/**
		 * Whether no cluster was added.
		 * @return whether the builder is empty
		 */
		public boolean isEmpty() {
			return this.clusters.isEmpty();
		}

		/**
		 * Builds the clusters.
		 * @return the immutable cluster clients
		 */
		public ClusterClients build() {
			return new ClusterClients(this.clusters);
		}

	}

}
