package dev.tandem.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Several named, independent Kafka clusters running in this JVM, for integration tests that
 * span clusters.
 * <p>
 * Each cluster is a KRaft cluster built on Kafka's own test kit
 * ({@code org.apache.kafka.common.test.KafkaClusterTestKit}) with one dedicated controller and
 * the requested number of brokers, all in-process. Clusters are started one after another and
 * share nothing but the JVM: separate cluster ids, ports, log directories and metadata
 * quorums. Brokers run with settings tuned for fast, deterministic tests (see
 * {@link Builder#cluster(String, int)}), which callers may override per cluster or for all
 * clusters.
 * <pre class="code">
 * try (EmbeddedKafkaClusters clusters = EmbeddedKafkaClusters.builder()
 * 		.cluster("east", 3)
 * 		.cluster("west", 3)
 * 		.build()
 * 		.start()) {
 * 	EmbeddedKafkaCluster east = clusters.cluster("east");
 * 	east.createTopic("orders", 3, (short) 3);
 * 	...
 * }
 * </pre>
 * <p>
 * {@link #close()} closes the clusters' admin clients, shuts every node down, waits for the
 * test kit's threads to end and deletes the temporary directory that holds all log and
 * metadata directories. Instances are thread-safe.
 *
 * @author Tandem
 * @since 0.1.0
 * @see EmbeddedKafkaCluster
 * @see EnableEmbeddedKafkaClusters
 */
public final class EmbeddedKafkaClusters implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(EmbeddedKafkaClusters.class);

	private static final Pattern CLUSTER_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");

	private final List<ClusterSpec> specs;

	private final Duration operationTimeout;

	private final Object lifecycleMonitor = new Object();

	private final Map<String, EmbeddedKafkaCluster> clusters = new LinkedHashMap<>();

	private State state = State.CREATED;

	private @Nullable Path baseDirectory;

	private EmbeddedKafkaClusters(List<ClusterSpec> specs, Duration operationTimeout) {
		this.specs = List.copyOf(specs);
		this.operationTimeout = operationTimeout;
	}

	/**
	 * Return a new builder.
	 * @return a builder with no clusters declared
	 * @since 0.1.0
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Start every declared cluster, one after another in declaration order, and wait until
	 * all of each cluster's brokers are registered and unfenced. Typically takes a few seconds
	 * per cluster. If a cluster fails to start, the clusters already started are closed and
	 * the temporary directory is deleted before the exception is thrown.
	 * @return this instance, for chaining
	 * @throws IllegalStateException if {@code start()} was already called or the instance is
	 * closed
	 * @throws EmbeddedKafkaClusterException if a cluster fails to start
	 * @since 0.1.0
	 */
	public EmbeddedKafkaClusters start() {
		synchronized (this.lifecycleMonitor) {
			transition(State.CREATED, State.STARTING);
			long started = System.nanoTime();
			try {
				Path directory = Files.createTempDirectory("tandem-kafka-");
				this.baseDirectory = directory;
				for (ClusterSpec spec : this.specs) {
					EmbeddedKafkaCluster cluster = EmbeddedKafkaCluster.start(spec, directory.resolve(spec.name()),
							this.operationTimeout);
					this.clusters.put(spec.name(), cluster);
				}
			}
			catch (IOException | RuntimeException ex) {
				logger.error("Failed to start embedded Kafka clusters {}; closing the ones already started", names(),
						ex);
				closeQuietly();
				throw (ex instanceof EmbeddedKafkaClusterException clusterException) ? clusterException
						: new EmbeddedKafkaClusterException("Failed to start embedded Kafka clusters " + names(), ex);
			}
			transition(State.STARTING, State.RUNNING);
			logger.info("Started embedded Kafka clusters {} in {} ms", names(),
					Duration.ofNanos(System.nanoTime() - started).toMillis());
			return this;
		}
	}

	/**
	 * Return the started cluster with the given name.
	 * @param name the cluster name given to {@link Builder#cluster(String, int)}
	 * @return the cluster
	 * @throws IllegalArgumentException if no cluster has that name
	 * @throws IllegalStateException if the clusters are not running
	 * @since 0.1.0
	 */
	public EmbeddedKafkaCluster cluster(String name) {
		synchronized (this.lifecycleMonitor) {
			assertRunning();
			EmbeddedKafkaCluster cluster = this.clusters.get(name);
			if (cluster == null) {
				throw new IllegalArgumentException("No embedded Kafka cluster named '" + name + "'; known: " + names());
			}
			return cluster;
		}
	}

	/**
	 * Return all started clusters in declaration order.
	 * @return an unmodifiable list of the clusters
	 * @throws IllegalStateException if the clusters are not running
	 * @since 0.1.0
	 */
	public List<EmbeddedKafkaCluster> clusters() {
		synchronized (this.lifecycleMonitor) {
			assertRunning();
			return List.copyOf(this.clusters.values());
		}
	}

	/**
	 * Return the bootstrap servers of every cluster keyed by cluster name, in declaration
	 * order; handy for properties such as {@code tandem.clusters.<name>.bootstrap-servers}.
	 * @return an unmodifiable map of cluster name to {@code host:port,...}
	 * @throws IllegalStateException if the clusters are not running
	 * @since 0.1.0
	 */
	public Map<String, String> bootstrapServers() {
		synchronized (this.lifecycleMonitor) {
			assertRunning();
			Map<String, String> bootstrapServers = new LinkedHashMap<>();
			this.clusters.forEach((name, cluster) -> bootstrapServers.put(name, cluster.bootstrapServers()));
			return Collections.unmodifiableMap(bootstrapServers);
		}
	}

	/**
	 * Return the Spring properties that point a Tandem application at every cluster:
	 * {@code tandem.clusters.<name>.bootstrap-servers} and, for a cluster declared with
	 * {@link Builder#saslPlainCluster(String, int)}, its
	 * {@link EmbeddedKafkaCluster#clientSecurityProperties() client security properties} under
	 * {@code tandem.clusters.<name>.properties.*}.
	 * @return a new, mutable map of property name to value, clusters in declaration order
	 * @throws IllegalStateException if the clusters are not running
	 * @since 0.1.0
	 */
	public Map<String, Object> tandemProperties() {
		Map<String, Object> properties = new LinkedHashMap<>();
		for (EmbeddedKafkaCluster cluster : clusters()) {
			String prefix = "tandem.clusters." + cluster.name();
			properties.put(prefix + ".bootstrap-servers", cluster.bootstrapServers());
			cluster.clientSecurityProperties()
				.forEach((key, value) -> properties.put(prefix + ".properties." + key, String.valueOf(value)));
		}
		return properties;
	}

	/**
	 * Return the names of the declared clusters in declaration order.
	 * @return an unmodifiable list of names
	 * @since 0.1.0
	 */
	public List<String> names() {
		return this.specs.stream().map(ClusterSpec::name).toList();
	}

	/**
	 * Refuse broker stops and restarts on every cluster from now on, for clusters shared by
	 * several test classes.
	 * @param reason the message of the exception a stop or restart throws
	 * @throws IllegalStateException if the clusters are not running
	 */
	void refuseBrokerChanges(String reason) {
		clusters().forEach((cluster) -> cluster.refuseBrokerChanges(reason));
	}

	/**
	 * Return the directory holding every cluster's log and metadata directories, or
	 * {@code null} before {@link #start()}.
	 */
	@Nullable Path baseDirectory() {
		synchronized (this.lifecycleMonitor) {
			return this.baseDirectory;
		}
	}

	/**
	 * Close every cluster: first all admin clients, then each cluster's nodes (brokers before
	 * controllers), then delete the temporary directory. Idempotent; blocks until the test
	 * kits' threads have ended (usually a few seconds).
	 * @throws EmbeddedKafkaClusterException if a cluster fails to shut down cleanly or
	 * recorded a fault while running; every cluster is still closed and the directory deleted
	 * @since 0.1.0
	 */
	@Override
	public void close() {
		synchronized (this.lifecycleMonitor) {
			if (this.state == State.CLOSED) {
				return;
			}
			List<Exception> failures = closeQuietly();
			if (!failures.isEmpty()) {
				EmbeddedKafkaClusterException exception = new EmbeddedKafkaClusterException(
						"Failed to close embedded Kafka clusters " + names() + " cleanly", failures.get(0));
				failures.subList(1, failures.size()).forEach(exception::addSuppressed);
				throw exception;
			}
		}
	}

	private List<Exception> closeQuietly() {
		long started = System.nanoTime();
		this.state = State.CLOSED;
		List<Exception> failures = new ArrayList<>();
		List<EmbeddedKafkaCluster> running = new ArrayList<>(this.clusters.values());
		for (EmbeddedKafkaCluster cluster : running) {
			try {
				cluster.closeAdmin();
			}
			catch (RuntimeException ex) {
				failures.add(ex);
			}
		}
		Collections.reverse(running);
		for (EmbeddedKafkaCluster cluster : running) {
			try {
				cluster.closeTestKit();
			}
			catch (Exception ex) {
				logger.warn("Embedded Kafka cluster '{}' did not close cleanly", cluster.name(), ex);
				failures.add(ex);
			}
		}
		this.clusters.clear();
		Path directory = this.baseDirectory;
		if (directory != null) {
			try {
				Directories.deleteRecursively(directory);
			}
			catch (IOException | UncheckedIOException ex) {
				failures.add(ex);
			}
		}
		logger.info("Closed embedded Kafka clusters {} in {} ms", names(),
				Duration.ofNanos(System.nanoTime() - started).toMillis());
		return failures;
	}

	private void transition(State from, State to) {
		if (this.state != from) {
			throw new IllegalStateException(
					"Embedded Kafka clusters " + names() + " are " + this.state + ", expected " + from);
		}
		this.state = to;
	}

	private void assertRunning() {
		if (this.state != State.RUNNING) {
			throw new IllegalStateException(
					"Embedded Kafka clusters " + names() + " are " + this.state + ", not RUNNING; call start() first");
		}
	}

	@Override
	public String toString() {
		synchronized (this.lifecycleMonitor) {
			return "EmbeddedKafkaClusters" + names() + " " + this.state;
		}
	}

	/**
	 * Lifecycle of an {@link EmbeddedKafkaClusters}; {@link #transition} is the only place
	 * that moves between states.
	 */
	private enum State {

		CREATED, STARTING, RUNNING, CLOSED

	}

	/**
	 * Builder for {@link EmbeddedKafkaClusters}. Not thread-safe; {@link #build()} may be
	 * called more than once, each call returning a new, unstarted instance.
	 *
	 * @since 0.1.0
	 */
	public static final class Builder {

		private final Map<String, ClusterSpec> clusters = new LinkedHashMap<>();

		private final Map<String, Object> brokerProperties = new LinkedHashMap<>();

		private @Nullable Integer minInSyncReplicas;

		private Duration operationTimeout = Duration.ofSeconds(60);

		private Builder() {
		}

		/**
		 * Declare a cluster with the default broker settings.
		 * <p>
		 * With {@code b} brokers the defaults are: internal topics and
		 * {@code default.replication.factor} with replication factor {@code min(3, b)},
		 * {@code transaction.state.log.min.isr} and {@code min.insync.replicas}
		 * {@code min(2, b)}, three partitions for the offsets and transaction state topics,
		 * {@code group.initial.rebalance.delay.ms=0}, {@code broker.session.timeout.ms=2000}
		 * with {@code broker.heartbeat.interval.ms=500} (a restarted broker is back in about
		 * a second, a lost one is fenced after two), {@code replica.fetch.backoff.ms=50},
		 * {@code auto.create.topics.enable=false}, {@code unclean.leader.election.enable=false}
		 * and the latest production metadata version with unstable APIs and features off.
		 * @param name the cluster name, unique, letters, digits, {@code .}, {@code _} or
		 * {@code -}
		 * @param brokers the number of brokers, 1 or more; ids are {@code 0..brokers-1}
		 * @return this builder
		 * @throws IllegalArgumentException if the name is invalid or already declared, or
		 * {@code brokers < 1}
		 * @since 0.1.0
		 */
		public Builder cluster(String name, int brokers) {
			return cluster(name, brokers, Map.of());
		}

		/**
		 * Declare a cluster whose brokers get extra properties on top of the defaults and of
		 * {@link #brokerProperty(String, Object) properties for all clusters}.
		 * @param name the cluster name, unique, letters, digits, {@code .}, {@code _} or
		 * {@code -}
		 * @param brokers the number of brokers, 1 or more; ids are {@code 0..brokers-1}
		 * @param brokerProperties Kafka server properties for this cluster's nodes (brokers and
		 * controller), overriding any other value for the same key
		 * @return this builder
		 * @throws IllegalArgumentException if the name is invalid or already declared, or
		 * {@code brokers < 1}
		 * @since 0.1.0
		 */
		public Builder cluster(String name, int brokers, Map<String, ?> brokerProperties) {
			Objects.requireNonNull(name, "name must not be null");
			Objects.requireNonNull(brokerProperties, "brokerProperties must not be null");
			if (!CLUSTER_NAME.matcher(name).matches()) {
				throw new IllegalArgumentException("Invalid cluster name '" + name
						+ "': use letters, digits, '.', '_' or '-', starting with a letter or digit");
			}
			if (this.clusters.containsKey(name)) {
				throw new IllegalArgumentException("Cluster '" + name + "' is already declared");
			}
			if (brokers < 1) {
				throw new IllegalArgumentException(
						"Cluster '" + name + "' needs at least 1 broker but " + brokers + " were requested");
			}
			this.clusters.put(name, new ClusterSpec(name, brokers, Map.copyOf(brokerProperties), false));
			return this;
		}

		/**
		 * Declare a cluster whose brokers accept only {@code SASL_PLAINTEXT} connections with
		 * mechanism {@code PLAIN} (controller and inter-broker traffic too), with ACLs on and
		 * {@link EmbeddedKafkaCluster#SASL_USERNAME} as the only (super) user; every other
		 * setting as {@link #cluster(String, int)}. Clients need
		 * {@link EmbeddedKafkaCluster#clientSecurityProperties()}; the helpers of
		 * {@link EmbeddedKafkaCluster} add them. The Kafka test kit sets the JVM-wide
		 * {@code java.security.auth.login.config} for the brokers' side.
		 * @param name the cluster name, unique, letters, digits, {@code .}, {@code _} or
		 * {@code -}
		 * @param brokers the number of brokers, 1 or more; ids are {@code 0..brokers-1}
		 * @return this builder
		 * @throws IllegalArgumentException if the name is invalid or already declared, or
		 * {@code brokers < 1}
		 * @since 0.1.0
		 */
		public Builder saslPlainCluster(String name, int brokers) {
			cluster(name, brokers, Map.of());
			ClusterSpec declared = this.clusters.get(name);
			this.clusters.put(name, new ClusterSpec(name, brokers, declared.brokerProperties(), true));
			return this;
		}

		/**
		 * Set a Kafka server property on the nodes (brokers and controller) of every cluster,
		 * overriding the default; per-cluster properties still win.
		 * @param key the property name, such as {@code log.segment.bytes}
		 * @param value the value, a {@code String} or a value Kafka's config parser accepts
		 * @return this builder
		 * @since 0.1.0
		 */
		public Builder brokerProperty(String key, Object value) {
			this.brokerProperties.put(Objects.requireNonNull(key, "key must not be null"),
					Objects.requireNonNull(value, "value must not be null"));
			return this;
		}

		/**
		 * Set {@code min.insync.replicas} for every cluster instead of {@code min(2, brokers)};
		 * capped at the cluster's broker count.
		 * @param minInSyncReplicas the minimum number of in-sync replicas, 1 or more
		 * @return this builder
		 * @throws IllegalArgumentException if {@code minInSyncReplicas < 1}
		 * @since 0.1.0
		 */
		public Builder minInSyncReplicas(int minInSyncReplicas) {
			if (minInSyncReplicas < 1) {
				throw new IllegalArgumentException("minInSyncReplicas must be at least 1 but was " + minInSyncReplicas);
			}
			this.minInSyncReplicas = minInSyncReplicas;
			return this;
		}

		/**
		 * Set how long cluster operations (topic creation, broker restart, leadership moves,
		 * admin calls) wait for the cluster to converge before failing. Default 60 seconds.
		 * @param operationTimeout the timeout, positive
		 * @return this builder
		 * @throws IllegalArgumentException if the timeout is zero or negative
		 * @since 0.1.0
		 */
		public Builder operationTimeout(Duration operationTimeout) {
			Objects.requireNonNull(operationTimeout, "operationTimeout must not be null");
			if (operationTimeout.isZero() || operationTimeout.isNegative()) {
				throw new IllegalArgumentException("operationTimeout must be positive but was " + operationTimeout);
			}
			this.operationTimeout = operationTimeout;
			return this;
		}

		/**
		 * Build an unstarted instance; call {@link EmbeddedKafkaClusters#start()} next.
		 * @return the clusters, not yet started
		 * @throws IllegalStateException if no cluster was declared
		 * @since 0.1.0
		 */
		public EmbeddedKafkaClusters build() {
			if (this.clusters.isEmpty()) {
				throw new IllegalStateException("Declare at least one cluster with cluster(name, brokers)");
			}
			List<ClusterSpec> specs = new ArrayList<>();
			for (ClusterSpec declared : this.clusters.values()) {
				Map<String, Object> properties = new LinkedHashMap<>(defaultBrokerProperties(declared.brokers()));
				properties.putAll(this.brokerProperties);
				properties.putAll(declared.brokerProperties());
				specs.add(new ClusterSpec(declared.name(), declared.brokers(), Collections.unmodifiableMap(properties),
						declared.saslPlain()));
			}
			return new EmbeddedKafkaClusters(specs, this.operationTimeout);
		}

		private Map<String, Object> defaultBrokerProperties(int brokers) {
			return BrokerDefaults.of(brokers, this.minInSyncReplicas);
		}

	}

	/**
	 * What to start for one cluster.
	 * @param name the cluster name
	 * @param brokers the number of brokers
	 * @param brokerProperties every Kafka server property to set on the cluster's nodes
	 * @param saslPlain whether every listener is SASL_PLAINTEXT with mechanism PLAIN
	 */
	record ClusterSpec(String name, int brokers, Map<String, Object> brokerProperties, boolean saslPlain) {
	}

}
