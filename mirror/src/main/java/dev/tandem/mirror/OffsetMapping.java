package dev.tandem.mirror;

import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

/**
 * The source-to-target offset mapping of the records mirrored from one source partition into one
 * target partition, kept as runs of consecutive source offsets whose target offsets are
 * consecutive too (a run breaks where either side has a transaction marker, an aborted or a
 * skipped record). Bounded: past {@code capacity} runs the oldest are dropped and the mapping is
 * marked truncated. Adding the record that extends the last run changes that run in place (no
 * allocation per mirrored record). Thread-safe.
 * <p>
 * The translation rule ({@link #translate(long)}), for a group's committed source offset
 * {@code c}: the target offset of the first mirrored record whose source offset is at or after
 * {@code c}; if no mirrored record is at or after {@code c}, the target position just after the
 * last mirrored record (never past the mirrored data, KAFKA-12468); a {@code c} below the first
 * known record (an expired or compacted source range, KAFKA-12635) maps to the first mirrored
 * record when the mapping reaches back to the start of the target partition, and is unknown when
 * it was truncated.
 *
 * @since 0.1.0
 */
public final class OffsetMapping {

	private final int capacity;

	private final TreeMap<Long, Run> runs = new TreeMap<>();

	/** The run with the highest offsets (the one a new record extends), or null if there are none. */
	private @Nullable Run last;

	private boolean truncated;

	/**
	 * Creates an empty mapping.
	 * @param capacity the maximum number of runs kept, 1 or more
	 * @param complete whether the mapping starts at the beginning of the target partition's data
	 *     (false: records mirrored before it are unknown)
	 */
	public OffsetMapping(int capacity, boolean complete) {
		if (capacity < 1) {
			throw new IllegalArgumentException("capacity must be 1 or more, not " + capacity);
		}
		this.capacity = capacity;
		this.truncated = !complete;
	}

	/**
	 * Adds a mirrored record. Offsets must grow on both sides; a record that does not (a
	 * reassigned partition mirrored elsewhere meanwhile) clears what was known before it.
	 * @param sourceOffset the record's source offset
	 * @param targetOffset the copy's target offset
	 */
	public synchronized void add(long sourceOffset, long targetOffset) {
		Run run = this.last;
		if (run != null) {
			if (sourceOffset == run.sourceEnd() && targetOffset == run.targetEnd()) {
				// the common case, once per mirrored record: the last run grows in place
				run.count++;
				return;
			}
			if (sourceOffset < run.sourceEnd() || targetOffset < run.targetEnd()) {
				this.runs.clear();
				this.truncated = true;
			}
		}
		Run added = new Run(sourceOffset, targetOffset);
		this.runs.put(sourceOffset, added);
		this.last = added;
		if (this.runs.size() > this.capacity) {
			this.runs.pollFirstEntry();
			this.truncated = true;
		}
	}

	/**
	 * Translates a committed source offset to a target offset (see the class description).
	 * @param committed the group's committed source offset (the next record it would read)
	 * @return the target offset, or empty if nothing was mirrored yet or the offset falls before a
	 *     truncated mapping
	 */
	public synchronized OptionalLong translate(long committed) {
		Run last = this.last;
		if (last == null) {
			return OptionalLong.empty();
		}
		Map.Entry<Long, Run> floor = this.runs.floorEntry(committed);
		if (floor != null && committed < floor.getValue().sourceEnd()) {
			Run run = floor.getValue();
			return OptionalLong.of(run.targetStart + (committed - run.sourceStart));
		}
		Map.Entry<Long, Run> ceiling = this.runs.higherEntry(committed);
		if (ceiling != null) {
			if (floor == null && this.truncated) {
				return OptionalLong.empty();
			}
			return OptionalLong.of(ceiling.getValue().targetStart);
		}
		return OptionalLong.of(last.targetEnd());
	}

	/**
	 * Returns the source offset after the last mirrored record.
	 * @return the offset, or -1 if nothing is known
	 */
	public synchronized long nextSourceOffset() {
		Run last = this.last;
		return (last != null) ? last.sourceEnd() : -1;
	}

	/**
	 * Returns the target position after the last mirrored record.
	 * @return the offset, or -1 if nothing is known
	 */
	public synchronized long nextTargetOffset() {
		Run last = this.last;
		return (last != null) ? last.targetEnd() : -1;
	}

	/**
	 * Returns the number of runs kept.
	 * @return 0 to capacity
	 */
	public synchronized int runs() {
		return this.runs.size();
	}

	/**
	 * Returns whether records mirrored before the first known one were dropped or never known.
	 * @return whether the mapping is truncated
	 */
	public synchronized boolean isTruncated() {
		return this.truncated;
	}

	@Override
	public synchronized String toString() {
		return "OffsetMapping" + this.runs.values() + (this.truncated ? " (truncated)" : "");
	}

	/**
	 * Consecutive source offsets mapped to consecutive target offsets. Mutable: the last run's
	 * {@code count} grows with every record that extends it (no run is allocated per record);
	 * guarded by the mapping's lock.
	 */
	private static final class Run {

		private final long sourceStart;

		private final long targetStart;

		private long count = 1;

		Run(long sourceStart, long targetStart) {
			this.sourceStart = sourceStart;
			this.targetStart = targetStart;
		}

		long sourceEnd() {
			return this.sourceStart + this.count;
		}

		long targetEnd() {
			return this.targetStart + this.count;
		}

		@Override
		public String toString() {
			return "Run[sourceStart=" + this.sourceStart + ", targetStart=" + this.targetStart + ", count=" + this.count
					+ "]";
		}

	}

}
