package dev.tandem.test.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.tandem.test.EnableEmbeddedKafkaClusters.KafkaCluster;

/**
 * Starts embedded Kafka clusters for a Spring test context ({@code @SpringBootTest} and the
 * other Spring test annotations) and points the application's Tandem clusters at them: for
 * each cluster {@code <c>}, {@code tandem.clusters.<c>.bootstrap-servers} (and, for a cluster
 * with {@link #saslPlain() SASL/PLAIN}, its client security properties under
 * {@code tandem.clusters.<c>.properties.*}) are in the environment before the context
 * refreshes, so no {@code @DynamicPropertySource} is needed. The clusters are a bean of type
 * {@link dev.tandem.test.EmbeddedKafkaClusters} (inject it to create topics or read output), and
 * close after every other bean of the context, when Spring's test framework closes it (at the
 * end of the JVM for a cached context, or with {@code @DirtiesContext}). Test classes with the
 * same declaration share one context, so one set of clusters.
 * <pre class="code">
 * &#064;SpringBootTest(properties = { "tandem.transaction.id-prefix=orders", "tandem.transaction.instance-id=test-0" })
 * &#064;EmbeddedTandemClusters(clusters = { &#064;KafkaCluster(name = "east", brokers = 1),
 * 		&#064;KafkaCluster(name = "west", brokers = 1) })
 * class OrderRouterTests { ... }
 * </pre>
 *
 * @since 0.1.0
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface EmbeddedTandemClusters {

	/**
	 * Clusters to start, in this order; each becomes {@code tandem.clusters.<name>}.
	 * @return the cluster declarations, at least one
	 */
	KafkaCluster[] clusters();

	/**
	 * Kafka server properties for the nodes of every cluster, as {@code key=value}.
	 * @return the properties
	 */
	String[] brokerProperties() default {};

	/**
	 * Names of the declared clusters whose listeners accept only SASL/PLAIN (see
	 * {@link dev.tandem.test.EmbeddedKafkaClusters.Builder#saslPlainCluster(String, int)}).
	 * @return cluster names
	 */
	String[] saslPlain() default {};

}
