package dev.tandem.coordinator.service;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.tandem.clients.ClusterClients;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;
import dev.tandem.transaction.HangingTransactionsCheck;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundles;

/**
 * The Kafka clusters of the apps the coordinator service serves
 * ({@code tandem.coordinator.server.clusters.*}, optional) and the check of their hanging
 * transactions ({@code tandem.coordinator.server.hanging.*}): with clusters set, the admin API
 * lists the served apps' transactions open on those brokers with nobody to end them, and aborts
 * one by hand ({@link CoordinatorHangingTransactionsEndpoint}).
 *
 * @since 0.1.0
 */
@ConfigurationProperties("tandem.coordinator.server")
public class CoordinatorServerKafkaProperties {

	/**
	 * Kafka clusters of the served apps, by the name the apps give them in
	 * tandem.clusters.&lt;name&gt; (the name is part of their transactional ids). Without any,
	 * the admin API lists no hanging transactions.
	 */
	private final Map<String, Cluster> clusters = new LinkedHashMap<>();

	private final Hanging hanging = new Hanging();

	public Map<String, Cluster> getClusters() {
		return this.clusters;
	}

	public Hanging getHanging() {
		return this.hanging;
	}

	/**
	 * Builds the clusters' client configuration.
	 * @param sslBundles the SSL bundles, or null when none are configured
	 * @return the clusters in configuration order
	 * @throws IllegalStateException if a cluster has no bootstrap servers or names an unknown SSL
	 *     bundle, naming the property
	 */
	ClusterClients clusterClients(@Nullable SslBundles sslBundles) {
		ClusterClients.Builder builder = ClusterClients.builder();
		this.clusters.forEach((name, cluster) -> {
			String prefix = "tandem.coordinator.server.clusters." + name;
			if (!ClusterClients.isValidName(name)) {
				throw new IllegalStateException(prefix + ": a cluster name must have " + ClusterClients.NAME_RULE);
			}
			if (cluster.getBootstrapServers() == null || cluster.getBootstrapServers().isBlank()) {
				throw new IllegalStateException(prefix + ".bootstrap-servers is not set");
			}
			Map<String, Object> config = new HashMap<>(cluster.getProperties());
			config.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, cluster.getBootstrapServers());
			String bundleName = cluster.getSsl().getBundle();
			if (bundleName != null && !bundleName.isBlank()) {
				if (sslBundles == null) {
					throw new IllegalStateException(prefix + ".ssl.bundle is set but no SslBundles bean exists");
				}
				try {
					config.put(KafkaSslBundleEngineFactory.BUNDLE_CONFIG, sslBundles.getBundle(bundleName));
				}
				catch (NoSuchSslBundleException ex) {
					throw new IllegalStateException(prefix + ".ssl.bundle names SSL bundle '" + bundleName
							+ "' but there is none: define it under spring.ssl.bundle.jks." + bundleName
							+ " or spring.ssl.bundle.pem." + bundleName);
				}
				config.put(SslConfigs.SSL_ENGINE_FACTORY_CLASS_CONFIG, KafkaSslBundleEngineFactory.class);
				config.putIfAbsent(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SSL");
			}
			builder.cluster(name, config);
		});
		return builder.build();
	}

	/**
	 * One Kafka cluster, reached by an admin client.
	 */
	public static class Cluster {

		/**
		 * Comma-separated host:port list of the cluster's brokers.
		 */
		private @Nullable String bootstrapServers;

		/**
		 * Client properties of the admin client (security.protocol, sasl.*, ...). It lists and
		 * describes transactions (DESCRIBE on the transactional ids) and fences one on an
		 * operator's abort (WRITE on it).
		 */
		private final Map<String, String> properties = new LinkedHashMap<>();

		private final Ssl ssl = new Ssl();

		public @Nullable String getBootstrapServers() {
			return this.bootstrapServers;
		}

		public void setBootstrapServers(@Nullable String bootstrapServers) {
			this.bootstrapServers = bootstrapServers;
		}

		public Map<String, String> getProperties() {
			return this.properties;
		}

		public Ssl getSsl() {
			return this.ssl;
		}

	}

	/**
	 * TLS of one cluster's admin client.
	 */
	public static class Ssl {

		/**
		 * Name of the Spring Boot SSL bundle (spring.ssl.bundle.*) of the admin client; sets
		 * security.protocol SSL unless the properties set it.
		 */
		private @Nullable String bundle;

		public @Nullable String getBundle() {
			return this.bundle;
		}

		public void setBundle(@Nullable String bundle) {
			this.bundle = bundle;
		}

	}

	/**
	 * The check behind gauge tandem.transaction.hanging and the admin API's list.
	 */
	public static class Hanging {

		/**
		 * The served apps' tandem.transaction.timeout: a transaction of theirs open longer than
		 * this hangs, whatever its instance's lease.
		 */
		private Duration transactionTimeout = CrossClusterTransactionManagerBuilder.DEFAULT_TRANSACTION_TIMEOUT;

		/**
		 * How often the hanging transactions are counted (gauge tandem.transaction.hanging, a WARN
		 * per transaction); 0 = off.
		 */
		private Duration checkInterval = HangingTransactionsCheck.DEFAULT_INTERVAL;

		/**
		 * Bound of each read of one check or call (per cluster, and of the decision log).
		 */
		private Duration timeout = Duration.ofSeconds(10);

		public Duration getTransactionTimeout() {
			return this.transactionTimeout;
		}

		public void setTransactionTimeout(Duration transactionTimeout) {
			this.transactionTimeout = transactionTimeout;
		}

		public Duration getCheckInterval() {
			return this.checkInterval;
		}

		public void setCheckInterval(Duration checkInterval) {
			this.checkInterval = checkInterval;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

	}

}
