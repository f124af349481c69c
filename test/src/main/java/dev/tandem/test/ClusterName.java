package dev.tandem.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Selects which embedded cluster to inject into an {@link EmbeddedKafkaCluster} parameter
 * of a test constructor or method.
 *
 * @author Tandem
 * @since 0.1.0
 * @see EnableEmbeddedKafkaClusters
 * @see EmbeddedKafkaClustersExtension
 */
@Target(ElementType.PARAMETER)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface ClusterName {

	/**
	 * Name of the cluster, as declared with
	 * {@link EnableEmbeddedKafkaClusters.KafkaCluster#name()} or
	 * {@link EmbeddedKafkaClusters.Builder#cluster(String, int)}.
	 * @return the cluster name
	 */
	String value();

}
