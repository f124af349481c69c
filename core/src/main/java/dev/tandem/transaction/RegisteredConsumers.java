package dev.tandem.transaction;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.Consumer;

/**
 * The consumers whose offsets transactions commit, each with the cluster it reads from, so that
 * its offsets can only be committed on that cluster's {@code __consumer_offsets}. Thread-safe.
 */
final class RegisteredConsumers {

	private final Map<Consumer<?, ?>, String> clusters = Collections.synchronizedMap(new IdentityHashMap<>());

	void register(Consumer<?, ?> consumer, String cluster) {
		this.clusters.put(consumer, cluster);
	}

	void unregister(Consumer<?, ?> consumer) {
		this.clusters.remove(consumer);
	}

	/**
	 * Returns the cluster a consumer reads from.
	 * @throws IllegalArgumentException if the consumer is not registered
	 */
	String clusterOf(Consumer<?, ?> consumer) {
		String cluster = this.clusters.get(consumer);
		if (cluster == null) {
			throw new IllegalArgumentException("Consumer is not registered with a cluster: create it with "
					+ "createConsumer(cluster, ...) or registerConsumer(cluster, consumer), so that its offsets are "
					+ "committed on the cluster it reads from");
		}
		return cluster;
	}

}
