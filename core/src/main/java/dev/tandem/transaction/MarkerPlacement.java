package dev.tandem.transaction;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.jspecify.annotations.Nullable;

import dev.tandem.transaction.internals.ProducerInternals;

/**
 * Picks the partition of a participant's marker record: one led by the broker that leads the
 * partition of the participant's first record, when that partition can be known before the send,
 * so that the transaction's first two partitions on the cluster join it through one broker.
 * <p>
 * Why: with transactions V2 (KIP-890) the client no longer adds partitions to its transaction;
 * each partition leader does, when the first produce of the transaction reaches it. The marker
 * and the first record are sent at the same moment (the marker when the cluster is enlisted,
 * which a send does), so two leaders ask the transaction coordinator at once; the coordinator
 * answers the second {@code CONCURRENT_TRANSACTIONS} while the first one's state change is
 * written, and that leader retries after the broker's {@code add.partitions.to.txn.retry.backoff.ms}
 * (20 ms by default), which the prepare then waits for. One leader asks once for both.
 * <p>
 * The first record's partition is known when the record names it, or when it has a key and the
 * producer partitions by key with Kafka's built-in partitioner (no {@code partitioner.class}, keys
 * not ignored). Otherwise, or when no partition of the marker topic has that leader (a marker
 * topic of one partition, created by an earlier version; leaders moved), or when the metadata
 * cannot be read, the marker keeps the producer's own choice, as before. Where the marker lands is
 * read from its send result, so recovery does not depend on the choice.
 * <p>
 * Stateless; thread-safe.
 */
final class MarkerPlacement {

	private MarkerPlacement() {
	}

	/**
	 * Returns the marker record to send.
	 * @param producer the participant's producer (its metadata is read; a topic not known yet is
	 *     fetched, bounded by {@code max.block.ms}, as the send itself would)
	 * @param keysPickPartitions whether the producer partitions keyed records with Kafka's built-in
	 *     partitioner
	 * @param marker the marker record, without a partition
	 * @param first the participant's first record, or null if it is enlisted without one
	 * @return the marker, with a partition beside the first record's when one is known
	 * @throws org.apache.kafka.common.errors.TimeoutException if the metadata did not come within
	 *     {@code max.block.ms}: the marker's own send would wait as long again (the caller fails it)
	 */
	static ProducerRecord<byte[], byte[]> beside(Producer<byte[], byte[]> producer, boolean keysPickPartitions,
			ProducerRecord<byte[], byte[]> marker, @Nullable ProducerRecord<byte[], byte[]> first) {
		if (first == null || (first.partition() == null && (first.key() == null || !keysPickPartitions))) {
			return marker;
		}
		try {
			List<PartitionInfo> targets = producer.partitionsFor(first.topic());
			if (targets == null || targets.isEmpty()) {
				return marker;
			}
			int partition = (first.partition() != null) ? first.partition()
					: ProducerInternals.partitionForKey(first.key(), targets.size());
			Node leader = leaderOf(targets, partition);
			if (leader == null) {
				return marker;
			}
			List<Integer> beside = new ArrayList<>(1);
			for (PartitionInfo info : producer.partitionsFor(marker.topic())) {
				if (info.leader() != null && info.leader().id() == leader.id()) {
					beside.add(info.partition());
				}
			}
			if (beside.isEmpty()) {
				return marker;
			}
			int chosen = beside.get((marker.key() == null) ? 0
					: ProducerInternals.partitionForKey(marker.key(), beside.size()));
			return new ProducerRecord<>(marker.topic(), chosen, marker.timestamp(), marker.key(), marker.value(),
					marker.headers());
		}
		catch (org.apache.kafka.common.errors.TimeoutException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			return marker;
		}
	}

	private static @Nullable Node leaderOf(List<PartitionInfo> partitions, int partition) {
		for (PartitionInfo info : partitions) {
			if (info.partition() == partition) {
				return info.leader();
			}
		}
		return null;
	}

}
