package dev.tandem.transaction;

/**
 * A transaction needed a cluster that is not available: its brokers are known not to answer
 * ({@link ClusterReachability}), or recovery of this instance's in-doubt transactions on it is
 * still pending after a start-up without it. Thrown by {@code send} or {@code sendOffsets} when the
 * transaction first touches the cluster, before anything is written there. Retriable: the
 * transaction is aborted by its caller (nothing of it becomes visible); retry once the cluster is
 * back (its health, {@code kafkaClusters/<cluster>} with the starter, says so).
 *
 * @since 0.1.0
 */
public class ClusterUnavailableException extends TandemException {

	private static final long serialVersionUID = 1L;

	private final String cluster;

	public ClusterUnavailableException(String cluster, String message) {
		super(message);
		this.cluster = cluster;
	}

	/**
	 * Returns the cluster that is not available.
	 * @return the cluster's configured name
	 */
	public String getCluster() {
		return this.cluster;
	}

}
