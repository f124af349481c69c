package dev.tandem.mirror;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.common.TopicPartition;

/**
 * What the mirror's committed transactions translated: per target, group and remote partition
 * the highest offset written; per group and target when its translation last matched the
 * source's; and the groups suspended because a transaction that translated them aborted (skipped
 * until the follower reads the groups again). Written by {@link MirrorTransactions} when a
 * transaction is resolved and by {@link GroupTranslator}; read by the translator (a group never
 * moves backwards) and by {@link MirrorProgress} (group status). Thread-safe (concurrent maps;
 * no lock).
 */
final class TranslatedOffsets {

	private final GroupOffsetFollower follower;

	private final Map<Key, Long> written = new ConcurrentHashMap<>();

	/** group@target -> epoch ms. */
	private final Map<String, Long> lastSync = new ConcurrentHashMap<>();

	/** group -> the follower's read (epoch ms) after which the group is translated again. */
	private final Map<String, Long> suspended = new ConcurrentHashMap<>();

	TranslatedOffsets(GroupOffsetFollower follower) {
		this.follower = follower;
	}

	/** A transaction carrying these translations committed at {@code nowMs}. */
	void committed(List<Translation> translations, long nowMs) {
		for (Translation translation : translations) {
			this.written.merge(translation.key(), translation.offset(), Math::max);
			synced(translation.key().group(), translation.key().target(), nowMs);
		}
	}

	/** A transaction carrying these translations aborted: their groups wait for the next read. */
	void aborted(List<Translation> translations) {
		long readAt = this.follower.snapshot().readAtMs();
		translations.forEach((translation) -> this.suspended.put(translation.key().group(), readAt));
	}

	/**
	 * Returns whether a group is suspended for a read of the groups; a read after the one the
	 * suspension waited for lifts it.
	 */
	boolean isSuspended(String group, long readAtMs) {
		Long suspendedAt = this.suspended.get(group);
		if (suspendedAt == null) {
			return false;
		}
		if (readAtMs <= suspendedAt) {
			return true;
		}
		this.suspended.remove(group);
		return false;
	}

	/** The group's translation on the target is in sync with the source's at {@code nowMs}. */
	void synced(String group, String target, long nowMs) {
		this.lastSync.put(group + "@" + target, nowMs);
	}

	/** When the group's translation on the target was last in sync, epoch ms; 0 if never. */
	long lastSync(String group, String target) {
		return this.lastSync.getOrDefault(group + "@" + target, 0L);
	}

	/** The highest committed translation of the key, or -1. */
	long written(Key key) {
		return this.written.getOrDefault(key, -1L);
	}

	/**
	 * One group's offset on one remote partition of one target.
	 * @param target target cluster
	 * @param group group id
	 * @param remote the partition on the target
	 */
	record Key(String target, String group, TopicPartition remote) {
	}

	/**
	 * A translated offset written into a transaction.
	 * @param key where
	 * @param offset the offset written
	 */
	record Translation(Key key, long offset) {
	}

}
