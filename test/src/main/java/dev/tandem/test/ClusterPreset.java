package dev.tandem.test;

import java.util.List;

/**
 * The cluster layouts the real-broker tests share, so that a test class names its layout
 * instead of declaring it again; every cluster gets the default broker settings of
 * {@link EmbeddedKafkaClusters.Builder#cluster(String, int)}.
 * <p>
 * Use one through {@link EnableEmbeddedKafkaClusters#preset()} or
 * {@link EmbeddedKafkaClustersExtension#EmbeddedKafkaClustersExtension(ClusterPreset)}: the
 * preset's clusters are then started once per JVM and shared by every test class naming it.
 * A class that stops brokers gets its own with
 * {@link EmbeddedKafkaClustersExtension#perClass(ClusterPreset)}; a test class that needs
 * more (a broker property, another cluster) starts from {@link #builder()}.
 *
 * @since 0.1.0
 * @see EmbeddedKafkaClustersExtension
 */
public enum ClusterPreset {

	/**
	 * Clusters {@code east} and {@code west} of one broker each: replication factor 1, for
	 * tests that stop no broker.
	 */
	EAST1_WEST1(1, "east", "west"),

	/**
	 * Clusters {@code east} and {@code west} of three brokers each: replication factor 3 and
	 * {@code min.insync.replicas=2}, for tests that stop brokers or move leaders.
	 */
	EAST3_WEST3(3, "east", "west"),

	/**
	 * Cluster {@code east} of three brokers: replication factor 3 and
	 * {@code min.insync.replicas=2}.
	 */
	EAST3(3, "east");

	private final int brokers;

	private final List<String> names;

	ClusterPreset(int brokers, String... names) {
		this.brokers = brokers;
		this.names = List.of(names);
	}

	/**
	 * Returns the cluster names, in start order.
	 * @return an unmodifiable list of one or more names
	 */
	public List<String> names() {
		return this.names;
	}

	/**
	 * Returns the number of brokers of each cluster.
	 * @return 1 or more
	 */
	public int brokers() {
		return this.brokers;
	}

	/**
	 * Returns a new builder with this preset's clusters declared, for a test class that adds
	 * broker properties or clusters of its own.
	 * @return a new builder; each call returns another one
	 */
	public EmbeddedKafkaClusters.Builder builder() {
		return declareOn(EmbeddedKafkaClusters.builder());
	}

	/**
	 * Declares this preset's clusters on a builder.
	 * @param builder the builder, with none of this preset's names declared yet
	 * @return the same builder
	 * @throws IllegalArgumentException if one of the names is already declared
	 */
	EmbeddedKafkaClusters.Builder declareOn(EmbeddedKafkaClusters.Builder builder) {
		for (String name : this.names) {
			builder.cluster(name, this.brokers);
		}
		return builder;
	}

}
