package dev.tandem.coordinator.state;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.Decision.DatabaseRecord;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;

/**
 * The binary grammar every coordinator format is written in, and the encodings of the pieces
 * they share (decisions, leases, states). The formats themselves have one class each: the wire
 * messages between clients and peers ({@link MessageCodec}), the Raft log entries
 * ({@link LogEntryCodec}) and the snapshots ({@link SnapshotCodec}).
 * <p>
 * Every message starts with a format version byte ({@link #VERSION}) and a kind byte (listed
 * here, one per format, so no two formats share one), so a reader refuses what it does not
 * understand instead of misreading it. Strings are UTF-8 with a variable-length size; counts are
 * variable-length integers; times, producer ids and offsets are 8-byte big-endian.
 * <p>
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class DecisionCodec {

	/**
	 * The format version this codec writes and reads.
	 */
	public static final byte VERSION = 1;

	/**
	 * Largest encoded string, in bytes (ids, owners, cluster and topic names).
	 */
	public static final int MAX_STRING_BYTES = 32 * 1024;

	// Kinds: one table for every format, so that no two formats share a kind

	/** {@link MessageCodec}: a command; also a log entry of the first layout. */
	static final byte KIND_COMMAND = 1;

	/** {@link MessageCodec}: the results of a command. */
	static final byte KIND_RESULTS = 2;

	/** {@link MessageCodec}: a query. */
	static final byte KIND_QUERY = 3;

	/** {@link MessageCodec}: the reply to a query. */
	static final byte KIND_REPLY = 4;

	/** {@link SnapshotCodec}: a snapshot. */
	static final byte KIND_SNAPSHOT = 5;

	/** {@link MessageCodec}: a request wrapped with the caller's identity. */
	static final byte KIND_ENVELOPE = 6;

	/** {@link LogEntryCodec}: a log entry of the second layout (a command with its grant). */
	static final byte KIND_GRANTED_COMMAND = 7;

	/** {@link LogEntryCodec}: a log entry (a command with its grant and the leader's time). */
	static final byte KIND_STAMPED_COMMAND = 8;

	/** The layout byte of a decision with database participants ({@link #writeDecision}). */
	static final byte DATABASES_LAYOUT = 1;

	/**
	 * The layout byte of a decision whose Kafka participants carry their transaction version
	 * ({@link #writeDecision}; issue 26 item 2).
	 */
	static final byte VERSIONED_LAYOUT = 2;

	private DecisionCodec() {
	}

	/**
	 * Writes a decision. One without database participants is written in the first layout
	 * (transaction id, owner, time, a count of one or more Kafka participants, each participant),
	 * which every earlier reader reads. One with database participants starts its participants
	 * with a count of zero, which no decision of the first layout has (it always has a
	 * participant), then a layout byte ({@link #DATABASES_LAYOUT}), the Kafka participants' count
	 * and participants, and the databases' count and (name, prepared id) pairs: an earlier reader
	 * refuses it (a decision without participants) instead of misreading it. One whose participants
	 * carry their transaction version (any not {@code TRANSACTION_VERSION_UNKNOWN}) is written the
	 * same way with {@link #VERSIONED_LAYOUT}, one byte more per participant (its transaction
	 * version), and the databases' count always; decisions without versions keep the earlier layouts
	 * byte for byte.
	 */
	static void writeDecision(DataOutputStream out, Decision decision) throws IOException {
		writeString(out, decision.transactionId());
		writeString(out, decision.owner());
		out.writeLong(decision.decidedAtMs());
		boolean versioned = decision.participants().stream().anyMatch(ParticipantRecord::transactionVersionKnown);
		boolean databases = versioned || !decision.databases().isEmpty();
		if (databases) {
			writeCount(out, 0);
			out.writeByte(versioned ? VERSIONED_LAYOUT : DATABASES_LAYOUT);
		}
		writeCount(out, decision.participants().size());
		for (ParticipantRecord participant : decision.participants()) {
			writeString(out, participant.cluster());
			writeString(out, participant.transactionalId());
			out.writeLong(participant.producerId());
			out.writeShort(participant.producerEpoch());
			writeString(out, participant.markerTopic());
			out.writeInt(participant.markerPartition());
			out.writeLong(participant.markerOffset());
			if (versioned) {
				out.writeByte(participant.transactionVersion());
			}
		}
		if (databases) {
			writeCount(out, decision.databases().size());
			for (DatabaseRecord database : decision.databases()) {
				writeString(out, database.database());
				writeString(out, database.preparedId());
			}
		}
	}

	static Decision readDecision(DataInputStream in) throws IOException {
		String transactionId = readString(in);
		String owner = readString(in);
		long decidedAtMs = in.readLong();
		int count = readCount(in);
		boolean databases = (count == 0);
		boolean versioned = false;
		if (databases) {
			byte layout = in.readByte();
			if (layout != DATABASES_LAYOUT && layout != VERSIONED_LAYOUT) {
				throw new DecisionCodecException("Unknown decision layout " + layout);
			}
			versioned = layout == VERSIONED_LAYOUT;
			count = readCount(in);
		}
		List<ParticipantRecord> participants = new ArrayList<>(Math.min(count, 64));
		for (int i = 0; i < count; i++) {
			String cluster = readString(in);
			String transactionalId = readString(in);
			long producerId = in.readLong();
			short producerEpoch = in.readShort();
			String markerTopic = readString(in);
			int markerPartition = in.readInt();
			long markerOffset = in.readLong();
			byte transactionVersion = versioned ? in.readByte() : ParticipantRecord.TRANSACTION_VERSION_UNKNOWN;
			if (transactionVersion < ParticipantRecord.TRANSACTION_VERSION_UNKNOWN
					|| transactionVersion > ParticipantRecord.TRANSACTION_V2) {
				throw new DecisionCodecException("Unknown transaction version " + transactionVersion);
			}
			participants.add(new ParticipantRecord(cluster, transactionalId, producerId, producerEpoch, markerTopic,
					markerPartition, markerOffset, transactionVersion));
		}
		List<DatabaseRecord> branches = new ArrayList<>();
		if (databases) {
			int databaseCount = readCount(in);
			for (int i = 0; i < databaseCount; i++) {
				branches.add(new DatabaseRecord(readString(in), readString(in)));
			}
		}
		return new Decision(transactionId, owner, decidedAtMs, participants, branches);
	}

	static void writeLease(DataOutputStream out, InstanceLease lease) throws IOException {
		writeString(out, lease.idPrefix());
		writeString(out, lease.instanceId());
		writeString(out, lease.incarnation());
		out.writeLong(lease.expiresAtMs());
		out.writeBoolean(lease.claimedBy() != null);
		if (lease.claimedBy() != null) {
			writeString(out, lease.claimedBy());
			out.writeBoolean(lease.takenOver());
		}
	}

	static InstanceLease readLease(DataInputStream in) throws IOException {
		String idPrefix = readString(in);
		String instanceId = readString(in);
		String incarnation = readString(in);
		long expiresAtMs = in.readLong();
		String claimedBy = in.readBoolean() ? readString(in) : null;
		boolean takenOver = (claimedBy != null) && in.readBoolean();
		return new InstanceLease(idPrefix + "." + instanceId, idPrefix, instanceId, incarnation, expiresAtMs, claimedBy,
				takenOver);
	}

	/**
	 * Writes a lease's run history: whether it is released, then its past runs (incarnation and
	 * when it left), oldest first.
	 */
	static void writeRuns(DataOutputStream out, InstanceLease lease) throws IOException {
		out.writeBoolean(lease.released());
		writeCount(out, lease.pastRuns().size());
		for (InstanceLease.PastRun run : lease.pastRuns()) {
			writeString(out, run.incarnation());
			out.writeLong(run.leftAtMs());
		}
	}

	/** Reads what {@link #writeRuns} wrote and returns the lease with that history. */
	static InstanceLease readRuns(DataInputStream in, InstanceLease lease) throws IOException {
		boolean released = in.readBoolean();
		int count = readCount(in);
		if (count > InstanceLease.MAX_PAST_RUNS) {
			throw new DecisionCodecException("Too many past runs for " + lease.owner() + ": " + count);
		}
		List<InstanceLease.PastRun> runs = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			runs.add(new InstanceLease.PastRun(readString(in), in.readLong()));
		}
		return lease.withHistory(runs, released);
	}

	static void writeState(DataOutputStream out, DecisionState state) throws IOException {
		out.writeByte(switch (state) {
			case UNKNOWN -> 0;
			case DECIDED -> 1;
			case COMPLETED -> 2;
			case ABORTED -> 3;
		});
	}

	static DecisionState readState(DataInputStream in) throws IOException {
		byte code = in.readByte();
		return switch (code) {
			case 0 -> DecisionState.UNKNOWN;
			case 1 -> DecisionState.DECIDED;
			case 2 -> DecisionState.COMPLETED;
			case 3 -> DecisionState.ABORTED;
			default -> throw new DecisionCodecException("Unknown state code " + code);
		};
	}

	static void writeString(DataOutputStream out, String value) throws IOException {
		byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
		if (bytes.length > MAX_STRING_BYTES) {
			throw new DecisionCodecException("String of " + bytes.length + " bytes exceeds the limit of "
					+ MAX_STRING_BYTES + ": " + value.substring(0, 64) + "...");
		}
		writeCount(out, bytes.length);
		out.write(bytes);
	}

	static String readString(DataInputStream in) throws IOException {
		int length = readCount(in);
		if (length > MAX_STRING_BYTES) {
			throw new DecisionCodecException("String length " + length + " exceeds the limit of " + MAX_STRING_BYTES);
		}
		byte[] bytes = new byte[length];
		in.readFully(bytes);
		String value = new String(bytes, StandardCharsets.UTF_8);
		// The JDK replaces malformed input with U+FFFD; valid UTF-8, and only valid UTF-8, encodes
		// back to the same bytes (ASCII, the common case, needs no check)
		if (!isAscii(bytes) && !Arrays.equals(value.getBytes(StandardCharsets.UTF_8), bytes)) {
			throw new DecisionCodecException("String of " + length + " bytes is not valid UTF-8");
		}
		return value;
	}

	private static boolean isAscii(byte[] bytes) {
		for (byte b : bytes) {
			if (b < 0) {
				return false;
			}
		}
		return true;
	}

	/** Unsigned LEB128 variable-length int (1 byte up to 127). */
	static void writeCount(DataOutputStream out, int value) throws IOException {
		if (value < 0) {
			throw new IllegalArgumentException("Negative count " + value);
		}
		int remaining = value;
		while ((remaining & ~0x7F) != 0) {
			out.writeByte((remaining & 0x7F) | 0x80);
			remaining >>>= 7;
		}
		out.writeByte(remaining);
	}

	static int readCount(DataInputStream in) throws IOException {
		int value = 0;
		for (int shift = 0; shift < 32; shift += 7) {
			int b = in.readUnsignedByte();
			value |= (b & 0x7F) << shift;
			if ((b & 0x80) == 0) {
				if (value < 0) {
					throw new DecisionCodecException("Count out of range");
				}
				return value;
			}
		}
		throw new DecisionCodecException("Variable-length count longer than 5 bytes");
	}

	/** Reads the version and kind bytes, refusing another version or kind. */
	static void readHeader(DataInputStream in, byte expectedKind) throws IOException {
		byte version = in.readByte();
		if (version != VERSION) {
			throw new DecisionCodecException("Unsupported format version " + version + " (this codec reads " + VERSION
					+ "): a newer peer wrote it, or the bytes are corrupt");
		}
		byte kind = in.readByte();
		if (kind != expectedKind) {
			throw new DecisionCodecException("Expected message kind " + expectedKind + " but got " + kind);
		}
	}

	/** Writes a message of one kind: the version and kind bytes, then what the writer writes. */
	static byte[] encode(byte kind, Writer writer) {
		ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
		DataOutputStream out = new DataOutputStream(bytes);
		try {
			out.writeByte(VERSION);
			out.writeByte(kind);
			writer.write(out);
			out.flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot happen with a byte array", ex);
		}
		return bytes.toByteArray();
	}

	/**
	 * Reads a message of one kind that fills the whole input, turning any failure into a
	 * {@link DecisionCodecException}.
	 */
	static <T> T decode(InputStream input, byte kind, Reader<T> reader) {
		DataInputStream in = new DataInputStream(input);
		try {
			readHeader(in, kind);
			T value = reader.read(in);
			if (in.read() != -1) {
				throw new DecisionCodecException("Trailing bytes after message of kind " + kind);
			}
			return value;
		}
		catch (EOFException ex) {
			throw new DecisionCodecException("Truncated message of kind " + kind, ex);
		}
		catch (IOException ex) {
			throw new DecisionCodecException("Unreadable message of kind " + kind, ex);
		}
		catch (IllegalArgumentException | NullPointerException ex) {
			throw new DecisionCodecException("Invalid message of kind " + kind + ": " + ex.getMessage(), ex);
		}
	}

	@FunctionalInterface
	interface Writer {

		void write(DataOutputStream out) throws IOException;

	}

	@FunctionalInterface
	interface Reader<T> {

		T read(DataInputStream in) throws IOException;

	}

}
