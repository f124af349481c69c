package dev.tandem.mirror;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.record.TimestampType;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.ClusterClients;
import dev.tandem.mirror.GroupOffsetFollower.Snapshot;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.TransactionState;

/**
 * The mirror's work inside its transactions, independent of the loop that drives them: copies
 * polled records to every target ({@link #handle}), writes translated group offsets
 * ({@link #beforeCommit}), and learns the target offsets of what it copied only when the
 * transaction that wrote them committed ({@link #committed}), so that a translation never points
 * at aborted data. Thread-safe: the polling thread and the pipeline's committing threads call
 * it, under its lock, except the polling thread's sends and group-offset writes into its open
 * transaction, which run outside it; {@link #status()} reads without it.
 * <p>
 * A translated offset is written for a group, a target and a partition when it is greater than
 * what the group already has there (its committed offset on the target, the mirror's last
 * committed translation, and translations still in flight): a group never moves backwards. A
 * group with members on the target is skipped; one whose translated commit made a transaction
 * abort is skipped until the next group read.
 */
final class MirrorEngine {

	private static final Logger logger = LoggerFactory.getLogger(MirrorEngine.class);

	private static final long PROGRESS_INTERVAL_MS = 10_000;

	private final MirrorSettings settings;

	private final TargetTopics topics;

	private final GroupOffsetFollower follower;

	private final ClusterClients clients;

	private final String instanceId;

	private final Duration timeout;

	private final Map<MappingKey, OffsetMapping> mappings = new ConcurrentHashMap<>();

	/** Transactions not resolved yet, in begin order. */
	private final LinkedHashMap<String, PendingTransaction> pending = new LinkedHashMap<>();

	private final Map<TranslationKey, Long> written = new ConcurrentHashMap<>();

	private final Map<String, Long> lastSync = new ConcurrentHashMap<>();

	private final Map<String, Long> suspended = new ConcurrentHashMap<>();

	private final Set<TopicPartition> assigned = ConcurrentHashMap.newKeySet();

	private final Map<TopicPartition, Long> mirroredNext = new ConcurrentHashMap<>();

	private final Map<TopicPartition, Long> lagSince = new ConcurrentHashMap<>();

	/** Consumer positions seen while idle: past trailing transaction markers of the source. */
	private final Map<TopicPartition, Long> idlePositions = new ConcurrentHashMap<>();

	private final AtomicLong recordsMirrored = new AtomicLong();

	private final AtomicLong recordsSkipped = new AtomicLong();

	private final AtomicLong transactions = new AtomicLong();

	private final AtomicLong aborted = new AtomicLong();

	private long lastProgressMs = System.currentTimeMillis();

	private long recordsAtLastProgress;

	private long idleSnapshotAt;

	/** The groups' read whose translations the last {@link #beforeCommit} wrote. */
	private long translatedSnapshotAt = -1;

	MirrorEngine(MirrorSettings settings, TargetTopics topics, GroupOffsetFollower follower, ClusterClients clients,
			String instanceId, Duration timeout) {
		this.settings = settings;
		this.topics = topics;
		this.follower = follower;
		this.clients = clients;
		this.instanceId = instanceId;
		this.timeout = timeout;
	}

	Collection<TopicPartition> assignedPartitions() {
		return List.copyOf(this.assigned);
	}

	/** Partitions assigned to this instance: their mappings are rebuilt from the targets. */
	synchronized void assigned(Collection<TopicPartition> partitions) {
		List<TopicPartition> selected = partitions.stream().filter((tp) -> this.settings.topics().matches(tp.topic())).toList();
		this.assigned.addAll(selected);
		long now = System.currentTimeMillis();
		selected.forEach((tp) -> this.lagSince.putIfAbsent(tp, now));
		for (String target : this.settings.targets()) {
			Map<TopicPartition, TopicPartition> remotes = new HashMap<>();
			for (TopicPartition source : selected) {
				TopicPartition remote = remote(source);
				if (this.topics.knownPartitions(target, remote.topic()) > source.partition()) {
					remotes.put(source, remote);
				}
				else {
					this.mappings.put(new MappingKey(target, source), new OffsetMapping(this.settings.mappingCapacity(), true));
				}
			}
			try {
				MappingRebuild.rebuild(this.settings, target, this.clients.readerConfig(target), remotes, this.timeout)
					.forEach((source, mapping) -> this.mappings.put(new MappingKey(target, source), mapping));
			}
			catch (RuntimeException ex) {
				// Mirroring goes on; offsets mirrored before now cannot be translated (truncated mappings).
				logger.warn("Mirror {}->{}: could not rebuild the offset mappings of {} from the target ({}); group offsets "
						+ "below what is mirrored from now on are not translated", this.settings.source(), target,
						remotes.keySet(), ex.toString());
				remotes.keySet().forEach((source) -> this.mappings.put(new MappingKey(target, source),
						new OffsetMapping(this.settings.mappingCapacity(), false)));
			}
		}
	}

	/**
	 * Records the consumer's positions, taken while nothing is open or committing: everything
	 * before them is mirrored (what lies between the last mirrored record and the position is
	 * transaction markers or aborted records).
	 */
	synchronized void idlePositions(Map<TopicPartition, Long> positions) {
		if (this.pending.isEmpty()) {
			positions.forEach((tp, position) -> {
				if (this.assigned.contains(tp)) {
					this.idlePositions.merge(tp, position, Math::max);
				}
			});
		}
	}

	synchronized void revoked(Collection<TopicPartition> partitions) {
		partitions.forEach((tp) -> {
			this.idlePositions.remove(tp);
			this.assigned.remove(tp);
			this.mirroredNext.remove(tp);
			this.lagSince.remove(tp);
			this.settings.targets().forEach((target) -> this.mappings.remove(new MappingKey(target, tp)));
		});
	}

	/**
	 * Copies polled records to every target inside the transaction. The sends run outside the
	 * engine's lock (only this thread sends into the open transaction), so that a commit told
	 * meanwhile on the pipeline's thread does not wait for them.
	 * <p>
	 * No wait for earlier transactions is needed to keep each target partition in source order:
	 * {@link dev.tandem.transaction.TransactionPipeline#commitAsync} flushes a transaction's
	 * producers on this thread before it returns, so every copy of an earlier transaction is
	 * appended (or failed) before this one sends.
	 */
	void handle(ConsumerRecords<byte[], byte[]> records, CrossClusterTransaction txn) {
		PendingTransaction transaction = pending(txn);
		List<Sent> sent = new ArrayList<>(records.count() * this.settings.targets().size());
		try {
			for (TopicPartition source : records.partitions()) {
				if (this.settings.topics().matches(source.topic())) {
					copy(source, records.records(source), txn, sent);
				}
			}
		}
		finally {
			synchronized (this) {
				transaction.sent.addAll(sent);
			}
		}
	}

	private synchronized PendingTransaction pending(CrossClusterTransaction txn) {
		return this.pending.computeIfAbsent(txn.transactionId(), (id) -> new PendingTransaction(txn));
	}

	/** Copies one partition's polled records: its remote topic and header prefix once, then each record. */
	private void copy(TopicPartition source, List<ConsumerRecord<byte[], byte[]>> polled, CrossClusterTransaction txn,
			List<Sent> sent) {
		String sourceCluster = this.settings.source();
		List<String> targets = this.settings.targets();
		String remoteTopic = remote(source).topic();
		byte[] sourcePrefix = Provenance.sourcePrefix(sourceCluster, source.topic(), source.partition());
		Header sourceOrigin = Provenance.originHeader(sourceCluster);
		boolean[] ensured = new boolean[targets.size()];
		for (ConsumerRecord<byte[], byte[]> record : polled) {
			String origin = Provenance.origin(record.headers());
			Header originHeader = (origin != null) ? Provenance.originHeader(origin) : sourceOrigin;
			Long timestamp = (record.timestampType() == TimestampType.NO_TIMESTAMP_TYPE || record.timestamp() < 0) ? null
					: record.timestamp();
			for (int i = 0; i < targets.size(); i++) {
				String target = targets.get(i);
				if (target.equals(origin)) {
					this.recordsSkipped.incrementAndGet();
					continue;
				}
				if (!ensured[i]) {
					this.topics.ensurePartition(target, source.topic(), source.partition());
					ensured[i] = true;
				}
				Headers headers = Provenance.forCopy(record.headers(), originHeader, sourcePrefix, record.offset());
				ProducerRecord<byte[], byte[]> copy = new ProducerRecord<>(remoteTopic, source.partition(), timestamp,
						record.key(), record.value(), headers);
				sent.add(new Sent(target, source, record.offset(), txn.send(target, copy)));
			}
		}
	}

	/**
	 * Writes the translations due (mappings of committed transactions only) into the transaction,
	 * once per read of the groups ({@link MirrorSettings#groupSyncInterval()}): their committed
	 * offsets change only then, and each write is a round trip to the target's group coordinator
	 * that the polling thread waits for. Between reads the translations only creep forward with
	 * what was mirrored meanwhile, which the next read's write (or the idle one) catches up.
	 */
	void beforeCommit(CrossClusterTransaction txn, GroupOffsetWriter writer) {
		PendingTransaction transaction;
		Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> due;
		synchronized (this) {
			transaction = this.pending.computeIfAbsent(txn.transactionId(), (id) -> new PendingTransaction(txn));
			Snapshot snapshot = this.follower.snapshot();
			if (snapshot.readAtMs() == this.translatedSnapshotAt) {
				return;
			}
			this.translatedSnapshotAt = snapshot.readAtMs();
			due = translations(snapshot);
		}
		// Outside the lock: the pipeline's thread may tell commits meanwhile. Only this thread
		// writes translations while transactions are open, so nothing computes a floor in between.
		write(txn, writer, transaction, due);
	}

	private void write(CrossClusterTransaction txn, GroupOffsetWriter writer, PendingTransaction transaction,
			Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> due) {
		due.forEach((target, groups) -> groups.forEach((group, offsets) -> {
			writer.write(txn, target, group, offsets);
			synchronized (this) {
				offsets.forEach((remote, offset) -> transaction.translations
					.add(new Translation(new TranslationKey(target, group, remote), offset.offset())));
			}
		}));
	}

	/**
	 * Returns whether no mirror transaction is open or committing: every translation written
	 * outside one then sees only committed mappings and cannot race a pipelined one.
	 */
	synchronized boolean idle() {
		promote();
		return this.pending.isEmpty();
	}

	/**
	 * When idle and the follower has read the groups again, writes the translations due in a
	 * transaction of their own (a caught-up group is then translated without waiting for new
	 * records). Blocks until it commits.
	 * @return whether a transaction was committed
	 */
	synchronized boolean translateIdle(CrossClusterTransactionManager manager, GroupOffsetWriter writer) {
		Snapshot snapshot = this.follower.snapshot();
		if (!idle() || snapshot.readAtMs() == this.idleSnapshotAt) {
			return false;
		}
		this.idleSnapshotAt = snapshot.readAtMs();
		Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> due = translations(snapshot);
		if (due.isEmpty()) {
			return false;
		}
		CrossClusterTransaction txn = manager.begin();
		PendingTransaction transaction = new PendingTransaction(txn);
		this.pending.put(txn.transactionId(), transaction);
		try {
			write(txn, writer, transaction, due);
			txn.commit();
		}
		catch (RuntimeException ex) {
			txn.close();
			aborted(txn.transactionId());
			throw ex;
		}
		committed(txn.transactionId(), Map.of());
		return true;
	}

	/**
	 * A transaction committed (told on the pipeline's committing thread, possibly out of order
	 * with its neighbours): its copies' target offsets enter the mappings once every older
	 * transaction is resolved, so that mappings grow in offset order.
	 */
	synchronized void committed(String transactionId, Map<TopicPartition, OffsetAndMetadata> next) {
		PendingTransaction transaction = this.pending.get(transactionId);
		if (transaction != null) {
			transaction.committed = true;
			transaction.next = next;
		}
		promote();
	}

	/** A transaction aborted: nothing it wrote exists; groups it translated wait for the next read. */
	synchronized void aborted(String transactionId) {
		PendingTransaction transaction = this.pending.remove(transactionId);
		if (transaction != null) {
			discard(transaction);
		}
		promote();
	}

	/**
	 * Applies committed transactions from the oldest on, and drops aborted ones (also those the
	 * processor aborted while still open, of which no listener is told); stops at the first one
	 * still undecided.
	 */
	private void promote() {
		Iterator<PendingTransaction> oldest = this.pending.values().iterator();
		while (oldest.hasNext()) {
			PendingTransaction transaction = oldest.next();
			if (transaction.committed) {
				oldest.remove();
				apply(transaction);
			}
			else if (transaction.txn.state() == TransactionState.ABORTED) {
				oldest.remove();
				discard(transaction);
			}
			else {
				return;
			}
		}
	}

	private void discard(PendingTransaction transaction) {
		this.aborted.incrementAndGet();
		long readAt = this.follower.snapshot().readAtMs();
		transaction.translations.forEach((translation) -> this.suspended.put(translation.key.group, readAt));
	}

	private void apply(PendingTransaction transaction) {
		OffsetMapping mapping = null;
		Sent previous = null;
		for (Sent sent : transaction.sent) {
			RecordMetadata metadata = metadata(sent.future);
			if (metadata != null) {
				// copies of one partition to one target come in runs: look their mapping up once a run
				if (mapping == null || !sent.target.equals(previous.target) || !sent.source.equals(previous.source)) {
					mapping = this.mappings.computeIfAbsent(new MappingKey(sent.target, sent.source),
							(key) -> new OffsetMapping(this.settings.mappingCapacity(), true));
					previous = sent;
				}
				mapping.add(sent.sourceOffset, metadata.offset());
			}
		}
		long now = System.currentTimeMillis();
		for (Translation translation : transaction.translations) {
			this.written.merge(translation.key, translation.offset, Math::max);
			this.lastSync.put(translation.key.group + "@" + translation.key.target, now);
		}
		transaction.next.forEach((tp, offset) -> this.mirroredNext.merge(tp, offset.offset(), Math::max));
		this.recordsMirrored.addAndGet(transaction.sent.size());
		this.transactions.incrementAndGet();
		logProgress(now);
	}

	private static @Nullable RecordMetadata metadata(Future<RecordMetadata> future) {
		try {
			return future.get();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
		catch (ExecutionException ex) {
			return null;
		}
	}

	/** target -> group -> remote partition -> offset to write. */
	private Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> translations(Snapshot snapshot) {
		Map<String, Map<String, Map<TopicPartition, OffsetAndMetadata>>> due = new LinkedHashMap<>();
		long now = System.currentTimeMillis();
		for (Map.Entry<String, Map<TopicPartition, OffsetAndMetadata>> group : snapshot.sourceOffsets().entrySet()) {
			Long suspendedAt = this.suspended.get(group.getKey());
			if (suspendedAt != null) {
				if (snapshot.readAtMs() <= suspendedAt) {
					continue;
				}
				this.suspended.remove(group.getKey());
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
					TopicPartition remote = remote(source);
					TranslationKey key = new TranslationKey(target, group.getKey(), remote);
					if (translated.getAsLong() > floor(snapshot, key)) {
						offsets.put(remote, new OffsetAndMetadata(translated.getAsLong(), committed.metadata()));
					}
				});
				if (!offsets.isEmpty()) {
					due.computeIfAbsent(target, (t) -> new LinkedHashMap<>()).put(group.getKey(), offsets);
				}
				else if (ownsAny(group.getValue().keySet())) {
					this.lastSync.put(group.getKey() + "@" + target, now);
				}
			}
		}
		return due;
	}

	private boolean ownsAny(Set<TopicPartition> partitions) {
		return partitions.stream().anyMatch(this.assigned::contains);
	}

	private OptionalLong expected(String target, TopicPartition source, long committed) {
		if (!this.assigned.contains(source)) {
			return OptionalLong.empty();
		}
		OffsetMapping mapping = this.mappings.get(new MappingKey(target, source));
		return (mapping != null) ? mapping.translate(committed) : OptionalLong.empty();
	}

	private long floor(Snapshot snapshot, TranslationKey key) {
		long floor = Math.max(this.written.getOrDefault(key, -1L),
				snapshot.targetCommitted(key.target, key.group, key.remote));
		for (PendingTransaction transaction : this.pending.values()) {
			for (Translation translation : transaction.translations) {
				if (translation.key.equals(key)) {
					floor = Math.max(floor, translation.offset);
				}
			}
		}
		return floor;
	}

	private TopicPartition remote(TopicPartition source) {
		return new TopicPartition(this.settings.naming().remoteTopic(this.settings.source(), source.topic()),
				source.partition());
	}

	private void logProgress(long now) {
		if (now - this.lastProgressMs < PROGRESS_INTERVAL_MS) {
			return;
		}
		long lag = lagRecords(this.follower.snapshot());
		long mirrored = this.recordsMirrored.get();
		if (lag > 0) {
			double seconds = (now - this.lastProgressMs) / 1000.0;
			logger.info("Mirror {}->{} ({}) catching up: {} record copies in the last {} s ({} /s), {} records behind on {} partitions",
					this.settings.source(), this.settings.targets(), this.instanceId, mirrored - this.recordsAtLastProgress,
					Math.round(seconds), Math.round((mirrored - this.recordsAtLastProgress) / seconds), lag,
					this.assigned.size());
		}
		this.lastProgressMs = now;
		this.recordsAtLastProgress = mirrored;
	}

	private long mirrored(Snapshot snapshot, TopicPartition tp) {
		long local = Math.max(this.mirroredNext.getOrDefault(tp, -1L), this.idlePositions.getOrDefault(tp, -1L));
		OffsetAndMetadata committed = snapshot.mirrorCommitted().get(tp);
		return Math.max(local, (committed != null) ? committed.offset() : -1);
	}

	private long lagRecords(Snapshot snapshot) {
		long lag = 0;
		for (TopicPartition tp : this.assigned) {
			Long end = snapshot.sourceEnds().get(tp);
			if (end != null) {
				lag += Math.max(0, end - Math.max(0, mirrored(snapshot, tp)));
			}
		}
		return lag;
	}

	/** A view for the endpoint, metrics and health; safe from any thread. */
	MirrorStatus status() {
		Snapshot snapshot = this.follower.snapshot();
		long now = System.currentTimeMillis();
		List<MirrorStatus.PartitionStatus> partitions = new ArrayList<>();
		long lag = 0;
		long maxLagMs = 0;
		for (TopicPartition tp : this.assigned) {
			Long end = snapshot.sourceEnds().get(tp);
			long mirrored = mirrored(snapshot, tp);
			long partitionLag = (end == null) ? 0 : Math.max(0, end - Math.max(0, mirrored));
			long lagMs = 0;
			if (end != null && partitionLag == 0) {
				this.lagSince.put(tp, now);
			}
			else if (end != null) {
				lagMs = now - this.lagSince.getOrDefault(tp, now);
			}
			lag += partitionLag;
			maxLagMs = Math.max(maxLagMs, lagMs);
			partitions.add(new MirrorStatus.PartitionStatus(tp.topic(), tp.partition(), (end != null) ? end : -1, mirrored,
					partitionLag, lagMs));
		}
		partitions.sort(Comparator.comparing(MirrorStatus.PartitionStatus::topic)
			.thenComparingInt(MirrorStatus.PartitionStatus::partition));
		List<MirrorStatus.GroupStatus> groups = new ArrayList<>();
		long maxTranslationLagMs = 0;
		for (Map.Entry<String, Map<TopicPartition, OffsetAndMetadata>> group : snapshot.sourceOffsets().entrySet()) {
			for (String target : this.settings.targets()) {
				List<MirrorStatus.GroupPartitionStatus> offsets = new ArrayList<>();
				boolean inSync = true;
				for (Map.Entry<TopicPartition, OffsetAndMetadata> entry : group.getValue().entrySet()) {
					TopicPartition source = entry.getKey();
					if (!this.assigned.contains(source)) {
						continue;
					}
					TopicPartition remote = remote(source);
					TranslationKey key = new TranslationKey(target, group.getKey(), remote);
					long translated = Math.max(this.written.getOrDefault(key, -1L),
							snapshot.targetCommitted(target, group.getKey(), remote));
					long expected = expected(target, source, entry.getValue().offset()).orElse(-1);
					inSync &= expected <= translated;
					offsets.add(new MirrorStatus.GroupPartitionStatus(source.topic(), source.partition(),
							entry.getValue().offset(), remote.topic(), translated, expected));
				}
				if (offsets.isEmpty()) {
					continue;
				}
				offsets.sort(Comparator.comparing(MirrorStatus.GroupPartitionStatus::topic)
					.thenComparingInt(MirrorStatus.GroupPartitionStatus::partition));
				long synced = this.lastSync.getOrDefault(group.getKey() + "@" + target, 0L);
				boolean active = snapshot.isActive(target, group.getKey());
				long translationLag = (inSync || active || synced == 0) ? 0 : now - synced;
				maxTranslationLagMs = Math.max(maxTranslationLagMs, translationLag);
				groups.add(new MirrorStatus.GroupStatus(group.getKey(), target, active, synced, translationLag, offsets));
			}
		}
		groups.sort(Comparator.comparing(MirrorStatus.GroupStatus::group).thenComparing(MirrorStatus.GroupStatus::target));
		return new MirrorStatus(this.settings.source(), this.settings.targets(), this.instanceId,
				this.recordsMirrored.get(), this.recordsSkipped.get(), this.transactions.get(), this.aborted.get(), lag,
				maxLagMs, maxTranslationLagMs, List.copyOf(partitions), List.copyOf(groups));
	}

	private record MappingKey(String target, TopicPartition source) {
	}

	private record TranslationKey(String target, String group, TopicPartition remote) {
	}

	private record Translation(TranslationKey key, long offset) {
	}

	private record Sent(String target, TopicPartition source, long sourceOffset, Future<RecordMetadata> future) {
	}

	private static final class PendingTransaction {

		final CrossClusterTransaction txn;

		final List<Sent> sent = new ArrayList<>();

		final List<Translation> translations = new ArrayList<>();

		boolean committed;

		Map<TopicPartition, OffsetAndMetadata> next = Map.of();

		PendingTransaction(CrossClusterTransaction txn) {
			this.txn = txn;
		}

	}

}
