package dev.tandem.mirror;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.mirror.GroupOffsetFollower.Snapshot;
import dev.tandem.mirror.GroupTranslator.Key;

/**
 * The status job: what the mirror did (counters), how far behind the source it is (the lag, computed
 * in {@link #lags} alone), the progress log line while catching up, and {@link MirrorStatus}.
 * <p>
 * A partition's mirrored position is the highest of: the next source offsets of the mirror's
 * committed transactions, the consumer's positions taken while idle (past trailing transaction
 * markers of the source), and the mirror's committed offsets as the follower last read them. Its
 * lag is the follower's last read of the source's {@code read_committed} end offset minus that
 * position: read from the source alone, so a blocked target shows as a growing lag.
 * <p>
 * Thread-safe. The counters and positions are atomic or concurrent and written by the polling
 * thread ({@link #assigned}, {@link #revoked}, {@link #idlePositions}, {@link #skipped}) and by
 * {@link RecordCopier} as outcomes are told ({@link #committed}, {@link #aborted}); {@link #committed} holds this
 * object's lock for the progress log's state. {@link #status()} takes no lock, from any thread.
 */
final class MirrorProgress {

	private static final Logger logger = LoggerFactory.getLogger(MirrorProgress.class);

	private static final long PROGRESS_INTERVAL_MS = 10_000;

	private final MirrorSettings settings;

	private final String instanceId;

	private final GroupOffsetFollower follower;

	private final Assignment assignment;

	private final OffsetMappings mappings;

	private final GroupTranslator translated;

	private final Map<TopicPartition, Long> mirroredNext = new ConcurrentHashMap<>();

	/** Consumer positions seen while idle: past trailing transaction markers of the source. */
	private final Map<TopicPartition, Long> idlePositions = new ConcurrentHashMap<>();

	private final Map<TopicPartition, Long> lagSince = new ConcurrentHashMap<>();

	private final AtomicLong recordsMirrored = new AtomicLong();

	private final AtomicLong recordsSkipped = new AtomicLong();

	private final AtomicLong transactions = new AtomicLong();

	private final AtomicLong aborted = new AtomicLong();

	private long lastProgressMs = System.currentTimeMillis();

	private long recordsAtLastProgress;

	MirrorProgress(MirrorSettings settings, String instanceId, GroupOffsetFollower follower, Assignment assignment,
			OffsetMappings mappings, GroupTranslator translated) {
		this.settings = settings;
		this.instanceId = instanceId;
		this.follower = follower;
		this.assignment = assignment;
		this.mappings = mappings;
		this.translated = translated;
	}

	/** Newly assigned (selected) partitions: their lag time counts from now. */
	void assigned(Collection<TopicPartition> partitions) {
		long now = System.currentTimeMillis();
		partitions.forEach((tp) -> this.lagSince.putIfAbsent(tp, now));
	}

	void revoked(Collection<TopicPartition> partitions) {
		partitions.forEach((tp) -> {
			this.idlePositions.remove(tp);
			this.mirroredNext.remove(tp);
			this.lagSince.remove(tp);
		});
	}

	/**
	 * Records the consumer's positions, taken while no mirror transaction is open or committing
	 * (no mirror transaction open or unresolved): everything before them is mirrored (what lies between
	 * the last mirrored record and the position is transaction markers or aborted records).
	 */
	void idlePositions(Map<TopicPartition, Long> positions) {
		positions.forEach((tp, position) -> {
			if (this.assignment.contains(tp)) {
				this.idlePositions.merge(tp, position, Math::max);
			}
		});
	}

	/** A record not copied to a target because it originates there. */
	void skipped() {
		this.recordsSkipped.incrementAndGet();
	}

	/** A transaction committed (applied in begin order) with {@code copies} record copies. */
	synchronized void committed(Map<TopicPartition, OffsetAndMetadata> next, int copies, long nowMs) {
		next.forEach((tp, offset) -> this.mirroredNext.merge(tp, offset.offset(), Math::max));
		this.recordsMirrored.addAndGet(copies);
		this.transactions.incrementAndGet();
		logProgress(nowMs);
	}

	void aborted() {
		this.aborted.incrementAndGet();
	}

	/** Transactions aborted so far (a count that only grows). */
	long abortedCount() {
		return this.aborted.get();
	}

	private void logProgress(long now) {
		if (now - this.lastProgressMs < PROGRESS_INTERVAL_MS) {
			return;
		}
		long lag = lags(this.follower.snapshot()).stream().mapToLong(Lag::records).sum();
		long mirrored = this.recordsMirrored.get();
		if (lag > 0) {
			double seconds = (now - this.lastProgressMs) / 1000.0;
			logger.info("Mirror {}->{} ({}) catching up: {} record copies in the last {} s ({} /s), {} records behind on {} partitions",
					this.settings.source(), this.settings.targets(), this.instanceId, mirrored - this.recordsAtLastProgress,
					Math.round(seconds), Math.round((mirrored - this.recordsAtLastProgress) / seconds), lag,
					this.assignment.size());
		}
		this.lastProgressMs = now;
		this.recordsAtLastProgress = mirrored;
	}

	/** The one place that computes the lag: per assigned partition, in no order. */
	private List<Lag> lags(Snapshot snapshot) {
		List<Lag> lags = new ArrayList<>();
		for (TopicPartition tp : this.assignment.partitions()) {
			Long end = snapshot.sourceEnds().get(tp);
			long local = Math.max(this.mirroredNext.getOrDefault(tp, -1L), this.idlePositions.getOrDefault(tp, -1L));
			OffsetAndMetadata committed = snapshot.mirrorCommitted().get(tp);
			long mirrored = Math.max(local, (committed != null) ? committed.offset() : -1);
			long records = (end == null) ? 0 : Math.max(0, end - Math.max(0, mirrored));
			lags.add(new Lag(tp, end != null, (end != null) ? end : -1, mirrored, records));
		}
		return lags;
	}

	/** A view for the endpoint, metrics and health; safe from any thread. */
	MirrorStatus status() {
		Snapshot snapshot = this.follower.snapshot();
		long now = System.currentTimeMillis();
		List<MirrorStatus.PartitionStatus> partitions = new ArrayList<>();
		long lag = 0;
		long maxLagMs = 0;
		for (Lag partition : lags(snapshot)) {
			long lagMs = 0;
			if (partition.endRead() && partition.records() == 0) {
				this.lagSince.put(partition.tp(), now);
			}
			else if (partition.endRead()) {
				lagMs = now - this.lagSince.getOrDefault(partition.tp(), now);
			}
			lag += partition.records();
			maxLagMs = Math.max(maxLagMs, lagMs);
			partitions.add(new MirrorStatus.PartitionStatus(partition.tp().topic(), partition.tp().partition(),
					partition.end(), partition.mirrored(), partition.records(), lagMs));
		}
		partitions.sort(Comparator.comparing(MirrorStatus.PartitionStatus::topic)
			.thenComparingInt(MirrorStatus.PartitionStatus::partition));
		List<MirrorStatus.GroupStatus> groups = new ArrayList<>();
		long maxTranslationLagMs = 0;
		for (Map.Entry<String, Map<TopicPartition, OffsetAndMetadata>> group : snapshot.sourceOffsets().entrySet()) {
			for (String target : this.settings.targets()) {
				MirrorStatus.GroupStatus status = groupStatus(snapshot, group.getKey(), group.getValue(), target, now);
				if (status != null) {
					maxTranslationLagMs = Math.max(maxTranslationLagMs, status.translationLagMs());
					groups.add(status);
				}
			}
		}
		groups.sort(Comparator.comparing(MirrorStatus.GroupStatus::group).thenComparing(MirrorStatus.GroupStatus::target));
		return new MirrorStatus(this.settings.source(), this.settings.targets(), this.instanceId,
				this.recordsMirrored.get(), this.recordsSkipped.get(), this.transactions.get(), this.aborted.get(), lag,
				maxLagMs, maxTranslationLagMs, List.copyOf(partitions), List.copyOf(groups));
	}

	/** One group on one target, over the partitions assigned here; null if it has none. */
	private MirrorStatus.@Nullable GroupStatus groupStatus(Snapshot snapshot, String group,
			Map<TopicPartition, OffsetAndMetadata> sourceOffsets, String target, long now) {
		List<MirrorStatus.GroupPartitionStatus> offsets = new ArrayList<>();
		boolean inSync = true;
		for (Map.Entry<TopicPartition, OffsetAndMetadata> entry : sourceOffsets.entrySet()) {
			TopicPartition source = entry.getKey();
			if (!this.assignment.contains(source)) {
				continue;
			}
			TopicPartition remote = this.mappings.remote(source);
			long translated = Math.max(this.translated.written(new Key(target, group, remote)),
					snapshot.targetCommitted(target, group, remote));
			long expected = this.mappings.translate(target, source, entry.getValue().offset(),
					snapshot.sourceTopicId(source.topic())).orElse(-1);
			inSync &= expected <= translated;
			offsets.add(new MirrorStatus.GroupPartitionStatus(source.topic(), source.partition(),
					entry.getValue().offset(), remote.topic(), translated, expected));
		}
		if (offsets.isEmpty()) {
			return null;
		}
		offsets.sort(Comparator.comparing(MirrorStatus.GroupPartitionStatus::topic)
			.thenComparingInt(MirrorStatus.GroupPartitionStatus::partition));
		long synced = this.translated.lastSync(group, target);
		boolean active = snapshot.isActive(target, group);
		long translationLag = (inSync || active || synced == 0) ? 0 : now - synced;
		return new MirrorStatus.GroupStatus(group, target, active, synced, translationLag, offsets);
	}

	/**
	 * One partition's lag.
	 * @param endRead whether the follower has read the partition's end offset
	 * @param end the source's read_committed end offset at the follower's last read, -1 if not read
	 * @param mirrored the next source offset to mirror, -1 if unknown
	 * @param records records not mirrored yet, 0 if the end is not read
	 */
	private record Lag(TopicPartition tp, boolean endRead, long end, long mirrored, long records) {
	}

}
