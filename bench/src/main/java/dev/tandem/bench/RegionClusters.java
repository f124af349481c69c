package dev.tandem.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.jspecify.annotations.Nullable;

import dev.tandem.test.EmbeddedKafkaCluster;
import dev.tandem.test.EmbeddedKafkaClusters;
import dev.tandem.test.KafkaProcessCluster;
import dev.tandem.test.LatencyProxy;

/**
 * The two clusters of a bench that copies from one to the other (issue 25), in one of two
 * set-ups:
 * <ul>
 * <li><b>loopback</b> ({@link #inProcess}): Kafka's KRaft test kit in this JVM, every client
 * connects directly;</li>
 * <li><b>regions</b> ({@link #processes}): each cluster's controller and brokers in JVMs of
 * their own ({@link KafkaProcessCluster}), the source's client listeners behind a
 * {@link LatencyProxy} each, so that a copier placed beside the target ("consume remote, produce
 * local") pays the round trip time set with {@link #roundTrip(int)} on every request to the
 * source, while the source's own producers and consumer groups, the target's readers and both
 * admin clients connect directly.</li>
 * </ul>
 * {@link Cluster#bootstrapServers()} is the address of a client in the cluster's own region;
 * {@link Cluster#copierBootstrapServers()} the one the copier uses. Not thread-safe for
 * {@link #roundTrip(int)} and {@link #close()}; the rest is.
 *
 * @since 0.1.0
 */
public final class RegionClusters implements AutoCloseable {

	/** Broker JVM options of the process set-up (a benchmark's, not a test's). */
	public static final List<String> BROKER_JVM = List.of("-Xms512m", "-Xmx1g", "-XX:+UseG1GC",
			"-XX:MaxGCPauseMillis=20", "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true");

	private final Cluster source;

	private final Cluster target;

	private final @Nullable EmbeddedKafkaClusters embedded;

	private final List<KafkaProcessCluster> processes;

	private final @Nullable KafkaProcessCluster sourceProcess;

	private int roundTripMs;

	private RegionClusters(Cluster source, Cluster target, @Nullable EmbeddedKafkaClusters embedded,
			List<KafkaProcessCluster> processes, @Nullable KafkaProcessCluster sourceProcess) {
		this.source = source;
		this.target = target;
		this.embedded = embedded;
		this.processes = processes;
		this.sourceProcess = sourceProcess;
	}

	/**
	 * Starts both clusters in this JVM (loopback, no round trip).
	 * @param source the source cluster's name
	 * @param target the target cluster's name
	 * @param brokers brokers per cluster
	 * @param brokerProperties extra broker settings
	 * @return the running clusters
	 */
	public static RegionClusters inProcess(String source, String target, int brokers,
			Map<String, String> brokerProperties) {
		EmbeddedKafkaClusters.Builder builder = EmbeddedKafkaClusters.builder().operationTimeout(Duration.ofMinutes(2));
		brokerProperties.forEach(builder::brokerProperty);
		builder.cluster(source, brokers).cluster(target, brokers);
		EmbeddedKafkaClusters clusters = builder.build().start();
		return new RegionClusters(new Cluster(clusters.cluster(source), null, false),
				new Cluster(clusters.cluster(target), null, false), clusters, List.of(), null);
	}

	/**
	 * Starts both clusters as broker processes, in parallel, the source's client listeners
	 * behind latency proxies (no delay until {@link #roundTrip(int)}).
	 * @param source the source cluster's name
	 * @param target the target cluster's name
	 * @param brokers brokers per cluster (one controller each)
	 * @param brokerProperties extra broker settings
	 * @return the running clusters
	 * @throws Exception if a cluster does not start (the other is closed)
	 */
	public static RegionClusters processes(String source, String target, int brokers,
			Map<String, String> brokerProperties) throws Exception {
		KafkaProcessCluster sourceCluster = processCluster(source, brokers, brokerProperties, true);
		KafkaProcessCluster targetCluster = processCluster(target, brokers, brokerProperties, false);
		Thread starter = new Thread(targetCluster::start, "start-" + target);
		List<Throwable> failures = new ArrayList<>();
		starter.setUncaughtExceptionHandler((thread, ex) -> failures.add(ex));
		starter.start();
		try {
			sourceCluster.start();
		}
		catch (RuntimeException ex) {
			starter.join(TimeUnit.MINUTES.toMillis(4));
			targetCluster.close();
			throw ex;
		}
		starter.join(TimeUnit.MINUTES.toMillis(4));
		if (!failures.isEmpty() || starter.isAlive()) {
			sourceCluster.close();
			targetCluster.close();
			throw new IllegalStateException("Cluster " + target + " did not start",
					failures.isEmpty() ? null : failures.get(0));
		}
		return new RegionClusters(new Cluster(null, sourceCluster, true), new Cluster(null, targetCluster, false), null,
				List.of(sourceCluster, targetCluster), sourceCluster);
	}

	/** Returns the source cluster. */
	public Cluster source() {
		return this.source;
	}

	/** Returns the target cluster. */
	public Cluster target() {
		return this.target;
	}

	/** Returns the cluster of that name. */
	public Cluster cluster(String name) {
		if (this.source.name().equals(name)) {
			return this.source;
		}
		if (this.target.name().equals(name)) {
			return this.target;
		}
		throw new IllegalArgumentException("No cluster " + name);
	}

	/** Whether the copier's path to the source runs through latency proxies. */
	public boolean proxied() {
		return this.sourceProcess != null;
	}

	/**
	 * Sets the round trip time between the copier and the source: half of it each way on every
	 * client connection through the source's proxies (bytes already held keep their due time).
	 * @param rttMs round trip time in milliseconds, 0 to 2 × {@link LatencyProxy#MAX_DELAY}
	 * @throws IllegalStateException if the clusters are in-process and {@code rttMs > 0}
	 */
	public void roundTrip(int rttMs) {
		KafkaProcessCluster proxied = this.sourceProcess;
		if (proxied == null) {
			if (rttMs != 0) {
				throw new IllegalStateException("In-process clusters have no round trip; use RegionClusters.processes");
			}
			return;
		}
		proxied.clientLatency(Duration.ofNanos(TimeUnit.MILLISECONDS.toNanos(rttMs) / 2), Duration.ZERO);
		this.roundTripMs = rttMs;
	}

	/** Returns the round trip time last set, in milliseconds. */
	public int roundTripMs() {
		return this.roundTripMs;
	}

	private static KafkaProcessCluster processCluster(String name, int brokers, Map<String, String> brokerProperties,
			boolean latencyProxies) {
		return KafkaProcessCluster.builder()
			.name(name)
			.brokers(brokers)
			.brokerProperties(brokerProperties)
			.jvmOptions(BROKER_JVM)
			.operationTimeout(Duration.ofMinutes(3))
			.latencyProxies(latencyProxies)
			.build();
	}

	/**
	 * Parses a list of round trip times such as {@code 0,40,80}.
	 * @param text milliseconds, separated by commas
	 * @param option the option's name, for the message
	 * @return the round trip times, in order
	 * @throws IllegalArgumentException if a value is not a whole number from 0 to 20,000
	 */
	public static List<Integer> roundTrips(String text, String option) {
		List<Integer> rtts = new ArrayList<>();
		for (String part : text.split(",")) {
			int rtt;
			try {
				rtt = Integer.parseInt(part.trim());
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException(option + " takes round trip times in ms such as 0,40,80, not '" + text
						+ "'", ex);
			}
			if (rtt < 0 || rtt > 2 * LatencyProxy.MAX_DELAY.toMillis()) {
				throw new IllegalArgumentException(option + " values must be between 0 and "
						+ 2 * LatencyProxy.MAX_DELAY.toMillis() + " ms, not " + rtt);
			}
			rtts.add(rtt);
		}
		return rtts;
	}

	/** Returns one line on the set-up, for a report. */
	public String describe() {
		if (this.embedded != null) {
			return "loopback: both clusters in this JVM (Kafka's KRaft test kit), every client connects directly";
		}
		return "regions: each cluster 1 controller + its broker(s) in JVMs of their own (KafkaProcessCluster, "
				+ String.join(" ", BROKER_JVM) + "); the source's client listeners behind a LatencyProxy each "
				+ "(tandem-test; RTT/2 each way, no jitter), which only the copier goes through (placed beside the "
				+ "target: consume remote, produce local); the source's producers and groups, the target's readers, "
				+ "admin clients and replication connect directly";
	}

	@Override
	public void close() {
		if (this.embedded != null) {
			this.embedded.close();
		}
		for (KafkaProcessCluster cluster : this.processes) {
			cluster.close();
		}
	}

	/**
	 * One of the two clusters.
	 */
	public static final class Cluster {

		private final @Nullable EmbeddedKafkaCluster embedded;

		private final @Nullable KafkaProcessCluster process;

		private final boolean proxied;

		Cluster(@Nullable EmbeddedKafkaCluster embedded, @Nullable KafkaProcessCluster process, boolean proxied) {
			this.embedded = embedded;
			this.process = process;
			this.proxied = proxied;
		}

		/** Returns its name. */
		public String name() {
			return (this.embedded != null) ? this.embedded.name() : process().name();
		}

		/** Returns the address of a client in the cluster's own region: always direct. */
		public String bootstrapServers() {
			return (this.embedded != null) ? this.embedded.bootstrapServers() : process().bootstrapServers();
		}

		/**
		 * Returns the address the copier uses: through the latency proxies for a proxied source,
		 * else direct.
		 */
		public String copierBootstrapServers() {
			return this.proxied ? process().clientBootstrapServers() : bootstrapServers();
		}

		/** Returns the cluster's shared admin client (direct); do not close it. */
		public Admin admin() {
			return (this.embedded != null) ? this.embedded.admin() : process().admin();
		}

		/** Creates a topic and waits until it is ready. */
		public void createTopic(String topic, int partitions, short replicationFactor, Map<String, String> configs) {
			if (this.embedded != null) {
				this.embedded.createTopic(topic, partitions, replicationFactor, configs);
			}
			else {
				process().createTopic(topic, partitions, replicationFactor, configs);
			}
		}

		/** Returns new, mutable client properties with the direct bootstrap servers. */
		public Map<String, Object> clientProperties() {
			Map<String, Object> properties = new HashMap<>();
			properties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
			if (this.embedded != null) {
				properties.putAll(this.embedded.clientSecurityProperties());
			}
			return properties;
		}

		private KafkaProcessCluster process() {
			KafkaProcessCluster process = this.process;
			if (process == null) {
				throw new IllegalStateException("not a process cluster");
			}
			return process;
		}

	}

}
