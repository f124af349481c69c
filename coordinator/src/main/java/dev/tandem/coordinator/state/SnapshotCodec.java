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
 * too. Snapshots written before leases existed still read.
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
	 * @param leases the instance leases (none in a snapshot written before leases existed)
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
			int section = in.read();
			if (section != -1) {
				int marker = (section << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8)
						| in.readUnsignedByte();
				if (marker != SNAPSHOT_LEASES) {
					throw new DecisionCodecException("Unknown snapshot section " + Integer.toHexString(marker));
				}
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

}
