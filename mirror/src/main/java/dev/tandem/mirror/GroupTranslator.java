package dev.tandem.mirror;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.jspecify.annotations.Nullable;

import dev.tandem.mirror.GroupOffsetFollower.Snapshot;
import dev.tandem.transaction.CrossClusterProcessor;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;

/**
 * The translation job: translates the selected groups' committed source offsets with the
 * mappings of committed transactions only ({@link OffsetMappings}), each with the mapping of the
 * source topic incarnation it was read from (a group offset of a deleted topic, or read while the
 * topic was created again, is not translated) and writes them to the targets
 * ({@link CrossClusterTransaction#sendGroupOffsets}), either in the mirror's open transaction
 * ({@link #beforeCommit}) or, when the mirror is idle, in a transaction of its own
 * ({@link #translateIdle}); and what came of them: the translations of each transaction until its
 * outcome is told ({@link #onCommitted}, {@link #onAborted}), then per target, group and remote
 * partition the highest offset committed, when each group was last in sync, and the groups
 * suspended because a transaction that translated them aborted (skipped until the follower reads
 * the groups again).
 * <p>
 * A translated offset is written for a group, a target and a partition when it is greater than
 * what the group already has there (its committed offset on the target, the mirror's last
 * committed translation, and translations still in flight): a group never moves backwards. A
 * group with members on the target is skipped.
 * <p>
 * Thread-safety: {@link #beforeCommit} and {@link #translateIdle} run on the polling thread alone
 * (the two read markers are that thread's); the outcomes are told on the pipeline's committing
 * thread (or on the polling thread); the state they share is in concurrent maps, no lock.
 * {@link #written} and {@link #lastSync} may be read from any thread. Each pass reads the
 * translations in flight before the committed ones: a transaction resolved meanwhile is seen in
 * one or the other, since {@link #onCommitted} records its translations as committed before it
 * lets go of them.
 */
final class GroupTranslator implements CrossClusterProcessor.ProcessorListener {

	private final MirrorSettings settings;

	private final GroupOffsetFollower follower;

	private final Assignment assignment;

	private final OffsetMappings mappings;

	/** Transaction id -> the translations it carries, until its outcome is told. */
	private final Map<String, List<Translation>> inFlight = new ConcurrentHashMap<>();

	/** The highest committed translation per key. */
	private final Map<Key, Long> written = new ConcurrentHashMap<>();

	/** group@target -> epoch ms. */
	private final Map<String, Long> lastSync = new ConcurrentHashMap<>();

	/** group -> the follower's read (epoch ms) after which the group is translated again. */
	private final Map<String, Long> suspended = new ConcurrentHashMap<>();

	private long idleSnapshotAt;

	/** The groups' read whose translations the last {@link #beforeCommit} wrote. */
	private long translatedSnapshotAt = -1;

	GroupTranslator(MirrorSettings settings, GroupOffsetFollower follower, Assignment assignment,
			OffsetMappings mappings) {
		this.settings = settings;
		this.follower = follower;
		this.assignment = assignment;
		this.mappings = mappings;
	}

	/**
	 * Writes the translations due into the open transaction, once per read of the groups
	 * ({@link MirrorSettings#groupSyncInterval()}): their committed offsets change only then, and
	 * each write is a round trip to the target's group coordinator that the polling thread waits
	 * for. Between reads the translations only creep forward with what was mirrored meanwhile,
	 * which the next read's write (or the idle one) catches up.
	 */
	void beforeCommit(CrossClusterTransaction txn) {
		Snapshot snapshot = this.follower.snapshot();
		if (snapshot.readAtMs() == this.translatedSnapshotAt) {
			return;
		}
		this.translatedSnapshotAt = snapshot.readAtMs();
		write(txn, translations(snapshot));
	}

	/**
	 * When idle and the follower has read the groups again, writes the translations due in a
	 * transaction of their own (a caught-up group is then translated without waiting for new
	 * records). Call it only when no other mirror transaction is open or unresolved. Blocks until
	 * it commits.
	 * @return whether a transaction was committed
	 * @throws RuntimeException if the transaction did not commit (it is aborted, its groups suspended)
	 */
	boolean translateIdle(CrossClusterTransactionManager manager) {
		Snapshot snapshot = this.follower.snapshot();
		if (snapshot.readAtMs() == this.idleSnapshotAt) {
			return false;
		}
		this.idleSnapshotAt = snapshot.readAtMs();
		Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> due = translations(snapshot);
		if (due.isEmpty()) {
			return false;
		}
		CrossClusterTransaction txn = manager.begin();
		try {
			write(txn, due);
			txn.commit();
		}
		catch (RuntimeException ex) {
			txn.close();
			onAborted(txn.transactionId(), ex);
			throw ex;
		}
		onCommitted(txn.transactionId(), 0, Map.of());
		return true;
	}

	/** Returns whether no translation waits for its transaction's outcome. */
	boolean idle() {
		return this.inFlight.isEmpty();
	}

	private void write(CrossClusterTransaction txn, Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> due) {
		List<Translation> written = new ArrayList<>();
		try {
			due.forEach((target, groups) -> groups.forEach((group, offsets) -> {
				txn.sendGroupOffsets(target, group, offsets);
				offsets.forEach((remote, offset) -> written.add(new Translation(new Key(target, group, remote), offset.offset())));
			}));
		}
		finally {
			if (!written.isEmpty()) {
				this.inFlight.merge(txn.transactionId(), written, (a, b) -> {
					List<Translation> both = new ArrayList<>(a);
					both.addAll(b);
					return both;
				});
			}
		}
	}

	/** A transaction committed: the translations it carried are the groups' offsets on the targets. */
	@Override
	public void onCommitted(String transactionId, int records, Map<TopicPartition, OffsetAndMetadata> next) {
		List<Translation> translations = this.inFlight.get(transactionId);
		if (translations == null) {
			return;
		}
		long now = System.currentTimeMillis();
		for (Translation translation : translations) {
			this.written.merge(translation.key(), translation.offset(), Math::max);
			synced(translation.key().group(), translation.key().target(), now);
		}
		this.inFlight.remove(transactionId);
	}

	/** A transaction aborted: the groups it translated wait for the follower's next read. */
	@Override
	public void onAborted(String transactionId, Throwable cause) {
		List<Translation> translations = this.inFlight.remove(transactionId);
		if (translations != null) {
			long readAt = this.follower.snapshot().readAtMs();
			translations.forEach((translation) -> this.suspended.put(translation.key().group(), readAt));
		}
	}

	/** target -> group -> remote partition -> offset to write. */
	private Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> translations(Snapshot snapshot) {
		Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> due = new LinkedHashMap<>();
		Map<Key, Long> inFlight = inFlightFloors();
		long now = System.currentTimeMillis();
		for (Map.Entry<String, Map<TopicPartition, OffsetAndMetadata>> group : snapshot.sourceOffsets().entrySet()) {
			if (isSuspended(group.getKey(), snapshot.readAtMs())) {
				continue;
			}
			for (String target : this.settings.targets()) {
				if (snapshot.isActive(target, group.getKey())) {
					continue;
				}
				Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
				group.getValue().forEach((source, committed) -> {
					OptionalLong translated = expected(target, source, committed.offset(),
							snapshot.sourceTopicId(source.topic()));
					if (translated.isEmpty()) {
						return;
					}
					TopicPartition remote = this.mappings.remote(source);
					Key key = new Key(target, group.getKey(), remote);
					if (translated.getAsLong() > floor(snapshot, inFlight, key)) {
						offsets.put(remote, new OffsetAndMetadata(translated.getAsLong(), committed.metadata()));
					}
				});
				if (!offsets.isEmpty()) {
					due.computeIfAbsent(target, (t) -> new LinkedHashMap<>()).put(group.getKey(), offsets);
				}
				else if (this.assignment.containsAny(group.getValue().keySet())) {
					synced(group.getKey(), target, now);
				}
			}
		}
		return due;
	}

	/** Per key, the highest offset among the translations of unresolved transactions. */
	private Map<Key, Long> inFlightFloors() {
		Map<Key, Long> floors = new HashMap<>();
		for (List<Translation> translations : this.inFlight.values()) {
			for (Translation translation : translations) {
				floors.merge(translation.key(), translation.offset(), Math::max);
			}
		}
		return floors;
	}

	/** The translation, only with a mapping of the incarnation the group's offset was read from. */
	private OptionalLong expected(String target, TopicPartition source, long committed, @Nullable Uuid topicId) {
		return this.assignment.contains(source) ? this.mappings.translate(target, source, committed, topicId)
				: OptionalLong.empty();
	}

	/** What the group has or will have on the target: the highest of in flight, committed and read there. */
	private long floor(Snapshot snapshot, Map<Key, Long> inFlight, Key key) {
		return Math.max(Math.max(inFlight.getOrDefault(key, -1L), written(key)),
				snapshot.targetCommitted(key.target(), key.group(), key.remote()));
	}

	/**
	 * Returns whether a group is suspended for a read of the groups; a read after the one the
	 * suspension waited for lifts it.
	 */
	private boolean isSuspended(String group, long readAtMs) {
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

	private void synced(String group, String target, long nowMs) {
		this.lastSync.put(group + "@" + target, nowMs);
	}

	/** When the group's translation on the target was last in sync, epoch ms; 0 if never. Any thread. */
	long lastSync(String group, String target) {
		return this.lastSync.getOrDefault(group + "@" + target, 0L);
	}

	/** The highest committed translation of the key, or -1. Any thread. */
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
