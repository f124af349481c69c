package dev.tandem.coordinator.state;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.InstanceLease;
import org.jspecify.annotations.Nullable;

/**
 * Wire messages between a coordinator client and the coordinator's peers: {@link Command
 * commands} and their {@link OperationResult results}, {@link Query queries} and their
 * {@link QueryReply replies}, and the {@link Envelope envelope} in which a peer wraps a request
 * with the caller's authenticated identity.
 * <p>
 * Written in the grammar of {@link DecisionCodec} (version and kind bytes first); what is
 * stored on disk has its own classes ({@link LogEntryCodec}, {@link SnapshotCodec}). A log
 * entry embeds a command's bytes as the client sent them.
 * <p>
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class MessageCodec {

	private static final byte OP_DECIDE = 1;

	private static final byte OP_COMPLETE = 2;

	private static final byte OP_ABORT = 3;

	private static final byte OP_PURGE = 4;

	private static final byte OP_RENEW_LEASE = 5;

	private static final byte OP_CLAIM_LEASE = 6;

	private static final byte OP_RELEASE_LEASE = 7;

	private static final byte OP_DECIDE_AS_RUN = 8;

	/** A renewal of a lease the run holds already ({@code RenewLease.held}); older peers do not know it. */
	private static final byte OP_RENEW_HELD_LEASE = 9;

	/**
	 * A release that keeps the lease, marked released, with its run history
	 * ({@code ReleaseLease.keepRuns}, issue 26 item 1); older peers do not know it.
	 */
	private static final byte OP_RELEASE_LEASE_KEEPING_RUNS = 10;

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

	/**
	 * The leases with their run histories ({@code LeasesQuery.withRuns}), and its reply; older
	 * peers do not know it.
	 */
	private static final byte QUERY_LEASES_WITH_RUNS = 6;

	private MessageCodec() {
	}

	// Commands and results

	/**
	 * Encodes a command (the payload of one Raft log entry).
	 * @param command the command
	 * @return the bytes
	 * @throws DecisionCodecException if a string exceeds {@link DecisionCodec#MAX_STRING_BYTES}
	 */
	public static byte[] encodeCommand(Command command) {
		return DecisionCodec.encode(DecisionCodec.KIND_COMMAND, (out) -> {
			out.writeLong(command.atMs());
			DecisionCodec.writeCount(out, command.operations().size());
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
		return DecisionCodec.decode(input, DecisionCodec.KIND_COMMAND, (in) -> {
			long atMs = in.readLong();
			int count = DecisionCodec.readCount(in);
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
		return DecisionCodec.encode(DecisionCodec.KIND_RESULTS, (out) -> {
			DecisionCodec.writeCount(out, results.size());
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
		return DecisionCodec.decode(input, DecisionCodec.KIND_RESULTS, (in) -> {
			int count = DecisionCodec.readCount(in);
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

	// Queries and replies

	/**
	 * Encodes a query.
	 * @param query the query
	 * @return the bytes
	 */
	public static byte[] encodeQuery(Query query) {
		return DecisionCodec.encode(DecisionCodec.KIND_QUERY, (out) -> {
			if (query instanceof Query.StateQuery state) {
				out.writeByte(QUERY_STATE);
				DecisionCodec.writeString(out, state.transactionId());
			}
			else if (query instanceof Query.InDoubtQuery inDoubt) {
				out.writeByte(QUERY_IN_DOUBT);
				DecisionCodec.writeString(out, inDoubt.owner());
			}
			else if (query instanceof Query.CountsQuery) {
				out.writeByte(QUERY_COUNTS);
			}
			else if (query instanceof Query.LeasesQuery leases) {
				out.writeByte(leases.withRuns() ? QUERY_LEASES_WITH_RUNS : QUERY_LEASES);
				DecisionCodec.writeString(out, leases.idPrefix());
			}
			else if (query instanceof Query.AppInDoubtQuery inDoubt) {
				out.writeByte(QUERY_APP_IN_DOUBT);
				DecisionCodec.writeString(out, inDoubt.idPrefix());
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
		return DecisionCodec.decode(input, DecisionCodec.KIND_QUERY, (in) -> {
			byte type = in.readByte();
			return switch (type) {
				case QUERY_STATE -> new Query.StateQuery(DecisionCodec.readString(in));
				case QUERY_IN_DOUBT -> new Query.InDoubtQuery(DecisionCodec.readString(in));
				case QUERY_COUNTS -> new Query.CountsQuery();
				case QUERY_LEASES -> new Query.LeasesQuery(DecisionCodec.readString(in));
				case QUERY_LEASES_WITH_RUNS -> new Query.LeasesQuery(DecisionCodec.readString(in), true);
				case QUERY_APP_IN_DOUBT -> new Query.AppInDoubtQuery(DecisionCodec.readString(in));
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
		return DecisionCodec.encode(DecisionCodec.KIND_REPLY, (out) -> {
			if (reply instanceof QueryReply.StateReply state) {
				out.writeByte(QUERY_STATE);
				DecisionCodec.writeState(out, state.state());
			}
			else if (reply instanceof QueryReply.InDoubtReply inDoubt) {
				out.writeByte(QUERY_IN_DOUBT);
				DecisionCodec.writeCount(out, inDoubt.decisions().size());
				for (Decision decision : inDoubt.decisions()) {
					DecisionCodec.writeDecision(out, decision);
				}
			}
			else if (reply instanceof QueryReply.CountsReply counts) {
				out.writeByte(QUERY_COUNTS);
				DecisionCodec.writeCount(out, counts.counts().decided());
				DecisionCodec.writeCount(out, counts.counts().completed());
				DecisionCodec.writeCount(out, counts.counts().aborted());
			}
			else if (reply instanceof QueryReply.LeasesReply leases) {
				out.writeByte(leases.withRuns() ? QUERY_LEASES_WITH_RUNS : QUERY_LEASES);
				DecisionCodec.writeCount(out, leases.leases().size());
				for (InstanceLease lease : leases.leases()) {
					DecisionCodec.writeLease(out, lease);
					if (leases.withRuns()) {
						DecisionCodec.writeRuns(out, lease);
					}
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
		return DecisionCodec.decode(input, DecisionCodec.KIND_REPLY, (in) -> {
			byte type = in.readByte();
			switch (type) {
				case QUERY_STATE:
					return new QueryReply.StateReply(DecisionCodec.readState(in));
				case QUERY_IN_DOUBT:
					int count = DecisionCodec.readCount(in);
					List<Decision> decisions = new ArrayList<>(Math.min(count, 1024));
					for (int i = 0; i < count; i++) {
						decisions.add(DecisionCodec.readDecision(in));
					}
					return new QueryReply.InDoubtReply(decisions);
				case QUERY_COUNTS:
					return new QueryReply.CountsReply(
							new DecisionTable.Counts(DecisionCodec.readCount(in), DecisionCodec.readCount(in),
									DecisionCodec.readCount(in)));
				case QUERY_LEASES, QUERY_LEASES_WITH_RUNS:
					boolean withRuns = type == QUERY_LEASES_WITH_RUNS;
					int leaseCount = DecisionCodec.readCount(in);
					List<InstanceLease> leases = new ArrayList<>(Math.min(leaseCount, 1024));
					for (int i = 0; i < leaseCount; i++) {
						InstanceLease lease = DecisionCodec.readLease(in);
						leases.add(withRuns ? DecisionCodec.readRuns(in, lease) : lease);
					}
					return new QueryReply.LeasesReply(leases, withRuns);
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

	// The identity envelope

	/**
	 * Wraps a client request's payload with the identity the receiving peer authenticated
	 * (done on the peer, never by the client: whatever a client sends is wrapped again).
	 * @param identity the authenticated identity, or {@code null} for a plain-text caller
	 * @param payload the request's bytes as the client sent them
	 * @return the bytes
	 */
	public static byte[] encodeEnvelope(@Nullable String identity, byte[] payload) {
		return DecisionCodec.encode(DecisionCodec.KIND_ENVELOPE, (out) -> {
			out.writeBoolean(identity != null);
			if (identity != null) {
				DecisionCodec.writeString(out, identity);
			}
			DecisionCodec.writeCount(out, payload.length);
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
		return version == DecisionCodec.VERSION && kind == DecisionCodec.KIND_ENVELOPE;
	}

	/**
	 * Decodes what {@link #encodeEnvelope} wrote.
	 * @param input the stream (not closed)
	 * @return the identity and payload
	 * @throws DecisionCodecException if the bytes are not an envelope
	 */
	public static Envelope decodeEnvelope(InputStream input) {
		return DecisionCodec.decode(input, DecisionCodec.KIND_ENVELOPE, (in) -> {
			String identity = in.readBoolean() ? DecisionCodec.readString(in) : null;
			byte[] payload = new byte[DecisionCodec.readCount(in)];
			in.readFully(payload);
			return new Envelope(identity, payload);
		});
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

	// Pieces

	private static void writeOperation(DataOutputStream out, Operation operation) throws IOException {
		if (operation instanceof Operation.Decide decide && decide.incarnation() == null) {
			out.writeByte(OP_DECIDE);
			DecisionCodec.writeDecision(out, decide.decision());
		}
		else if (operation instanceof Operation.Decide decide) {
			out.writeByte(OP_DECIDE_AS_RUN);
			DecisionCodec.writeDecision(out, decide.decision());
			DecisionCodec.writeString(out, decide.incarnation());
		}
		else if (operation instanceof Operation.Complete complete) {
			out.writeByte(OP_COMPLETE);
			DecisionCodec.writeString(out, complete.transactionId());
		}
		else if (operation instanceof Operation.Abort abort) {
			out.writeByte(OP_ABORT);
			DecisionCodec.writeString(out, abort.transactionId());
			DecisionCodec.writeString(out, abort.owner());
		}
		else if (operation instanceof Operation.Purge purge) {
			out.writeByte(OP_PURGE);
			out.writeLong(purge.retentionMs());
		}
		else if (operation instanceof Operation.RenewLease renew) {
			out.writeByte(renew.held() ? OP_RENEW_HELD_LEASE : OP_RENEW_LEASE);
			DecisionCodec.writeString(out, renew.idPrefix());
			DecisionCodec.writeString(out, renew.instanceId());
			DecisionCodec.writeString(out, renew.incarnation());
			out.writeLong(renew.durationMs());
		}
		else if (operation instanceof Operation.ClaimLease claim) {
			out.writeByte(OP_CLAIM_LEASE);
			DecisionCodec.writeString(out, claim.owner());
			DecisionCodec.writeString(out, claim.claimant());
		}
		else if (operation instanceof Operation.ReleaseLease release) {
			out.writeByte(release.keepRuns() ? OP_RELEASE_LEASE_KEEPING_RUNS : OP_RELEASE_LEASE);
			DecisionCodec.writeString(out, release.owner());
			DecisionCodec.writeString(out, release.by());
		}
		else {
			throw new IllegalArgumentException("Unknown operation " + operation);
		}
	}

	private static Operation readOperation(DataInputStream in) throws IOException {
		byte type = in.readByte();
		return switch (type) {
			case OP_DECIDE -> new Operation.Decide(DecisionCodec.readDecision(in));
			case OP_DECIDE_AS_RUN -> new Operation.Decide(DecisionCodec.readDecision(in), DecisionCodec.readString(in));
			case OP_COMPLETE -> new Operation.Complete(DecisionCodec.readString(in));
			case OP_ABORT -> new Operation.Abort(DecisionCodec.readString(in), DecisionCodec.readString(in));
			case OP_PURGE -> new Operation.Purge(in.readLong());
			case OP_RENEW_LEASE -> new Operation.RenewLease(DecisionCodec.readString(in), DecisionCodec.readString(in),
					DecisionCodec.readString(in), in.readLong());
			case OP_RENEW_HELD_LEASE -> new Operation.RenewLease(DecisionCodec.readString(in),
					DecisionCodec.readString(in), DecisionCodec.readString(in), in.readLong(), true);
			case OP_CLAIM_LEASE -> new Operation.ClaimLease(DecisionCodec.readString(in), DecisionCodec.readString(in));
			case OP_RELEASE_LEASE ->
				new Operation.ReleaseLease(DecisionCodec.readString(in), DecisionCodec.readString(in));
			case OP_RELEASE_LEASE_KEEPING_RUNS ->
				new Operation.ReleaseLease(DecisionCodec.readString(in), DecisionCodec.readString(in), true);
			default -> throw new DecisionCodecException("Unknown operation type " + type);
		};
	}

	private static void writeResult(DataOutputStream out, OperationResult result) throws IOException {
		if (result instanceof OperationResult.Decided decided) {
			out.writeByte(RESULT_DECIDED);
			out.writeBoolean(decided.created());
			DecisionCodec.writeDecision(out, decided.decision());
		}
		else if (result instanceof OperationResult.AbortConflict conflict) {
			out.writeByte(RESULT_ABORT_CONFLICT);
			DecisionCodec.writeString(out, conflict.transactionId());
		}
		else if (result instanceof OperationResult.StateAfter stateAfter) {
			out.writeByte(RESULT_STATE_AFTER);
			DecisionCodec.writeState(out, stateAfter.state());
		}
		else if (result instanceof OperationResult.Purged purged) {
			out.writeByte(RESULT_PURGED);
			DecisionCodec.writeCount(out, purged.count());
		}
		else if (result instanceof OperationResult.OwnerClaimed claimed) {
			out.writeByte(RESULT_OWNER_CLAIMED);
			DecisionCodec.writeString(out, claimed.transactionId());
			DecisionCodec.writeString(out, claimed.claimedBy());
		}
		else if (result instanceof OperationResult.LeaseAfter after) {
			out.writeByte(RESULT_LEASE_AFTER);
			out.writeBoolean(after.lease() != null);
			if (after.lease() != null) {
				DecisionCodec.writeLease(out, after.lease());
			}
		}
		else if (result instanceof OperationResult.Refused refused) {
			out.writeByte(RESULT_REFUSED);
			String reason = refused.reason();
			DecisionCodec.writeString(out,
					(reason.length() > MAX_REASON_CHARS) ? reason.substring(0, MAX_REASON_CHARS) : reason);
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
				return new OperationResult.Decided(DecisionCodec.readDecision(in), created);
			case RESULT_ABORT_CONFLICT:
				return new OperationResult.AbortConflict(DecisionCodec.readString(in));
			case RESULT_STATE_AFTER:
				return new OperationResult.StateAfter(DecisionCodec.readState(in));
			case RESULT_PURGED:
				return new OperationResult.Purged(DecisionCodec.readCount(in));
			case RESULT_OWNER_CLAIMED:
				return new OperationResult.OwnerClaimed(DecisionCodec.readString(in), DecisionCodec.readString(in));
			case RESULT_LEASE_AFTER:
				return new OperationResult.LeaseAfter(in.readBoolean() ? DecisionCodec.readLease(in) : null);
			case RESULT_REFUSED:
				return new OperationResult.Refused(DecisionCodec.readString(in));
			default:
				throw new DecisionCodecException("Unknown result type " + type);
		}
	}

}
