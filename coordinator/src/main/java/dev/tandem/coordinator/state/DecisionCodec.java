package dev.tandem.coordinator.state;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;
import org.jspecify.annotations.Nullable;

/**
 * Compact binary format of {@link Command commands}, {@link OperationResult results},
 * {@link Query queries}, {@link QueryReply replies} and snapshots of a {@link DecisionTable}.
 * <p>
 * Every message starts with a format version byte ({@link #VERSION}) and a kind byte, so a
 * reader refuses what it does not understand instead of misreading it. Strings are UTF-8 with
 * a variable-length size; counts are variable-length integers; times, producer ids and
 * offsets are 8-byte big-endian. A snapshot ends with a trailer that detects truncation.
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

	private static final byte KIND_COMMAND = 1;

	private static final byte KIND_RESULTS = 2;

	private static final byte KIND_QUERY = 3;

	private static final byte KIND_REPLY = 4;

	private static final byte KIND_SNAPSHOT = 5;

	private static final byte KIND_ENVELOPE = 6;

	private static final byte KIND_GRANTED_COMMAND = 7;

	private static final byte KIND_STAMPED_COMMAND = 8;

	private static final byte OP_DECIDE = 1;

	private static final byte OP_COMPLETE = 2;

	private static final byte OP_ABORT = 3;

	private static final byte OP_PURGE = 4;

	private static final byte OP_RENEW_LEASE = 5;

	private static final byte OP_CLAIM_LEASE = 6;

	private static final byte OP_RELEASE_LEASE = 7;

	private static final byte OP_DECIDE_AS_RUN = 8;

	private static final byte RESULT_DECIDED = 1;

	private static final byte RESULT_ABORT_CONFLICT = 2;

	private static final byte RESULT_STATE_AFTER = 3;

	private static final byte RESULT_PURGED = 4;

	private static final byte RESULT_OWNER_CLAIMED = 5;

	private static final byte RESULT_LEASE_AFTER = 6;

	private static final byte RESULT_REFUSED = 7;

	/** Longest refusal reason in a result, in characters (a reason is cut to fit). */
	private static final int MAX_REASON_CHARS = 1024;

	private static final byte QUERY_STATE = 1;

	private static final byte QUERY_IN_DOUBT = 2;

	private static final byte QUERY_COUNTS = 3;

	private static final byte QUERY_LEASES = 4;

	private static final byte QUERY_APP_IN_DOUBT = 5;

	private static final int SNAPSHOT_TRAILER = 0x54444e45; // "TDNE"

	/** Starts the optional leases section after the records' trailer (older snapshots end before it). */
	private static final int SNAPSHOT_LEASES = 0x544c5345; // "TLSE"

	private DecisionCodec() {
	}

	// Commands

	/**
	 * Encodes a command (the payload of one Raft log entry).
	 * @param command the command
	 * @return the bytes
	 * @throws DecisionCodecException if a string exceeds {@link #MAX_STRING_BYTES}
	 */
	public static byte[] encodeCommand(Command command) {
		return encode(KIND_COMMAND, (out) -> {
			out.writeLong(command.atMs());
			writeCount(out, command.operations().size());
			for (Operation operation : command.operations()) {
				writeOperation(out, operation);
			}
		});
	}

	/**
	 * Decodes a command.
	 * @param bytes the bytes of {@link #encodeCommand(Command)}
	 * @return the command
	 * @throws DecisionCodecException if the bytes are not a valid command
	 */
	public static Command decodeCommand(byte[] bytes) {
		return decodeCommand(new ByteArrayInputStream(bytes));
	}

	/**
	 * Decodes a command from a stream holding nothing else.
	 * @param input the stream (not closed)
	 * @return the command
	 * @throws DecisionCodecException if the bytes are not a valid command
	 */
	public static Command decodeCommand(InputStream input) {
		return decode(input, KIND_COMMAND, (in) -> {
			long atMs = in.readLong();
			int count = readCount(in);
			List<Operation> operations = new ArrayList<>(Math.min(count, 1024));
			for (int i = 0; i < count; i++) {
				operations.add(readOperation(in));
			}
			return new Command(atMs, operations);
		});
	}

	/**
	 * Encodes the results of a command.
	 * @param results the results, one per operation
	 * @return the bytes
	 */
	public static byte[] encodeResults(List<OperationResult> results) {
		return encode(KIND_RESULTS, (out) -> {
			writeCount(out, results.size());
			for (OperationResult result : results) {
				writeResult(out, result);
			}
		});
	}

	/**
	 * Decodes the results of a command.
	 * @param input the stream of {@link #encodeResults(List)} bytes (not closed)
	 * @return the results, one per operation
	 * @throws DecisionCodecException if the bytes are not valid results
	 */
	public static List<OperationResult> decodeResults(InputStream input) {
		return decode(input, KIND_RESULTS, (in) -> {
			int count = readCount(in);
			List<OperationResult> results = new ArrayList<>(Math.min(count, 1024));
			for (int i = 0; i < count; i++) {
				results.add(readResult(in));
			}
			return results;
		});
	}

	/**
	 * Decodes the results of a command.
	 * @param bytes the bytes of {@link #encodeResults(List)}
	 * @return the results, one per operation
	 * @throws DecisionCodecException if the bytes are not valid results
	 */
	public static List<OperationResult> decodeResults(byte[] bytes) {
		return decodeResults(new ByteArrayInputStream(bytes));
	}

	// Queries

	/**
	 * Encodes a query.
	 * @param query the query
	 * @return the bytes
	 */
	public static byte[] encodeQuery(Query query) {
		return encode(KIND_QUERY, (out) -> {
			if (query instanceof Query.StateQuery state) {
				out.writeByte(QUERY_STATE);
				writeString(out, state.transactionId());
			}
			else if (query instanceof Query.InDoubtQuery inDoubt) {
				out.writeByte(QUERY_IN_DOUBT);
				writeString(out, inDoubt.owner());
			}
			else if (query instanceof Query.CountsQuery) {
				out.writeByte(QUERY_COUNTS);
			}
			else if (query instanceof Query.LeasesQuery leases) {
				out.writeByte(QUERY_LEASES);
				writeString(out, leases.idPrefix());
			}
			else if (query instanceof Query.AppInDoubtQuery inDoubt) {
				out.writeByte(QUERY_APP_IN_DOUBT);
				writeString(out, inDoubt.idPrefix());
			}
			else {
				throw new IllegalArgumentException("Unknown query " + query);
			}
		});
	}

	/**
	 * Decodes a query.
	 * @param input the stream of {@link #encodeQuery(Query)} bytes (not closed)
	 * @return the query
	 * @throws DecisionCodecException if the bytes are not a valid query
	 */
	public static Query decodeQuery(InputStream input) {
		return decode(input, KIND_QUERY, (in) -> {
			byte type = in.readByte();
			return switch (type) {
				case QUERY_STATE -> new Query.StateQuery(readString(in));
				case QUERY_IN_DOUBT -> new Query.InDoubtQuery(readString(in));
				case QUERY_COUNTS -> new Query.CountsQuery();
				case QUERY_LEASES -> new Query.LeasesQuery(readString(in));
				case QUERY_APP_IN_DOUBT -> new Query.AppInDoubtQuery(readString(in));
				default -> throw new DecisionCodecException("Unknown query type " + type);
			};
		});
	}

	/**
	 * Decodes a query.
	 * @param bytes the bytes of {@link #encodeQuery(Query)}
	 * @return the query
	 * @throws DecisionCodecException if the bytes are not a valid query
	 */
	public static Query decodeQuery(byte[] bytes) {
		return decodeQuery(new ByteArrayInputStream(bytes));
	}

	/**
	 * Encodes the reply to a query.
	 * @param reply the reply
	 * @return the bytes
	 */
	public static byte[] encodeReply(QueryReply reply) {
		return encode(KIND_REPLY, (out) -> {
			if (reply instanceof QueryReply.StateReply state) {
				out.writeByte(QUERY_STATE);
				writeState(out, state.state());
			}
			else if (reply instanceof QueryReply.InDoubtReply inDoubt) {
				out.writeByte(QUERY_IN_DOUBT);
				writeCount(out, inDoubt.decisions().size());
				for (Decision decision : inDoubt.decisions()) {
					writeDecision(out, decision);
				}
			}
			else if (reply instanceof QueryReply.CountsReply counts) {
				out.writeByte(QUERY_COUNTS);
				writeCount(out, counts.counts().decided());
				writeCount(out, counts.counts().completed());
				writeCount(out, counts.counts().aborted());
			}
			else if (reply instanceof QueryReply.LeasesReply leases) {
				out.writeByte(QUERY_LEASES);
				writeCount(out, leases.leases().size());
				for (InstanceLease lease : leases.leases()) {
					writeLease(out, lease);
				}
			}
			else {
				throw new IllegalArgumentException("Unknown reply " + reply);
			}
		});
	}

	/**
	 * Decodes the reply to a query.
	 * @param input the stream of {@link #encodeReply(QueryReply)} bytes (not closed)
	 * @return the reply
	 * @throws DecisionCodecException if the bytes are not a valid reply
	 */
	public static QueryReply decodeReply(InputStream input) {
		return decode(input, KIND_REPLY, (in) -> {
			byte type = in.readByte();
			switch (type) {
				case QUERY_STATE:
					return new QueryReply.StateReply(readState(in));
				case QUERY_IN_DOUBT:
					int count = readCount(in);
					List<Decision> decisions = new ArrayList<>(Math.min(count, 1024));
					for (int i = 0; i < count; i++) {
						decisions.add(readDecision(in));
					}
					return new QueryReply.InDoubtReply(decisions);
				case QUERY_COUNTS:
					return new QueryReply.CountsReply(
							new DecisionTable.Counts(readCount(in), readCount(in), readCount(in)));
				case QUERY_LEASES:
					int leaseCount = readCount(in);
					List<InstanceLease> leases = new ArrayList<>(Math.min(leaseCount, 1024));
					for (int i = 0; i < leaseCount; i++) {
						leases.add(readLease(in));
					}
					return new QueryReply.LeasesReply(leases);
				default:
					throw new DecisionCodecException("Unknown reply type " + type);
			}
		});
	}

	/**
	 * Decodes the reply to a query.
	 * @param bytes the bytes of {@link #encodeReply(QueryReply)}
	 * @return the reply
	 * @throws DecisionCodecException if the bytes are not a valid reply
	 */
	public static QueryReply decodeReply(byte[] bytes) {
		return decodeReply(new ByteArrayInputStream(bytes));
	}

	// Snapshots

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
		out.writeByte(VERSION);
		out.writeByte(KIND_SNAPSHOT);
		out.writeInt(records.size());
		for (TransactionRecord record : records) {
			writeState(out, record.state());
			writeString(out, record.transactionId());
			writeString(out, record.owner());
			out.writeLong(record.finishedAtMs());
			if (record.decision() != null) {
				writeDecision(out, record.decision());
			}
		}
		out.writeInt(records.size());
		out.writeInt(SNAPSHOT_TRAILER);
		if (!leases.isEmpty()) {
			out.writeInt(SNAPSHOT_LEASES);
			out.writeInt(leases.size());
			for (InstanceLease lease : leases) {
				writeLease(out, lease);
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
			readHeader(in, KIND_SNAPSHOT);
			int count = in.readInt();
			if (count < 0) {
				throw new DecisionCodecException("Negative record count " + count);
			}
			List<TransactionRecord> records = new ArrayList<>(Math.min(count, 64 * 1024));
			for (int i = 0; i < count; i++) {
				DecisionState state = readState(in);
				String transactionId = readString(in);
				String owner = readString(in);
				long finishedAtMs = in.readLong();
				Decision decision = (state != DecisionState.ABORTED) ? readDecision(in) : null;
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
					leases.add(readLease(in));
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

	// Authorization

	/**
	 * Wraps a client request's payload with the identity the receiving peer authenticated
	 * (done on the peer, never by the client: whatever a client sends is wrapped again).
	 * @param identity the authenticated identity, or {@code null} for a plain-text caller
	 * @param payload the request's bytes as the client sent them
	 * @return the bytes
	 */
	public static byte[] encodeEnvelope(@Nullable String identity, byte[] payload) {
		return encode(KIND_ENVELOPE, (out) -> {
			out.writeBoolean(identity != null);
			if (identity != null) {
				writeString(out, identity);
			}
			writeCount(out, payload.length);
			out.write(payload);
		});
	}

	/**
	 * Returns whether a message's first two bytes are those of an envelope.
	 * @param version the first byte
	 * @param kind the second byte
	 * @return whether {@link #decodeEnvelope} may read it
	 */
	public static boolean isEnvelope(byte version, byte kind) {
		return version == VERSION && kind == KIND_ENVELOPE;
	}

	/**
	 * Decodes what {@link #encodeEnvelope} wrote.
	 * @param input the stream (not closed)
	 * @return the identity and payload
	 * @throws DecisionCodecException if the bytes are not an envelope
	 */
	public static Envelope decodeEnvelope(InputStream input) {
		return decode(input, KIND_ENVELOPE, (in) -> {
			String identity = in.readBoolean() ? readString(in) : null;
			byte[] payload = new byte[readCount(in)];
			in.readFully(payload);
			return new Envelope(identity, payload);
		});
	}

	/**
	 * Encodes a log entry: a command with the grant of the caller that sent it and the leader's
	 * time when it accepted the command. The leader's time, not the sender's, is the command's
	 * time when it is applied (lease expiry, completion and abort times, retention), so a client
	 * with a skewed clock cannot expire other instances' leases or keep its own alive, and every
	 * replica applies the same time.
	 * @param grant the caller's grant
	 * @param leaderTimeMs the accepting leader's clock, epoch milliseconds
	 * @param command the bytes of {@link #encodeCommand(Command)}
	 * @return the bytes
	 */
	public static byte[] encodeLogEntry(Grant grant, long leaderTimeMs, byte[] command) {
		return encode(KIND_STAMPED_COMMAND, (out) -> {
			out.writeLong(leaderTimeMs);
			writeGrant(out, grant);
			writeCount(out, command.length);
			out.write(command);
		});
	}

	/**
	 * Decodes a log entry written by {@link #encodeLogEntry} or by an earlier version (a plain
	 * command, or a command with its grant: those keep the sender's time).
	 * @param bytes the entry
	 * @return the grant and the command, whose {@link Command#atMs()} is the time to apply it with
	 * @throws DecisionCodecException if the bytes are not a valid entry
	 */
	public static LogEntry decodeLogEntry(byte[] bytes) {
		if (bytes.length < 2 || (bytes[1] != KIND_GRANTED_COMMAND && bytes[1] != KIND_STAMPED_COMMAND)) {
			return new LogEntry(Grant.ALL, decodeCommand(bytes));
		}
		boolean stamped = bytes[1] == KIND_STAMPED_COMMAND;
		return decode(new ByteArrayInputStream(bytes), bytes[1], (in) -> {
			long leaderTimeMs = stamped ? in.readLong() : 0;
			Grant grant = readGrant(in);
			int length = readCount(in);
			if (length > bytes.length) {
				throw new DecisionCodecException("Command length " + length + " exceeds the entry's " + bytes.length);
			}
			byte[] command = new byte[length];
			in.readFully(command);
			Command sent = decodeCommand(command);
			return new LogEntry(grant, stamped ? new Command(leaderTimeMs, sent.operations()) : sent);
		});
	}

	private static void writeGrant(DataOutputStream out, Grant grant) throws IOException {
		writeString(out, grant.identity());
		out.writeBoolean(grant.admin());
		writeCount(out, grant.ownerPrefixes().size());
		for (String prefix : grant.ownerPrefixes()) {
			writeString(out, prefix);
		}
	}

	private static Grant readGrant(DataInputStream in) throws IOException {
		String identity = readString(in);
		boolean admin = in.readBoolean();
		int count = readCount(in);
		List<String> prefixes = new ArrayList<>(Math.min(count, 64));
		for (int i = 0; i < count; i++) {
			prefixes.add(readString(in));
		}
		return new Grant(identity, admin, prefixes);
	}

	/**
	 * A client request's payload with the identity the receiving peer authenticated.
	 *
	 * @param identity the identity, or {@code null} for a plain-text caller
	 * @param payload the request's bytes
	 * @since 0.1.0
	 */
	public record Envelope(@Nullable String identity, byte[] payload) {

	}

	/**
	 * One Raft log entry: a command and the grant it is applied with.
	 *
	 * @param grant the grant of the caller that sent the command
	 * @param command the command
	 * @since 0.1.0
	 */
	public record LogEntry(Grant grant, Command command) {

	}

	// Pieces

	private static void writeOperation(DataOutputStream out, Operation operation) throws IOException {
		if (operation instanceof Operation.Decide decide && decide.incarnation() == null) {
			out.writeByte(OP_DECIDE);
			writeDecision(out, decide.decision());
		}
		else if (operation instanceof Operation.Decide decide) {
			out.writeByte(OP_DECIDE_AS_RUN);
			writeDecision(out, decide.decision());
			writeString(out, decide.incarnation());
		}
		else if (operation instanceof Operation.Complete complete) {
			out.writeByte(OP_COMPLETE);
			writeString(out, complete.transactionId());
		}
		else if (operation instanceof Operation.Abort abort) {
			out.writeByte(OP_ABORT);
			writeString(out, abort.transactionId());
			writeString(out, abort.owner());
		}
		else if (operation instanceof Operation.Purge purge) {
			out.writeByte(OP_PURGE);
			out.writeLong(purge.retentionMs());
		}
		else if (operation instanceof Operation.RenewLease renew) {
			out.writeByte(OP_RENEW_LEASE);
			writeString(out, renew.idPrefix());
			writeString(out, renew.instanceId());
			writeString(out, renew.incarnation());
			out.writeLong(renew.durationMs());
		}
		else if (operation instanceof Operation.ClaimLease claim) {
			out.writeByte(OP_CLAIM_LEASE);
			writeString(out, claim.owner());
			writeString(out, claim.claimant());
		}
		else if (operation instanceof Operation.ReleaseLease release) {
			out.writeByte(OP_RELEASE_LEASE);
			writeString(out, release.owner());
			writeString(out, release.by());
		}
		else {
			throw new IllegalArgumentException("Unknown operation " + operation);
		}
	}

	private static Operation readOperation(DataInputStream in) throws IOException {
		byte type = in.readByte();
		return switch (type) {
			case OP_DECIDE -> new Operation.Decide(readDecision(in));
			case OP_DECIDE_AS_RUN -> new Operation.Decide(readDecision(in), readString(in));
			case OP_COMPLETE -> new Operation.Complete(readString(in));
			case OP_ABORT -> new Operation.Abort(readString(in), readString(in));
			case OP_PURGE -> new Operation.Purge(in.readLong());
			case OP_RENEW_LEASE -> new Operation.RenewLease(readString(in), readString(in), readString(in), in.readLong());
			case OP_CLAIM_LEASE -> new Operation.ClaimLease(readString(in), readString(in));
			case OP_RELEASE_LEASE -> new Operation.ReleaseLease(readString(in), readString(in));
			default -> throw new DecisionCodecException("Unknown operation type " + type);
		};
	}

	private static void writeResult(DataOutputStream out, OperationResult result) throws IOException {
		if (result instanceof OperationResult.Decided decided) {
			out.writeByte(RESULT_DECIDED);
			out.writeBoolean(decided.created());
			writeDecision(out, decided.decision());
		}
		else if (result instanceof OperationResult.AbortConflict conflict) {
			out.writeByte(RESULT_ABORT_CONFLICT);
			writeString(out, conflict.transactionId());
		}
		else if (result instanceof OperationResult.StateAfter stateAfter) {
			out.writeByte(RESULT_STATE_AFTER);
			writeState(out, stateAfter.state());
		}
		else if (result instanceof OperationResult.Purged purged) {
			out.writeByte(RESULT_PURGED);
			writeCount(out, purged.count());
		}
		else if (result instanceof OperationResult.OwnerClaimed claimed) {
			out.writeByte(RESULT_OWNER_CLAIMED);
			writeString(out, claimed.transactionId());
			writeString(out, claimed.claimedBy());
		}
		else if (result instanceof OperationResult.LeaseAfter after) {
			out.writeByte(RESULT_LEASE_AFTER);
			out.writeBoolean(after.lease() != null);
			if (after.lease() != null) {
				writeLease(out, after.lease());
			}
		}
		else if (result instanceof OperationResult.Refused refused) {
			out.writeByte(RESULT_REFUSED);
			String reason = refused.reason();
			writeString(out, (reason.length() > MAX_REASON_CHARS) ? reason.substring(0, MAX_REASON_CHARS) : reason);
		}
		else {
			throw new IllegalArgumentException("Unknown result " + result);
		}
	}

	private static OperationResult readResult(DataInputStream in) throws IOException {
		byte type = in.readByte();
		switch (type) {
			case RESULT_DECIDED:
				boolean created = in.readBoolean();
				return new OperationResult.Decided(readDecision(in), created);
			case RESULT_ABORT_CONFLICT:
				return new OperationResult.AbortConflict(readString(in));
			case RESULT_STATE_AFTER:
				return new OperationResult.StateAfter(readState(in));
			case RESULT_PURGED:
				return new OperationResult.Purged(readCount(in));
			case RESULT_OWNER_CLAIMED:
				return new OperationResult.OwnerClaimed(readString(in), readString(in));
			case RESULT_LEASE_AFTER:
				return new OperationResult.LeaseAfter(in.readBoolean() ? readLease(in) : null);
			case RESULT_REFUSED:
				return new OperationResult.Refused(readString(in));
			default:
				throw new DecisionCodecException("Unknown result type " + type);
		}
	}

	private static void writeDecision(DataOutputStream out, Decision decision) throws IOException {
		writeString(out, decision.transactionId());
		writeString(out, decision.owner());
		out.writeLong(decision.decidedAtMs());
		writeCount(out, decision.participants().size());
		for (ParticipantRecord participant : decision.participants()) {
			writeString(out, participant.cluster());
			writeString(out, participant.transactionalId());
			out.writeLong(participant.producerId());
			out.writeShort(participant.producerEpoch());
			writeString(out, participant.markerTopic());
			out.writeInt(participant.markerPartition());
			out.writeLong(participant.markerOffset());
		}
	}

	private static Decision readDecision(DataInputStream in) throws IOException {
		String transactionId = readString(in);
		String owner = readString(in);
		long decidedAtMs = in.readLong();
		int count = readCount(in);
		List<ParticipantRecord> participants = new ArrayList<>(Math.min(count, 64));
		for (int i = 0; i < count; i++) {
			participants.add(new ParticipantRecord(readString(in), readString(in), in.readLong(), in.readShort(),
					readString(in), in.readInt(), in.readLong()));
		}
		return new Decision(transactionId, owner, decidedAtMs, participants);
	}

	private static void writeLease(DataOutputStream out, InstanceLease lease) throws IOException {
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

	private static InstanceLease readLease(DataInputStream in) throws IOException {
		String idPrefix = readString(in);
		String instanceId = readString(in);
		String incarnation = readString(in);
		long expiresAtMs = in.readLong();
		String claimedBy = in.readBoolean() ? readString(in) : null;
		boolean takenOver = (claimedBy != null) && in.readBoolean();
		return new InstanceLease(idPrefix + "." + instanceId, idPrefix, instanceId, incarnation, expiresAtMs, claimedBy,
				takenOver);
	}

	private static void writeState(DataOutputStream out, DecisionState state) throws IOException {
		out.writeByte(switch (state) {
			case UNKNOWN -> 0;
			case DECIDED -> 1;
			case COMPLETED -> 2;
			case ABORTED -> 3;
		});
	}

	private static DecisionState readState(DataInputStream in) throws IOException {
		byte code = in.readByte();
		return switch (code) {
			case 0 -> DecisionState.UNKNOWN;
			case 1 -> DecisionState.DECIDED;
			case 2 -> DecisionState.COMPLETED;
			case 3 -> DecisionState.ABORTED;
			default -> throw new DecisionCodecException("Unknown state code " + code);
		};
	}

	private static void writeString(DataOutputStream out, String value) throws IOException {
		byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
		if (bytes.length > MAX_STRING_BYTES) {
			throw new DecisionCodecException("String of " + bytes.length + " bytes exceeds the limit of "
					+ MAX_STRING_BYTES + ": " + value.substring(0, 64) + "...");
		}
		writeCount(out, bytes.length);
		out.write(bytes);
	}

	private static String readString(DataInputStream in) throws IOException {
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
	private static void writeCount(DataOutputStream out, int value) throws IOException {
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

	private static int readCount(DataInputStream in) throws IOException {
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

	private static void readHeader(DataInputStream in, byte expectedKind) throws IOException {
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

	private static byte[] encode(byte kind, Writer writer) {
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

	private static <T> T decode(InputStream input, byte kind, Reader<T> reader) {
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
	private interface Writer {

		void write(DataOutputStream out) throws IOException;

	}

	@FunctionalInterface
	private interface Reader<T> {

		T read(DataInputStream in) throws IOException;

	}

}
