package dev.tandem.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Provide embedded Kafka clusters to a JUnit Jupiter test class (and its {@code @Nested}
 * classes): clusters of a plain {@link #preset() preset} are shared by the test classes of the
 * JVM and closed at the end of its test run (see {@link #shared()}); any other clusters are
 * started for the class and closed after its last test.
 * <p>
 * Test constructors, lifecycle methods and test methods can then declare parameters of type
 * {@link EmbeddedKafkaClusters}, or of type {@link EmbeddedKafkaCluster} annotated with
 * {@link ClusterName @ClusterName} (the annotation may be omitted when there is exactly one
 * cluster).
 * <pre class="code">
 * &#064;EnableEmbeddedKafkaClusters(clusters = {
 * 		&#064;KafkaCluster(name = "east", brokers = 3),
 * 		&#064;KafkaCluster(name = "west", brokers = 3) })
 * class CrossClusterTests {
 *
 * 	&#064;Test
 * 	void commitsOnBothClusters(&#064;ClusterName("east") EmbeddedKafkaCluster east,
 * 			&#064;ClusterName("west") EmbeddedKafkaCluster west) {
 * 		...
 * 	}
 *
 * }
 * </pre>
 * A {@link #preset() preset} names a layout the tests share instead:
 * {@code @EnableEmbeddedKafkaClusters(preset = ClusterPreset.EAST3_WEST3)}.
 *
 * @author Tandem
 * @since 0.1.0
 * @see EmbeddedKafkaClustersExtension
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(EmbeddedKafkaClustersExtension.class)
public @interface EnableEmbeddedKafkaClusters {

	/**
	 * Shared cluster layout to start, at most one; its clusters start before those of
	 * {@link #clusters()}.
	 * @return the preset, or none
	 */
	ClusterPreset[] preset() default {};

	/**
	 * Whether a class that names only a {@link #preset()} (no {@link #clusters()}, no
	 * {@link #brokerProperties()}) shares the preset's clusters with the other test classes of
	 * the JVM that do the same; {@code false} starts clusters for this class alone, for classes
	 * that stop or restart brokers or assert on cluster-wide state. See
	 * {@link EmbeddedKafkaClustersExtension}.
	 * @return whether the preset's clusters are shared
	 */
	boolean shared() default true;

	/**
	 * Clusters to start, in this order, after those of the {@link #preset()}; at least one
	 * cluster must be declared here or by the preset.
	 * @return the cluster declarations
	 */
	KafkaCluster[] clusters() default {};

	/**
	 * Kafka server properties for the nodes of every cluster, as {@code key=value}; override
	 * the defaults listed on {@link EmbeddedKafkaClusters.Builder#cluster(String, int)}.
	 * @return the properties
	 */
	String[] brokerProperties() default {};

	/**
	 * One cluster declared in {@link EnableEmbeddedKafkaClusters#clusters()}.
	 *
	 * @since 0.1.0
	 */
	@Target({})
	@Retention(RetentionPolicy.RUNTIME)
	@Documented
	@interface KafkaCluster {

		/**
		 * Cluster name, unique within the test class: letters, digits, {@code .},
		 * {@code _} or {@code -}.
		 * @return the name
		 */
		String name();

		/**
		 * Number of brokers, 1 or more.
		 * @return the broker count
		 */
		int brokers() default 3;

		/**
		 * Kafka server properties for this cluster's nodes, as {@code key=value}; override
		 * the defaults and {@link EnableEmbeddedKafkaClusters#brokerProperties()}.
		 * @return the properties
		 */
		String[] brokerProperties() default {};

	}

}
