package dev.tandem.mirror;

import java.util.List;

/**
 * A point-in-time view of a mirror instance: what it copied, how far behind the source it is, and
 * where each selected group's translated offsets stand on each target. Counts are this
 * instance's since it started; partitions and groups cover the source partitions assigned to it.
 *
 * @param source source cluster
 * @param targets target clusters
 * @param instanceId the Tandem instance id of this mirror
 * @param recordsMirrored record copies committed on the targets (one per record and target)
 * @param recordsSkipped records not copied to a target because they originate there (loop prevention)
 * @param transactions mirror transactions committed
 * @param transactionsAborted mirror transactions aborted (their work is retried)
 * @param lagRecords records on the source not mirrored yet, all assigned partitions
 * @param maxLagMs the largest partition lag in milliseconds
 * @param maxTranslationLagMs the largest group translation lag in milliseconds
 * @param partitions per assigned source partition
 * @param groups per selected group and target
 * @since 0.1.0
 */
public record MirrorStatus(String source, List<String> targets, String instanceId, long recordsMirrored,
		long recordsSkipped, long transactions, long transactionsAborted, long lagRecords, long maxLagMs,
		long maxTranslationLagMs, List<PartitionStatus> partitions, List<GroupStatus> groups) {

	/**
	 * One source partition.
	 *
	 * @param topic source topic
	 * @param partition partition
	 * @param sourceEndOffset the source's {@code read_committed} end offset (last stable offset) at its
	 *     last read (every group sync interval, from the source alone), or -1 if not read yet
	 * @param mirroredOffset the next source offset to mirror (everything before it is committed on
	 *     every target), or -1 if unknown
	 * @param lagRecords {@code sourceEndOffset - mirroredOffset}, 0 or more
	 * @param lagMs how long the partition has had a lag, 0 when caught up
	 * @since 0.1.0
	 */
	public record PartitionStatus(String topic, int partition, long sourceEndOffset, long mirroredOffset,
			long lagRecords, long lagMs) {
	}

	/**
	 * One selected source group on one target.
	 *
	 * @param group group id
	 * @param target target cluster
	 * @param activeOnTarget whether the group has members on the target (it is then never written)
	 * @param lastSyncMs when the translated offsets last matched the source's, epoch ms, 0 if never
	 * @param translationLagMs how long the translated offsets have been behind the source's, 0 when in sync
	 * @param partitions per source partition of the group that this instance mirrors
	 * @since 0.1.0
	 */
	public record GroupStatus(String group, String target, boolean activeOnTarget, long lastSyncMs,
			long translationLagMs, List<GroupPartitionStatus> partitions) {
	}

	/**
	 * One partition of a group.
	 *
	 * @param topic source topic
	 * @param partition partition
	 * @param sourceOffset the group's committed offset on the source
	 * @param remoteTopic the topic on the target
	 * @param translatedOffset the offset the mirror committed for the group on the target, -1 if none
	 * @param expectedOffset the exact translation of {@code sourceOffset} with the mirrored data so
	 *     far, -1 if unknown
	 * @since 0.1.0
	 */
	public record GroupPartitionStatus(String topic, int partition, long sourceOffset, String remoteTopic,
			long translatedOffset, long expectedOffset) {
	}

}
