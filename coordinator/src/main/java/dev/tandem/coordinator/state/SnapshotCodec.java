package dev.tandem.coordinator.state;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;

/**
 * Stored format of a snapshot of a {@link DecisionTable}: its records, a trailer that detects
 * truncation, then (when there are any) its leases in a section of their own with a trailer
 * too, then (when any lease has one) the leases' run histories in a third section with a trailer:
 * per lease with a history, its owner, whether it is released, and its past runs (issue 26 item
 * 1). Snapshots written before leases or run histories existed still read; a reader from before
 * run histories reads a newer snapshot's records and leases and ignores the histories (it stops
 * reading after the leases' trailer).
 * <p>
 * Written in the grammar of {@link DecisionCodec}; where the files live is the server's
 * business.
 * <p>
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class SnapshotCodec {

	private static final int SNAPSHOT_TRAILER = 0x54444e45; // "TDNE"

	/** Starts the optional leases section after the records' trailer (older snapshots end before it). */
	private static final int SNAPSHOT_LEASES = 0x544c5345; // "TLSE"

	/** Starts the optional run-history section after the leases' trailer (older snapshots end before it). */
	private static final int SNAPSHOT_RUNS = 0x5452554e; // "TRUN"

	private SnapshotCodec() {
	}

	/**
	 * Writes a snapshot of records: the whole content of a {@link DecisionTable}.
	 * @param records the records, typically {@link DecisionTable#records()}
	 * @param output where to write (flushed, not closed)
	 * @throws IOException if writing fails
	 */
	public static void writeSnapshot(Collection<TransactionRecord> records, OutputStream output) throws IOException {
		writeSnapshot(records, List.of(), output);
	}

	/**
	 * Writes a snapshot of records and leases: the whole content of a {@link DecisionTable}. The
	 * leases follow the records' trailer in a section of their own, so a snapshot without leases
	 * has the layout of {@link #writeSnapshot(Collection, OutputStream)}.
	 * @param records the records, typically {@link DecisionTable#records()}
	 * @param leases the leases, typically {@link DecisionTable#leases()}
	 * @param output where to write (flushed, not closed)
	 * @throws IOException if writing fails
	 */
	public static void writeSnapshot(Collection<TransactionRecord> records, Collection<InstanceLease> leases,
			OutputStream output) throws IOException {
		DataOutputStream out = new DataOutputStream(output);
		out.writeByte(DecisionCodec.VERSION);
		out.writeByte(DecisionCodec.KIND_SNAPSHOT);
		out.writeInt(records.size());
		for (TransactionRecord record : records) {
			DecisionCodec.writeState(out, record.state());
			DecisionCodec.writeString(out, record.transactionId());
			DecisionCodec.writeString(out, record.owner());
			out.writeLong(record.finishedAtMs());
			if (record.decision() != null) {
				DecisionCodec.writeDecision(out, record.decision());
			}
		}
		out.writeInt(records.size());
		out.writeInt(SNAPSHOT_TRAILER);
		if (!leases.isEmpty()) {
			out.writeInt(SNAPSHOT_LEASES);
			out.writeInt(leases.size());
			for (InstanceLease lease : leases) {
				DecisionCodec.writeLease(out, lease);
			}
			out.writeInt(leases.size());
			out.writeInt(SNAPSHOT_TRAILER);
			List<InstanceLease> histories = leases.stream()
				.filter((lease) -> lease.released() || !lease.pastRuns().isEmpty())
				.toList();
			if (!histories.isEmpty()) {
				out.writeInt(SNAPSHOT_RUNS);
				out.writeInt(histories.size());
				for (InstanceLease lease : histories) {
					DecisionCodec.writeString(out, lease.owner());
					DecisionCodec.writeRuns(out, lease);
				}
				out.writeInt(histories.size());
				out.writeInt(SNAPSHOT_TRAILER);
			}
		}
		out.flush();
	}

	/**
	 * Reads a snapshot written by {@link #writeSnapshot(Collection, OutputStream)}.
	 * @param input where to read from (not closed)
	 * @return the records
	 * @throws IOException if reading fails
	 * @throws DecisionCodecException if the bytes are not a valid, complete snapshot
	 */
	public static List<TransactionRecord> readSnapshot(InputStream input) throws IOException {
		return readFullSnapshot(input).records();
	}

	/**
	 * The content of a snapshot.
	 *
	 * @param records the transaction records
	 * @param leases the instance leases (none in a snapshot written before leases existed), with
	 *     their run histories (none in a snapshot written before run histories existed)
	 * @since 0.1.0
	 */
	public record Snapshot(List<TransactionRecord> records, List<InstanceLease> leases) {

		public Snapshot {
			records = List.copyOf(records);
			leases = List.copyOf(leases);
		}

	}

	/**
	 * Reads a snapshot written by {@link #writeSnapshot(Collection, Collection, OutputStream)} or
	 * {@link #writeSnapshot(Collection, OutputStream)}, leases included.
	 * @param input where to read from (not closed)
	 * @return the records and leases
	 * @throws IOException if reading fails
	 * @throws DecisionCodecException if the bytes are not a valid, complete snapshot
	 */
	public static Snapshot readFullSnapshot(InputStream input) throws IOException {
		DataInputStream in = new DataInputStream(input);
		try {
			DecisionCodec.readHeader(in, DecisionCodec.KIND_SNAPSHOT);
			int count = in.readInt();
			if (count < 0) {
				throw new DecisionCodecException("Negative record count " + count);
			}
			List<TransactionRecord> records = new ArrayList<>(Math.min(count, 64 * 1024));
			for (int i = 0; i < count; i++) {
				DecisionState state = DecisionCodec.readState(in);
				String transactionId = DecisionCodec.readString(in);
				String owner = DecisionCodec.readString(in);
				long finishedAtMs = in.readLong();
				Decision decision = (state != DecisionState.ABORTED) ? DecisionCodec.readDecision(in) : null;
				records.add(new TransactionRecord(transactionId, owner, state, decision, finishedAtMs));
			}
			if (in.readInt() != count || in.readInt() != SNAPSHOT_TRAILER) {
				throw new DecisionCodecException("Snapshot trailer missing or wrong: corrupt snapshot");
			}
			List<InstanceLease> leases = new ArrayList<>();
			int marker = readSectionMarker(in);
			if (marker == SNAPSHOT_LEASES) {
				int leaseCount = in.readInt();
				if (leaseCount < 0) {
					throw new DecisionCodecException("Negative lease count " + leaseCount);
				}
				for (int i = 0; i < leaseCount; i++) {
					leases.add(DecisionCodec.readLease(in));
				}
				if (in.readInt() != leaseCount || in.readInt() != SNAPSHOT_TRAILER) {
					throw new DecisionCodecException("Snapshot leases trailer missing or wrong: corrupt snapshot");
				}
				marker = readSectionMarker(in);
			}
			if (marker == SNAPSHOT_RUNS) {
				readRuns(in, leases);
				marker = readSectionMarker(in);
			}
			if (marker != -1) {
				throw new DecisionCodecException("Unknown snapshot section " + Integer.toHexString(marker));
			}
			return new Snapshot(records, leases);
		}
		catch (EOFException ex) {
			throw new DecisionCodecException("Truncated snapshot", ex);
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw new DecisionCodecException("Invalid record in snapshot: " + ex.getMessage(), ex);
		}
	}

	/** Reads the next section's marker, or returns -1 at the end of the snapshot. */
	private static int readSectionMarker(DataInputStream in) throws IOException {
		int first = in.read();
		if (first == -1) {
			return -1;
		}
		return (first << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
	}

	/** Reads the run-history section into the leases read before it (matched by owner). */
	private static void readRuns(DataInputStream in, List<InstanceLease> leases) throws IOException {
		int count = in.readInt();
		if (count < 0) {
			throw new DecisionCodecException("Negative run-history count " + count);
		}
		for (int i = 0; i < count; i++) {
			String owner = DecisionCodec.readString(in);
			int index = -1;
			for (int j = 0; j < leases.size() && index < 0; j++) {
				if (leases.get(j).owner().equals(owner)) {
					index = j;
				}
			}
			if (index < 0) {
				throw new DecisionCodecException("Run history of " + owner + ", which holds no lease: corrupt snapshot");
			}
			leases.set(index, DecisionCodec.readRuns(in, leases.get(index)));
		}
		if (in.readInt() != count || in.readInt() != SNAPSHOT_TRAILER) {
			throw new DecisionCodecException("Snapshot run-history trailer missing or wrong: corrupt snapshot");
		}
	}

}
