package dev.tandem.failover;

/**
 * Callback for leader changes, completed failovers and lost or regained brokers seen by any {@link LeaderCache} of a
 * {@link LeaderCacheRegistry}: the hook for metrics (for example a Micrometer counter of
 * leader changes and a timer of failover durations, bound by the Spring layer).
 * <p>
 * Methods are called synchronously on the thread that observed the event, which is often
 * the Kafka client's own I/O thread: implementations must be fast, must not block and must
 * not call the client. They may be called concurrently for different clients. Exceptions
 * are logged and otherwise ignored.
 *
 * @author Tandem
 * @since 0.1.0
 */
public interface LeaderCacheListener {

	/**
	 * Called when a client sees a new leader or leader epoch for a partition (not for the
	 * first leader it learns of).
	 * @param event the change
	 * @since 0.1.0
	 */
	default void leaderChanged(LeaderChangeEvent event) {
	}

	/**
	 * Called when a client first succeeds on a partition's new leader.
	 * @param event the failover, with its duration
	 * @since 0.1.0
	 */
	default void failoverCompleted(FailoverEvent event) {
	}

	/**
	 * Called when a client enters or leaves {@link BrokerReachability#UNREACHABLE}, from the
	 * thread that checked: a producer's sending thread, or whatever calls
	 * {@link LeaderCache#reachability()} or {@link LeaderCacheRegistry#checkReachability()}
	 * (the Spring layer does once a second, so idle consumers are covered too).
	 * @param event the change
	 * @since 0.1.0
	 */
	default void reachabilityChanged(ReachabilityEvent event) {
	}

}
