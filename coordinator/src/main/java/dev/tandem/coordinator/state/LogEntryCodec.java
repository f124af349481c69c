package dev.tandem.coordinator.state;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Stored format of one Raft log entry: a {@link Command command}'s bytes as the client sent
 * them, with the {@link Grant} of the caller and the time of the leader that accepted it.
 * Entries written by earlier versions (a plain command, or a command with its grant only) still
 * decode.
 * <p>
 * Written in the grammar of {@link DecisionCodec}; the command inside is a
 * {@link MessageCodec} message.
 * <p>
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class LogEntryCodec {

	private LogEntryCodec() {
	}

	/**
	 * Encodes a log entry: a command with the grant of the caller that sent it and the leader's
	 * time when it accepted the command. The leader's time, not the sender's, is the command's
	 * time when it is applied (lease expiry, completion and abort times, retention), so a client
	 * with a skewed clock cannot expire other instances' leases or keep its own alive, and every
	 * replica applies the same time.
	 * @param grant the caller's grant
	 * @param leaderTimeMs the accepting leader's clock, epoch milliseconds
	 * @param command the bytes of {@link MessageCodec#encodeCommand(Command)}
	 * @return the bytes
	 */
	public static byte[] encodeLogEntry(Grant grant, long leaderTimeMs, byte[] command) {
		return DecisionCodec.encode(DecisionCodec.KIND_STAMPED_COMMAND, (out) -> {
			out.writeLong(leaderTimeMs);
			writeGrant(out, grant);
			DecisionCodec.writeCount(out, command.length);
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
		if (bytes.length < 2
				|| (bytes[1] != DecisionCodec.KIND_GRANTED_COMMAND && bytes[1] != DecisionCodec.KIND_STAMPED_COMMAND)) {
			return new LogEntry(Grant.ALL, MessageCodec.decodeCommand(bytes));
		}
		boolean stamped = bytes[1] == DecisionCodec.KIND_STAMPED_COMMAND;
		return DecisionCodec.decode(new ByteArrayInputStream(bytes), bytes[1], (in) -> {
			long leaderTimeMs = stamped ? in.readLong() : 0;
			Grant grant = readGrant(in);
			int length = DecisionCodec.readCount(in);
			if (length > bytes.length) {
				throw new DecisionCodecException("Command length " + length + " exceeds the entry's " + bytes.length);
			}
			byte[] command = new byte[length];
			in.readFully(command);
			Command sent = MessageCodec.decodeCommand(command);
			return new LogEntry(grant, stamped ? new Command(leaderTimeMs, sent.operations()) : sent);
		});
	}

	private static void writeGrant(DataOutputStream out, Grant grant) throws IOException {
		DecisionCodec.writeString(out, grant.identity());
		out.writeBoolean(grant.admin());
		DecisionCodec.writeCount(out, grant.ownerPrefixes().size());
		for (String prefix : grant.ownerPrefixes()) {
			DecisionCodec.writeString(out, prefix);
		}
	}

	private static Grant readGrant(DataInputStream in) throws IOException {
		String identity = DecisionCodec.readString(in);
		boolean admin = in.readBoolean();
		int count = DecisionCodec.readCount(in);
		List<String> prefixes = new ArrayList<>(Math.min(count, 64));
		for (int i = 0; i < count; i++) {
			prefixes.add(DecisionCodec.readString(in));
		}
		return new Grant(identity, admin, prefixes);
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

}
