package dev.tandem.mirror;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import dev.tandem.mirror.GroupOffsetFollower.Snapshot;
import dev.tandem.mirror.TranslatedOffsets.Key;
import dev.tandem.mirror.TranslatedOffsets.Translation;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;

/**
 * The translation job: translates the selected groups' committed source offsets with the
 * mappings of committed transactions only ({@link OffsetMappings}) and writes them to the targets
 * ({@link CrossClusterTransaction#sendGroupOffsets}), either in the mirror's open transaction
 * ({@link #beforeCommit}) or, when the mirror is idle, in a transaction of their own
 * ({@link #translateIdle}).
 * <p>
 * A translated offset is written for a group, a target and a partition when it is greater than
 * what the group already has there (its committed offset on the target, the mirror's last
 * committed translation, and translations still in flight): a group never moves backwards. A
 * group with members on the target is skipped; one whose translated commit made a transaction
 * abort is skipped until the next group read.
 * <p>
 * Called on the polling thread only (its fields are that thread's); it holds no lock. Each pass
 * reads the translations in flight ({@link MirrorTransactions#inFlightFloors}) before the committed
 * ones ({@link TranslatedOffsets#written}): a transaction resolved meanwhile on the pipeline's
 * thread is seen in one or the other, since the ledger records its translations as committed
 * before it lets go of them.
 */
final class GroupTranslator {

	private final MirrorSettings settings;

	private final GroupOffsetFollower follower;

	private final Assignment assignment;

	private final OffsetMappings mappings;

	private final TranslatedOffsets translated;

	private final MirrorTransactions transactions;

	private long idleSnapshotAt;

	/** The groups' read whose translations the last {@link #beforeCommit} wrote. */
	private long translatedSnapshotAt = -1;

	GroupTranslator(MirrorSettings settings, GroupOffsetFollower follower, Assignment assignment,
			OffsetMappings mappings, TranslatedOffsets translated, MirrorTransactions transactions) {
		this.settings = settings;
		this.follower = follower;
		this.assignment = assignment;
		this.mappings = mappings;
		this.translated = translated;
		this.transactions = transactions;
	}

	/**
	 * Writes the translations due into the open transaction, once per read of the groups
	 * ({@link MirrorSettings#groupSyncInterval()}): their committed offsets change only then, and
	 * each write is a round trip to the target's group coordinator that the polling thread waits
	 * for. Between reads the translations only creep forward with what was mirrored meanwhile,
	 * which the next read's write (or the idle one) catches up.
	 */
	void beforeCommit(CrossClusterTransaction txn) {
		this.transactions.begin(txn);
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
	 * records). Blocks until it commits.
	 * @return whether a transaction was committed
	 */
	boolean translateIdle(CrossClusterTransactionManager manager) {
		Snapshot snapshot = this.follower.snapshot();
		if (!this.transactions.idle() || snapshot.readAtMs() == this.idleSnapshotAt) {
			return false;
		}
		this.idleSnapshotAt = snapshot.readAtMs();
		Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> due = translations(snapshot);
		if (due.isEmpty()) {
			return false;
		}
		CrossClusterTransaction txn = manager.begin();
		this.transactions.begin(txn);
		try {
			write(txn, due);
			txn.commit();
		}
		catch (RuntimeException ex) {
			txn.close();
			this.transactions.onAborted(txn.transactionId(), ex);
			throw ex;
		}
		this.transactions.onCommitted(txn.transactionId(), 0, Map.of());
		return true;
	}

	private void write(CrossClusterTransaction txn, Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> due) {
		due.forEach((target, groups) -> groups.forEach((group, offsets) -> {
			txn.sendGroupOffsets(target, group, offsets);
			List<Translation> written = new ArrayList<>(offsets.size());
			offsets.forEach((remote, offset) -> written.add(new Translation(new Key(target, group, remote), offset.offset())));
			this.transactions.translated(txn, written);
		}));
	}

	/** target -> group -> remote partition -> offset to write. */
	private Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> translations(Snapshot snapshot) {
		Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> due = new LinkedHashMap<>();
		Map<Key, Long> inFlight = this.transactions.inFlightFloors();
		long now = System.currentTimeMillis();
		for (Map.Entry<String, Map<TopicPartition, OffsetAndMetadata>> group : snapshot.sourceOffsets().entrySet()) {
			if (this.translated.isSuspended(group.getKey(), snapshot.readAtMs())) {
				continue;
			}
			for (String target : this.settings.targets()) {
				if (snapshot.isActive(target, group.getKey())) {
					continue;
				}
				Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
				group.getValue().forEach((source, committed) -> {
					OptionalLong translated = expected(target, source, committed.offset());
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
					this.translated.synced(group.getKey(), target, now);
				}
			}
		}
		return due;
	}

	private OptionalLong expected(String target, TopicPartition source, long committed) {
		return this.assignment.contains(source) ? this.mappings.translate(target, source, committed) : OptionalLong.empty();
	}

	/** What the group has or will have on the target: the highest of in flight, committed and read there. */
	private long floor(Snapshot snapshot, Map<Key, Long> inFlight, Key key) {
		return Math.max(Math.max(inFlight.getOrDefault(key, -1L), this.translated.written(key)),
				snapshot.targetCommitted(key.target(), key.group(), key.remote()));
	}

}
