package dev.tandem.failover;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * A client lost or regained its cluster's brokers: its {@link LeaderCache#reachability()}
 * entered or left {@link BrokerReachability#UNREACHABLE}.
 *
 * @param cluster the cluster name
 * @param clientId the client's {@code client.id}
 * @param clientType the kind of client
 * @param previous the state before, never equal to {@code current}
 * @param current the state now; one of the two is {@link BrokerReachability#UNREACHABLE}
 * @param at when the change was seen
 * @param unreachableFor when the client reaches a broker again, how long it was
 * {@link BrokerReachability#UNREACHABLE} (from the check that first saw it so, 1 ms
 * resolution); {@code null} when it becomes unreachable
 * @author Tandem
 * @since 0.1.0
 */
public record ReachabilityEvent(String cluster, String clientId, ClientType clientType, BrokerReachability previous,
		BrokerReachability current, Instant at, @Nullable Duration unreachableFor) {

	/**
	 * Return whether the client became unreachable with this event.
	 * @return {@code true} if {@link #current()} is {@link BrokerReachability#UNREACHABLE}
	 * @since 0.1.0
	 */
	public boolean lost() {
		return this.current == BrokerReachability.UNREACHABLE;
	}

}
