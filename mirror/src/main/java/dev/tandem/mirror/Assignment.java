package dev.tandem.mirror;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.TopicPartition;

/**
 * The selected source partitions assigned to this mirror instance. Changed by the rebalance
 * listener on the polling thread; read from any thread (the follower's lag reads, the translator,
 * the status). Thread-safe (a concurrent set; no lock).
 */
final class Assignment {

	private final TopicSelection selection;

	private final Set<TopicPartition> partitions = ConcurrentHashMap.newKeySet();

	Assignment(TopicSelection selection) {
		this.selection = selection;
	}

	/**
	 * Adds the selected ones of newly assigned partitions.
	 * @return the partitions added (those the selection matches)
	 */
	List<TopicPartition> assign(Collection<TopicPartition> assigned) {
		List<TopicPartition> selected = assigned.stream().filter((tp) -> this.selection.matches(tp.topic())).toList();
		this.partitions.addAll(selected);
		return selected;
	}

	void revoke(Collection<TopicPartition> revoked) {
		this.partitions.removeAll(revoked);
	}

	boolean contains(TopicPartition partition) {
		return this.partitions.contains(partition);
	}

	boolean containsAny(Collection<TopicPartition> partitions) {
		return partitions.stream().anyMatch(this.partitions::contains);
	}

	/** A copy of the assigned partitions, in no order. */
	List<TopicPartition> partitions() {
		return List.copyOf(this.partitions);
	}

	int size() {
		return this.partitions.size();
	}

}
