package dev.tandem.coordinator.state;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.Decision.ParticipantRecord;
import org.jspecify.annotations.Nullable;

/**
 * The bounds every {@link Command} must keep before it may reach the log: one maximum length
 * per field (UTF-8 bytes; {@link DecisionCodec} refuses malformed UTF-8 while decoding, and a
 * string that is not valid Unicode or holds a control character is refused here), no empty
 * strings, a bounded size per decision, bounded
 * counts, and numbers in their range. Whatever passes can always be applied, answered and written
 * to a snapshot: every bound lies well inside {@link DecisionCodec#MAX_STRING_BYTES}.
 * <p>
 * The coordinator checks a command here before it is logged (so a refusal names the field and
 * its limit to the sender) and again when it applies a logged entry (so an entry logged by an
 * older version that did not check is refused the same way on every replica, never applied
 * half). The etcd and Ratis state machines follow the same rule: validate before the log, never
 * fail in apply.
 * <p>
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class CommandLimits {

	/** Largest transaction id, in UTF-8 bytes ({@code <owner>-<uuid>}). */
	public static final int MAX_TRANSACTION_ID_BYTES = 600;

	/** Largest owner id ({@code <id-prefix>.<instance-id>}), in UTF-8 bytes; also claimants. */
	public static final int MAX_OWNER_BYTES = 512;

	/** Largest id prefix ({@code tandem.transaction.id-prefix}), in UTF-8 bytes. */
	public static final int MAX_ID_PREFIX_BYTES = 255;

	/** Largest instance id ({@code tandem.transaction.instance-id}), in UTF-8 bytes. */
	public static final int MAX_INSTANCE_ID_BYTES = 255;

	/** Largest incarnation (the run of an instance), in UTF-8 bytes. */
	public static final int MAX_INCARNATION_BYTES = 128;

	/** Largest cluster name, in UTF-8 bytes. */
	public static final int MAX_CLUSTER_BYTES = 255;

	/** Largest participant {@code transactional.id}, in UTF-8 bytes. */
	public static final int MAX_TRANSACTIONAL_ID_BYTES = 1024;

	/** Largest marker topic name, in UTF-8 bytes (Kafka's own limit for topic names). */
	public static final int MAX_TOPIC_BYTES = 249;

	/** Most participants (clusters) of one decision. */
	public static final int MAX_PARTICIPANTS = 256;

	/**
	 * Largest decision, in encoded bytes (its strings plus 30 bytes a participant): what one
	 * decided record may cost each replica, and what a reply may carry for it.
	 */
	public static final int MAX_DECISION_BYTES = 16 * 1024;

	/** Most operations of one command (one log entry). */
	public static final int MAX_OPERATIONS = 4096;

	/** Longest lease a renewal may ask for, in milliseconds (one day). */
	public static final long MAX_LEASE_MS = 24L * 60 * 60 * 1000;

	/** Longest purge retention, in milliseconds (ten years). */
	public static final long MAX_RETENTION_MS = 3650L * 24 * 60 * 60 * 1000;

	private CommandLimits() {
	}

	/**
	 * Returns why a command breaks a bound, or {@code null} when it keeps every bound.
	 * @param command the command
	 * @return the refusal, naming the operation, the field and its limit; or {@code null}
	 */
	public static @Nullable String refusal(Command command) {
		if (command.operations().size() > MAX_OPERATIONS) {
			return "a command holds at most " + MAX_OPERATIONS + " operations, not " + command.operations().size();
		}
		for (Operation operation : command.operations()) {
			String refusal = refusal(operation);
			if (refusal != null) {
				return operation.getClass().getSimpleName() + ": " + refusal;
			}
		}
		return null;
	}

	/**
	 * Checks a command.
	 * @param command the command
	 * @throws InvalidCommandException if it breaks a bound
	 */
	public static void check(Command command) {
		String refusal = refusal(command);
		if (refusal != null) {
			throw new InvalidCommandException(refusal);
		}
	}

	private static @Nullable String refusal(Operation operation) {
		if (operation instanceof Operation.Decide decide) {
			String refusal = decisionRefusal(decide.decision());
			return (refusal != null) ? refusal
					: (decide.incarnation() != null) ? text("incarnation", decide.incarnation(), MAX_INCARNATION_BYTES) : null;
		}
		if (operation instanceof Operation.Complete complete) {
			return text("transactionId", complete.transactionId(), MAX_TRANSACTION_ID_BYTES);
		}
		if (operation instanceof Operation.Abort abort) {
			return first(text("transactionId", abort.transactionId(), MAX_TRANSACTION_ID_BYTES),
					text("owner", abort.owner(), MAX_OWNER_BYTES));
		}
		if (operation instanceof Operation.Purge purge) {
			return (purge.retentionMs() > MAX_RETENTION_MS)
					? "retentionMs " + purge.retentionMs() + " exceeds the limit of " + MAX_RETENTION_MS : null;
		}
		if (operation instanceof Operation.RenewLease renew) {
			return first(text("idPrefix", renew.idPrefix(), MAX_ID_PREFIX_BYTES),
					text("instanceId", renew.instanceId(), MAX_INSTANCE_ID_BYTES),
					text("incarnation", renew.incarnation(), MAX_INCARNATION_BYTES),
					(renew.durationMs() > MAX_LEASE_MS)
							? "durationMs " + renew.durationMs() + " exceeds the limit of " + MAX_LEASE_MS : null);
		}
		if (operation instanceof Operation.ClaimLease claim) {
			return first(text("owner", claim.owner(), MAX_OWNER_BYTES), text("claimant", claim.claimant(), MAX_OWNER_BYTES));
		}
		if (operation instanceof Operation.ReleaseLease release) {
			return first(text("owner", release.owner(), MAX_OWNER_BYTES), text("by", release.by(), MAX_OWNER_BYTES));
		}
		return "unknown operation";
	}

	private static @Nullable String decisionRefusal(Decision decision) {
		String refusal = first(text("transactionId", decision.transactionId(), MAX_TRANSACTION_ID_BYTES),
				text("owner", decision.owner(), MAX_OWNER_BYTES));
		if (refusal != null) {
			return refusal;
		}
		if (decision.participants().size() > MAX_PARTICIPANTS) {
			return "a decision has at most " + MAX_PARTICIPANTS + " participants, not " + decision.participants().size();
		}
		long bytes = utf8Length(decision.transactionId()) + utf8Length(decision.owner()) + 8;
		for (ParticipantRecord participant : decision.participants()) {
			bytes += utf8Length(participant.cluster()) + utf8Length(participant.transactionalId())
					+ utf8Length(participant.markerTopic()) + 30;
			refusal = first(text("participant cluster", participant.cluster(), MAX_CLUSTER_BYTES),
					text("participant transactionalId", participant.transactionalId(), MAX_TRANSACTIONAL_ID_BYTES),
					text("participant markerTopic", participant.markerTopic(), MAX_TOPIC_BYTES),
					range("participant producerId", participant.producerId(), 0, Long.MAX_VALUE),
					range("participant producerEpoch", participant.producerEpoch(), 0, Short.MAX_VALUE),
					range("participant markerPartition", participant.markerPartition(), 0, Integer.MAX_VALUE),
					range("participant markerOffset", participant.markerOffset(), 0, Long.MAX_VALUE));
			if (refusal != null) {
				return refusal;
			}
		}
		if (decision.databases().size() > MAX_PARTICIPANTS) {
			return "a decision has at most " + MAX_PARTICIPANTS + " databases, not " + decision.databases().size();
		}
		for (Decision.DatabaseRecord database : decision.databases()) {
			bytes += utf8Length(database.database()) + utf8Length(database.preparedId()) + 4;
			refusal = first(text("database name", database.database(), MAX_CLUSTER_BYTES),
					text("database preparedId", database.preparedId(), MAX_CLUSTER_BYTES));
			if (refusal != null) {
				return refusal;
			}
		}
		if (decision.decidedAtMs() < 0) {
			return "decidedAtMs " + decision.decidedAtMs() + " is negative";
		}
		return (bytes > MAX_DECISION_BYTES)
				? "a decision of " + bytes + " bytes exceeds the limit of " + MAX_DECISION_BYTES + " bytes" : null;
	}

	private static @Nullable String text(String field, String value, int maxBytes) {
		if (value.isEmpty()) {
			return field + " is empty";
		}
		if (value.length() > maxBytes) {
			return field + " of at least " + value.length() + " bytes exceeds the limit of " + maxBytes + " bytes";
		}
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (Character.isISOControl(c)) {
				// ids and names end up in logs and messages: no line breaks, escapes or NULs in them
				return field + " holds a control character (U+" + String.format("%04X", (int) c) + ") at index " + i;
			}
		}
		int bytes = utf8Length(value);
		if (bytes < 0) {
			// UTF-8 cannot encode it: it would be replaced, and a replica restored from a snapshot would differ
			return field + " is not valid Unicode (an unpaired surrogate)";
		}
		return (bytes > maxBytes) ? field + " of " + bytes + " bytes exceeds the limit of " + maxBytes + " bytes" : null;
	}

	/**
	 * Returns the length of a string in UTF-8, or -1 when it holds an unpaired surrogate (which
	 * UTF-8 cannot encode).
	 * @param value the string
	 * @return the number of bytes, or -1
	 */
	public static int utf8Length(String value) {
		int bytes = 0;
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
				bytes += 4;
				i++;
			}
			else if (Character.isSurrogate(c)) {
				return -1;
			}
			else {
				bytes += (c < 0x80) ? 1 : (c < 0x800) ? 2 : 3;
			}
		}
		return bytes;
	}

	private static @Nullable String range(String field, long value, long min, long max) {
		return (value < min || value > max) ? field + " " + value + " is outside [" + min + ", " + max + "]" : null;
	}

	private static @Nullable String first(@Nullable String... refusals) {
		for (String refusal : refusals) {
			if (refusal != null) {
				return refusal;
			}
		}
		return null;
	}

}
