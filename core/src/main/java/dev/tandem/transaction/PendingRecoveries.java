package dev.tandem.transaction;

import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The clusters on which recovery of this instance's in-doubt transactions is still pending after a
 * start-up without them. While a cluster is here, no participant producer of it may be
 * initialized: {@code initTransactions()} on a transactional id would abort the decided
 * transaction the recovery must still commit. Written by the {@link TransactionRecovery}, read by the
 * {@link ParticipantPool}. Thread-safe.
 */
final class PendingRecoveries {

	private final Map<String, Integer> clusters = new ConcurrentHashMap<>();

	void add(Collection<String> clusters) {
		clusters.forEach((cluster) -> this.clusters.merge(cluster, 1, Integer::sum));
	}

	void remove(Collection<String> clusters) {
		clusters.forEach((cluster) -> this.clusters.computeIfPresent(cluster, (c, n) -> (n > 1) ? n - 1 : null));
	}

	boolean isPending(String cluster) {
		return this.clusters.containsKey(cluster);
	}

}
