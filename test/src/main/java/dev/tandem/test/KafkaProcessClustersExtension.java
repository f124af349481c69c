package dev.tandem.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JUnit Jupiter extension that starts {@link KafkaProcessCluster}s (brokers in JVMs of their
 * own, for {@code kill -9} and chaos tests) once per test class, all at the same time, and
 * closes them after the class's last test; the twin of {@link EmbeddedKafkaClustersExtension}
 * for clusters whose brokers must die like real processes. Register it on a {@code static}
 * field:
 * <pre class="code">
 * &#064;RegisterExtension
 * static final KafkaProcessClustersExtension kafka = new KafkaProcessClustersExtension(
 * 		KafkaProcessCluster.builder().name("east").brokers(3));
 * </pre>
 * The clusters are started before the class's first {@code @BeforeAll} method and reached
 * through {@link #cluster(String)}; the class-level {@link ExtensionContext.Store store}
 * closes them, in declaration order, after the class's {@code @AfterAll} methods.
 *
 * @since 0.1.0
 * @see KafkaProcessCluster
 */
public class KafkaProcessClustersExtension implements BeforeAllCallback {

	private static final Logger logger = LoggerFactory.getLogger(KafkaProcessClustersExtension.class);

	private static final Namespace NAMESPACE = Namespace.create(KafkaProcessClustersExtension.class);

	private final List<KafkaProcessCluster.Builder> builders;

	private volatile @Nullable Running running;

	/**
	 * Create an extension that starts one cluster per builder.
	 * @param builders the clusters to start, each with its own name
	 * @throws IllegalArgumentException if no builder is given
	 * @since 0.1.0
	 */
	public KafkaProcessClustersExtension(KafkaProcessCluster.Builder... builders) {
		if (builders.length == 0) {
			throw new IllegalArgumentException("Declare at least one Kafka process cluster");
		}
		this.builders = List.of(builders);
	}

	/**
	 * Return a running cluster.
	 * @param name the name given to {@link KafkaProcessCluster.Builder#name(String)}
	 * @return the cluster
	 * @throws IllegalArgumentException if no cluster has that name
	 * @throws IllegalStateException if the clusters have not been started yet (before the test
	 * class's {@code @BeforeAll} phase)
	 * @since 0.1.0
	 */
	public KafkaProcessCluster cluster(String name) {
		Running running = this.running;
		if (running == null) {
			throw new IllegalStateException("Kafka process clusters are not started yet; "
					+ "register the extension on a static field");
		}
		KafkaProcessCluster cluster = running.clusters().get(name);
		if (cluster == null) {
			throw new IllegalArgumentException(
					"No Kafka process cluster named '" + name + "'; known: " + running.clusters().keySet());
		}
		return cluster;
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		this.running = context.getStore(NAMESPACE).computeIfAbsent(Running.class, (key) -> start(), Running.class);
	}

	/**
	 * Start every cluster at the same time: all but the last on threads of their own, the last
	 * on the calling thread. If one fails, the ones that started are closed.
	 */
	private Running start() {
		long started = System.nanoTime();
		List<KafkaProcessCluster> clusters = this.builders.stream().map(KafkaProcessCluster.Builder::build).toList();
		Map<String, KafkaProcessCluster> byName = new LinkedHashMap<>();
		for (KafkaProcessCluster cluster : clusters) {
			if (byName.put(cluster.name(), cluster) != null) {
				throw new IllegalStateException("Two Kafka process clusters are named '" + cluster.name() + "'");
			}
		}
		List<CompletableFuture<KafkaProcessCluster>> starts = new ArrayList<>();
		for (KafkaProcessCluster cluster : clusters.subList(0, clusters.size() - 1)) {
			starts.add(CompletableFuture.supplyAsync(cluster::start, (task) -> new Thread(task,
					"kafka-process-cluster-start-" + cluster.name()).start()));
		}
		RuntimeException failure = null;
		try {
			clusters.get(clusters.size() - 1).start();
		}
		catch (RuntimeException ex) {
			failure = ex;
		}
		for (CompletableFuture<KafkaProcessCluster> start : starts) {
			try {
				start.join();
			}
			catch (CompletionException ex) {
				RuntimeException cause = (ex.getCause() instanceof RuntimeException runtime) ? runtime : ex;
				if (failure == null) {
					failure = cause;
				}
				else {
					failure.addSuppressed(cause);
				}
			}
		}
		Running running = new Running(Collections.unmodifiableMap(byName));
		if (failure != null) {
			running.close();
			throw failure;
		}
		logger.info("Started Kafka process clusters {} in {} ms", byName.keySet(),
				Duration.ofNanos(System.nanoTime() - started).toMillis());
		return running;
	}

	/**
	 * The started clusters by name, in declaration order; closed by the store.
	 */
	private record Running(Map<String, KafkaProcessCluster> clusters) implements AutoCloseable {

		@Override
		public void close() {
			this.clusters.values().forEach(KafkaProcessCluster::close);
		}

	}

}
