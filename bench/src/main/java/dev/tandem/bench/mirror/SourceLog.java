package dev.tandem.bench.mirror;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLongArray;

import org.jspecify.annotations.Nullable;

/**
 * Where every record of one run went on the source: record id (the 8-byte key) to source
 * partition and offset. Record {@code id} goes to partition {@code id % partitions}.
 * Thread-safe: offsets are written by the producer's callbacks and read by the checks.
 */
final class SourceLog {

	private final int partitions;

	private final AtomicLongArray offsets;

	SourceLog(int partitions, int records) {
		this.partitions = partitions;
		this.offsets = new AtomicLongArray(records);
		for (int i = 0; i < records; i++) {
			this.offsets.set(i, -1);
		}
	}

	int partitions() {
		return this.partitions;
	}

	/** Returns the number of record ids of the run. */
	int size() {
		return this.offsets.length();
	}

	int partition(long id) {
		return (int) (id % this.partitions);
	}

	void offset(long id, long offset) {
		this.offsets.set((int) id, offset);
	}

	/** Returns the source offset of a record, or -1 if its send has not been acknowledged. */
	long offset(long id) {
		return this.offsets.get((int) id);
	}

	/** Returns how many of the first {@code records} ids went to a partition. */
	long count(int partition, long records) {
		return (records / this.partitions) + ((partition < records % this.partitions) ? 1 : 0);
	}

	static byte[] key(long id) {
		return ByteBuffer.allocate(Long.BYTES).putLong(id).array();
	}

	/** Returns the record id of a key, or -1 if it is not an 8-byte id. */
	static long id(byte @Nullable [] key) {
		return (key != null && key.length == Long.BYTES) ? ByteBuffer.wrap(key).getLong() : -1;
	}

}
