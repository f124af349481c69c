package dev.tandem.transaction;

/**
 * Tells whether a cluster is known to be unreachable right now, so that a transaction that needs it
 * fails at once ({@link ClusterUnavailableException}) instead of waiting the producer's
 * {@code max.block.ms} for brokers that do not answer. With the Spring Boot starter, it is the
 * failover feature's reachability watch (a cluster is unreachable while any Tandem client of it has
 * lost all its brokers). Implementations must be cheap (no network call) and thread-safe.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ClusterReachability {

	/** Knows nothing: every cluster is taken as reachable. */
	ClusterReachability UNKNOWN = (cluster) -> false;

	/**
	 * Whether the cluster is known to be unreachable now.
	 * @param cluster the cluster's configured name
	 * @return true only if its brokers are known not to answer
	 */
	boolean isUnreachable(String cluster);

}
