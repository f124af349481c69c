package dev.tandem.failover;

/**
 * Whether a Kafka client gets answers from its cluster's brokers, as its own metadata shows:
 * reported by {@link LeaderCache#reachability()} and in {@link ClientLeadersDescriptor}.
 * <p>
 * A client that has lost every broker it knows (all replaced with new addresses, all down)
 * keeps its records queued until {@code delivery.timeout.ms} expires and gives no other
 * sign; with {@code metadata.recovery.strategy=rebootstrap} (KIP-899) it also retries the
 * addresses of {@code bootstrap.servers}. {@link #UNREACHABLE} makes that state visible long
 * before records expire.
 *
 * @author Tandem
 * @since 0.1.0
 */
public enum BrokerReachability {

	/**
	 * A broker answered the client's last metadata request, and no request has been waiting
	 * for an answer longer than the client's {@code request.timeout.ms}.
	 */
	REACHABLE,

	/**
	 * The client has asked for metadata and no broker has answered for longer than its
	 * {@code request.timeout.ms} (or it never reached any broker in that time): every broker
	 * it knows is down or gone, and rebootstrapping to {@code bootstrap.servers}, if enabled,
	 * has not found one either. Its sends wait and fail after {@code delivery.timeout.ms};
	 * check that {@code bootstrap.servers} reaches the cluster's current brokers.
	 */
	UNREACHABLE,

	/**
	 * Not known: the cache is not bound to its client, cannot read the client's metadata, or
	 * the client is still bootstrapping.
	 */
	UNKNOWN

}
