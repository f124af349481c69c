package dev.tandem.coordinator.state;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import org.junit.jupiter.api.Test;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link MessageCodec}, {@link LogEntryCodec} and {@link SnapshotCodec}: round trips, strict decoding, and
 * the byte layouts of earlier versions that must still read.
 */
class DecisionCodecTests {

	@Test
	void commandWithEveryOperationRoundTrips() {
		Command command = new Command(1_700_000_000_123L,
				List.of(new Operation.Decide(decision("t-1", "app.i-1", 42)), new Operation.Complete("t-0"),
						new Operation.Abort("t-2", "app.i-2"), new Operation.Purge(604_800_000L)));
		assertThat(MessageCodec.decodeCommand(MessageCodec.encodeCommand(command))).isEqualTo(command);
	}

	@Test
	void largeBatchAndNonAsciiStringsRoundTrip() {
		List<Operation> operations = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			operations.add(new Operation.Decide(decision("txn-é-日本-" + i, "owner-ß", i)));
		}
		Command command = new Command(7, operations);
		byte[] bytes = MessageCodec.encodeCommand(command);
		assertThat(MessageCodec.decodeCommand(bytes)).isEqualTo(command);
		assertThat(bytes.length / 300).as("bytes per decision").isLessThan(150);
	}

	@Test
	void aDecisionWithDatabaseParticipantsRoundTripsAndOneWithoutKeepsTheFirstLayout() {
		Decision kafkaOnly = decision("t-1", "app.i-1", 42);
		Decision withDatabase = new Decision("t-2", "app.i-1", 43, kafkaOnly.participants(),
				List.of(new Decision.DatabaseRecord("orders", "1413566020:00ff:ab01")));
		Decision databaseOnly = new Decision("t-3", "app.i-1", 44, List.of(),
				List.of(new Decision.DatabaseRecord("orders", "1413566020:01:02"),
						new Decision.DatabaseRecord("ledger", "1413566020:03:04")));
		Command command = new Command(7, List.of(new Operation.Decide(kafkaOnly), new Operation.Decide(withDatabase),
				new Operation.Decide(databaseOnly)));
		assertThat(MessageCodec.decodeCommand(MessageCodec.encodeCommand(command))).isEqualTo(command);
		// Without databases the bytes are those of the first layout, which every earlier reader reads:
		// the participants' count (2) follows the decision time directly.
		byte[] bytes = MessageCodec.encodeCommand(new Command(7, List.of(new Operation.Decide(kafkaOnly))));
		byte[] withDatabaseBytes = MessageCodec.encodeCommand(new Command(7, List.of(new Operation.Decide(withDatabase))));
		int count = indexOf(bytes, new byte[] { 0, 0, 0, 0, 0, 0, 0, 42 }) + 8;
		assertThat(bytes[count]).isEqualTo((byte) 2);
		int sentinel = indexOf(withDatabaseBytes, new byte[] { 0, 0, 0, 0, 0, 0, 0, 43 }) + 8;
		assertThat(withDatabaseBytes[sentinel]).as("count of zero: a decision an earlier reader refuses").isZero();
		assertThat(withDatabaseBytes[sentinel + 1]).isEqualTo(DecisionCodec.DATABASES_LAYOUT);
	}

	@Test
	void aDecisionWithTransactionVersionsRoundTripsAndOneWithoutKeepsItsEarlierLayout_issue26Item2() {
		Decision unversioned = decision("t-1", "app.i-1", 42);
		List<Decision.ParticipantRecord> versions = new ArrayList<>();
		byte version = Decision.ParticipantRecord.TRANSACTION_V2;
		for (Decision.ParticipantRecord p : unversioned.participants()) {
			versions.add(new Decision.ParticipantRecord(p.cluster(), p.transactionalId(), p.producerId(), p.producerEpoch(),
					p.markerTopic(), p.markerPartition(), p.markerOffset(), version));
			version = Decision.ParticipantRecord.TRANSACTION_V1;
		}
		Decision versioned = new Decision("t-2", "app.i-1", 43, versions);
		Decision versionedWithDatabase = new Decision("t-3", "app.i-1", 44, versions,
				List.of(new Decision.DatabaseRecord("orders", "1413566020:00ff:ab01")));
		Command command = new Command(7, List.of(new Operation.Decide(unversioned), new Operation.Decide(versioned),
				new Operation.Decide(versionedWithDatabase)));
		Command decoded = MessageCodec.decodeCommand(MessageCodec.encodeCommand(command));
		assertThat(decoded).isEqualTo(command);
		assertThat(((Operation.Decide) decoded.operations().get(1)).decision().participants())
			.extracting(Decision.ParticipantRecord::transactionVersion)
			.containsExactly(Decision.ParticipantRecord.TRANSACTION_V2, Decision.ParticipantRecord.TRANSACTION_V1);
		assertThat(((Operation.Decide) decoded.operations().get(0)).decision().participants())
			.noneMatch(Decision.ParticipantRecord::transactionVersionKnown);
		byte[] versionedBytes = MessageCodec.encodeCommand(new Command(7, List.of(new Operation.Decide(versioned))));
		int sentinel = indexOf(versionedBytes, new byte[] { 0, 0, 0, 0, 0, 0, 0, 43 }) + 8;
		assertThat(versionedBytes[sentinel]).as("count of zero: a decision an earlier reader refuses").isZero();
		assertThat(versionedBytes[sentinel + 1]).isEqualTo(DecisionCodec.VERSIONED_LAYOUT);
		byte[] unversionedBytes = MessageCodec.encodeCommand(new Command(7, List.of(new Operation.Decide(unversioned))));
		assertThat(unversionedBytes[indexOf(unversionedBytes, new byte[] { 0, 0, 0, 0, 0, 0, 0, 42 }) + 8])
			.as("the first layout, byte for byte").isEqualTo((byte) 2);
	}

	private static int indexOf(byte[] bytes, byte[] part) {
		for (int i = 0; i + part.length <= bytes.length; i++) {
			if (Arrays.equals(Arrays.copyOfRange(bytes, i, i + part.length), part)) {
				return i;
			}
		}
		throw new AssertionError("not found");
	}

	@Test
	void resultsRoundTrip() {
		List<OperationResult> results = List.of(new OperationResult.Decided(decision("t", "o", 1), true),
				new OperationResult.Decided(decision("u", "o", 2), false), new OperationResult.AbortConflict("v"),
				new OperationResult.StateAfter(DecisionState.UNKNOWN), new OperationResult.StateAfter(DecisionState.ABORTED),
				new OperationResult.Purged(1_000_000));
		assertThat(MessageCodec.decodeResults(MessageCodec.encodeResults(results))).isEqualTo(results);
	}

	@Test
	void queriesAndRepliesRoundTrip() {
		for (Query query : List.of(new Query.StateQuery("t"), new Query.InDoubtQuery("owner"), new Query.CountsQuery())) {
			assertThat(MessageCodec.decodeQuery(MessageCodec.encodeQuery(query))).isEqualTo(query);
		}
		List<Decision> decisions = List.of(decision("a", "o", 1), decision("b", "o", 2));
		for (QueryReply reply : List.of(new QueryReply.StateReply(DecisionState.COMPLETED),
				new QueryReply.InDoubtReply(decisions), new QueryReply.InDoubtReply(List.of()),
				new QueryReply.CountsReply(new DecisionTable.Counts(3, 200, 70_000)))) {
			assertThat(MessageCodec.decodeReply(MessageCodec.encodeReply(reply))).isEqualTo(reply);
		}
	}

	@Test
	void snapshotOfTheWholeTableRoundTrips() throws IOException {
		DecisionTable table = new DecisionTable();
		for (int i = 0; i < 1000; i++) {
			table.decide(decision("t" + i, "owner-" + (i % 7), 1000 - i));
			if (i % 3 == 0) {
				table.complete("t" + i, 5000 + i);
			}
		}
		table.abort("aborted", "owner-1", 77);
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		SnapshotCodec.writeSnapshot(table.records(), out);
		DecisionTable restored = new DecisionTable();
		restored.replaceWith(SnapshotCodec.readSnapshot(new ByteArrayInputStream(out.toByteArray())));
		assertThat(restored.records()).containsExactlyInAnyOrderElementsOf(table.records());
		assertThat(restored.counts()).isEqualTo(new DecisionTable.Counts(666, 334, 1));
		for (int owner = 0; owner < 7; owner++) {
			assertThat(restored.inDoubt("owner-" + owner)).isEqualTo(table.inDoubt("owner-" + owner));
		}
	}

	@Test
	void emptySnapshotRoundTrips() throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		SnapshotCodec.writeSnapshot(List.of(), out);
		assertThat(SnapshotCodec.readSnapshot(new ByteArrayInputStream(out.toByteArray()))).isEmpty();
	}

	@Test
	void truncatedSnapshotIsRejected() throws IOException {
		DecisionTable table = new DecisionTable();
		table.decide(decision("t", "o", 1));
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		SnapshotCodec.writeSnapshot(table.records(), out);
		byte[] bytes = out.toByteArray();
		for (int length : new int[] { 0, 1, 6, bytes.length - 4, bytes.length - 1 }) {
			assertThatExceptionOfType(DecisionCodecException.class).as("length %d", length)
				.isThrownBy(() -> SnapshotCodec.readSnapshot(new ByteArrayInputStream(Arrays.copyOf(bytes, length))));
		}
	}

	@Test
	void unknownVersionIsRejected() {
		byte[] bytes = MessageCodec.encodeCommand(Command.of(1, new Operation.Complete("t")));
		bytes[0] = 2;
		assertThatExceptionOfType(DecisionCodecException.class).isThrownBy(() -> MessageCodec.decodeCommand(bytes))
			.withMessageContaining("version 2");
	}

	@Test
	void messageOfAnotherKindIsRejected() {
		byte[] query = MessageCodec.encodeQuery(new Query.StateQuery("t"));
		assertThatExceptionOfType(DecisionCodecException.class).isThrownBy(() -> MessageCodec.decodeCommand(query))
			.withMessageContaining("kind");
	}

	@Test
	void truncatedOrPaddedCommandIsRejected() {
		byte[] bytes = MessageCodec.encodeCommand(Command.of(1, new Operation.Decide(decision("t", "o", 1))));
		assertThatExceptionOfType(DecisionCodecException.class)
			.isThrownBy(() -> MessageCodec.decodeCommand(Arrays.copyOf(bytes, bytes.length - 1)))
			.withMessageContaining("Truncated");
		assertThatExceptionOfType(DecisionCodecException.class)
			.isThrownBy(() -> MessageCodec.decodeCommand(Arrays.copyOf(bytes, bytes.length + 1)))
			.withMessageContaining("Trailing");
	}

	@Test
	void invalidContentIsRejectedAsACodecError() {
		// A command of zero operations is invalid: the decoder must not let it through
		byte[] bytes = MessageCodec.encodeCommand(Command.of(1, new Operation.Complete("t")));
		byte[] noOperations = Arrays.copyOf(bytes, 11);
		noOperations[10] = 0;
		assertThatExceptionOfType(DecisionCodecException.class)
			.isThrownBy(() -> MessageCodec.decodeCommand(noOperations))
			.withMessageContaining("at least one operation");
	}

	@Test
	void oversizedStringIsRefusedWhenEncoding() {
		String huge = "x".repeat(DecisionCodec.MAX_STRING_BYTES + 1);
		assertThatExceptionOfType(DecisionCodecException.class)
			.isThrownBy(() -> MessageCodec.encodeCommand(Command.of(1, new Operation.Complete(huge))));
	}

	@Test
	void envelopesAndStampedLogEntriesRoundTripWithTheLeadersTimeInPlaceOfTheSenders() {
		byte[] payload = MessageCodec.encodeCommand(Command.of(7, new Operation.Complete("t-1")));
		byte[] envelope = MessageCodec.encodeEnvelope("orders-app", payload);
		assertThat(MessageCodec.isEnvelope(envelope[0], envelope[1])).isTrue();
		MessageCodec.Envelope decoded = MessageCodec.decodeEnvelope(new ByteArrayInputStream(envelope));
		assertThat(decoded.identity()).isEqualTo("orders-app");
		assertThat(decoded.payload()).isEqualTo(payload);
		assertThat(MessageCodec.decodeEnvelope(new ByteArrayInputStream(MessageCodec.encodeEnvelope(null, payload)))
			.identity()).isNull();

		Grant grant = new Grant("orders-app", false, List.of("orders", "orders-replay"));
		LogEntryCodec.LogEntry entry = LogEntryCodec.decodeLogEntry(LogEntryCodec.encodeLogEntry(grant, 99, payload));
		assertThat(entry.grant()).isEqualTo(grant);
		assertThat(entry.command()).isEqualTo(Command.of(99, new Operation.Complete("t-1")));
		LogEntryCodec.LogEntry open = LogEntryCodec.decodeLogEntry(LogEntryCodec.encodeLogEntry(Grant.ALL, 98, payload));
		assertThat(open.grant().isAll()).isTrue();
		assertThat(open.command().atMs()).isEqualTo(98);
	}

	@Test
	void logEntriesOfEarlierVersionsKeepTheSendersTime() throws IOException {
		byte[] payload = MessageCodec.encodeCommand(Command.of(7, new Operation.Complete("t-1")));
		assertThat(LogEntryCodec.decodeLogEntry(payload).grant()).isEqualTo(Grant.ALL);
		assertThat(LogEntryCodec.decodeLogEntry(payload).command().atMs()).isEqualTo(7);
		// The granted entry of version 0.1.0 before leader time: kind 7, identity, admin, prefixes, command
		ByteArrayOutputStream bytes = new ByteArrayOutputStream();
		DataOutputStream out = new DataOutputStream(bytes);
		out.writeByte(DecisionCodec.VERSION);
		out.writeByte(7);
		out.writeByte(10);
		out.write("orders-app".getBytes(StandardCharsets.UTF_8));
		out.writeBoolean(false);
		out.writeByte(1);
		out.writeByte(6);
		out.write("orders".getBytes(StandardCharsets.UTF_8));
		out.writeByte(payload.length);
		out.write(payload);
		LogEntryCodec.LogEntry granted = LogEntryCodec.decodeLogEntry(bytes.toByteArray());
		assertThat(granted.grant()).isEqualTo(new Grant("orders-app", false, List.of("orders")));
		assertThat(granted.command()).isEqualTo(Command.of(7, new Operation.Complete("t-1")));
	}

	@Test
	void malformedUtf8IsRefusedNotReplaced() {
		byte[] valid = MessageCodec.encodeCommand(Command.of(7, new Operation.Complete("t-\u00e9")));
		// "t-é" is 74 2d c3 a9: cut the two-byte character in half and the string is not UTF-8
		byte[] malformed = valid.clone();
		malformed[malformed.length - 1] = (byte) 0x41;
		assertThat(MessageCodec.decodeCommand(valid)).isEqualTo(Command.of(7, new Operation.Complete("t-\u00e9")));
		assertThatExceptionOfType(DecisionCodecException.class).isThrownBy(() -> MessageCodec.decodeCommand(malformed))
			.withMessageContaining("not valid UTF-8");
	}

	@Test
	void refusalsRoundTripAndLongReasonsAreCut() {
		List<OperationResult> results = List.of(new OperationResult.Refused("too long"),
				new OperationResult.Refused("x".repeat(40_000)));
		List<OperationResult> decoded = MessageCodec.decodeResults(MessageCodec.encodeResults(results));
		assertThat(decoded.get(0)).isEqualTo(new OperationResult.Refused("too long"));
		assertThat(((OperationResult.Refused) decoded.get(1)).reason()).hasSize(1024);
	}

}
