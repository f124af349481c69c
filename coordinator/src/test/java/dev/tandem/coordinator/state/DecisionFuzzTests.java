package dev.tandem.coordinator.state;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.InstanceLease;
import dev.tandem.transaction.TransactionIds;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Property-based fuzzing of the coordinator's state: generated commands of every operation type,
 * with extreme and malformed fields (empty, oversized, multi-byte and unpaired-surrogate strings;
 * extreme times, durations, epochs and offsets), and generated or mutated bytes for the codec.
 * Properties: applying never throws and its results always encode; replicas applying the same
 * entries hold the same table; snapshot then restore gives the same table; a refused command leaves
 * no trace; decoding any bytes either gives a command that re-encodes to itself or fails with a
 * {@link DecisionCodecException}. The approach of FoundationDB's and TigerBeetle's simulation
 * testing, at the scale of one state machine.
 * <p>
 * {@code mvn verify} runs jqwik's default number of tries; {@code -Pfuzz} runs more a property
 * (200,000: the long run of {@code docs/benchmarks.md}).
 */
class DecisionFuzzTests {

	private static final AtomicLong generatedCommands = new AtomicLong();

	private static final List<String> OWNERS = List.of("app.i1", "app.i2", "other.i1");

	@AfterContainer
	static void report() {
		// printed, not logged: the long run's count belongs in docs/benchmarks.md
		System.out.println("DecisionFuzzTests: " + generatedCommands.get() + " generated commands");
	}

	@Property
	void applyNeverThrowsAndReplicasSnapshotsAndResultsAgree(@ForAll("histories") List<Command> history,
			@ForAll("grants") Grant grant) throws IOException {
		DecisionTable replica = new DecisionTable();
		DecisionTable other = new DecisionTable();
		for (Command command : history) {
			generatedCommands.incrementAndGet();
			Map<String, Object> before = content(replica);
			List<OperationResult> results = replica.apply(command, grant);
			assertThat(results).hasSameSizeAs(command.operations());
			assertThat(results).noneMatch((result) -> result instanceof OperationResult.Refused refused
					&& refused.reason().contains("failed to apply"));
			assertThat(other.apply(command, grant)).isEqualTo(results);
			byte[] encoded = MessageCodec.encodeResults(results);
			assertThat(MessageCodec.decodeResults(encoded)).hasSameSizeAs(results);
			if (CommandLimits.refusal(command) != null) {
				assertThat(results).allMatch(OperationResult.Refused.class::isInstance);
				assertThat(content(replica)).isEqualTo(before);
			}
		}
		assertThat(content(other)).isEqualTo(content(replica));
		ByteArrayOutputStream snapshot = new ByteArrayOutputStream();
		SnapshotCodec.writeSnapshot(replica.records(), replica.leases(), snapshot);
		SnapshotCodec.Snapshot read = SnapshotCodec.readFullSnapshot(new ByteArrayInputStream(snapshot.toByteArray()));
		DecisionTable restored = new DecisionTable();
		restored.replaceWith(read.records(), read.leases());
		assertThat(content(restored)).isEqualTo(content(replica));
	}

	@Property
	void aValidCommandRoundTripsAndAnyOtherBytesFailAsCodecErrors(@ForAll("commands") Command command,
			@ForAll("mutations") Mutation mutation) {
		generatedCommands.incrementAndGet();
		byte[] bytes;
		try {
			bytes = MessageCodec.encodeCommand(command);
		}
		catch (DecisionCodecException ex) {
			// a string past the codec's own bound: far past the limits, refused before it is sent
			assertThat(CommandLimits.refusal(command)).isNotNull();
			return;
		}
		assertThat(MessageCodec.encodeCommand(MessageCodec.decodeCommand(bytes))).isEqualTo(bytes);
		byte[] mutated = mutation.apply(bytes);
		Throwable failure = catchThrowable(() -> {
			Command decoded = MessageCodec.decodeCommand(mutated);
			assertThat(MessageCodec.decodeCommand(MessageCodec.encodeCommand(decoded))).isEqualTo(decoded);
		});
		if (failure != null) {
			assertThat(failure).isInstanceOf(DecisionCodecException.class);
		}
	}

	@Property
	void everyStringThatPassesTheLimitsEncodesInResultsAndSnapshots(@ForAll("strings") String value) {
		generatedCommands.incrementAndGet();
		String owner = "app.i1";
		Command command = Command.of(1, new Operation.Decide(decision(TransactionIds.newId(owner), owner, 1), value));
		if (CommandLimits.refusal(command) != null) {
			return;
		}
		DecisionTable table = new DecisionTable();
		table.apply(Command.of(1, new Operation.RenewLease("app", "i1", "run", 1_000)));
		List<OperationResult> results = table.apply(command);
		assertThatCode(() -> MessageCodec.encodeResults(results)).doesNotThrowAnyException();
		assertThatCode(() -> SnapshotCodec.writeSnapshot(table.records(), table.leases(), new ByteArrayOutputStream()))
			.doesNotThrowAnyException();
	}

	// Generators

	@Provide
	Arbitrary<List<Command>> histories() {
		return commands().list().ofMinSize(1).ofMaxSize(12);
	}

	@Provide
	Arbitrary<Command> commands() {
		return Combinators.combine(times(), operations().list().ofMinSize(1).ofMaxSize(6)).as(Command::new);
	}

	@Provide
	Arbitrary<Grant> grants() {
		return Arbitraries.of(Grant.ALL, new Grant("app-id", false, List.of("app")),
				new Grant("ops", true, List.of()));
	}

	@Provide
	Arbitrary<String> strings() {
		return Arbitraries.oneOf(Arbitraries.of("", "a", "\u00e9", "\ud83d\ude00", "\ud800", "\ufffd", "\u0000", "a.b.c"),
				Arbitraries.strings().ofMinLength(0).ofMaxLength(40),
				Arbitraries.strings().all().ofMinLength(0).ofMaxLength(20),
				Arbitraries.of(127, 128, 129, 248, 249, 250, 255, 256, 511, 512, 513, 599, 600, 601, 1023, 1024, 1025,
						10_923, DecisionCodec.MAX_STRING_BYTES / 3 + 1, DecisionCodec.MAX_STRING_BYTES)
					.flatMap((length) -> Arbitraries.of("x", "\u00e9", "\u20ac").map((unit) -> unit.repeat(length))));
	}

	private Arbitrary<String> owners() {
		return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(6, Arbitraries.of(OWNERS)),
				net.jqwik.api.Tuple.of(1, strings()));
	}

	private Arbitrary<String> transactionIds() {
		return Arbitraries.frequencyOf(
				net.jqwik.api.Tuple.of(4, Arbitraries.of(OWNERS).map((owner) -> owner + "-" + new java.util.UUID(0, owner.length()))),
				net.jqwik.api.Tuple.of(2, Arbitraries.of(OWNERS).map(TransactionIds::newId)),
				net.jqwik.api.Tuple.of(1, strings()));
	}

	private Arbitrary<Long> times() {
		return Arbitraries.oneOf(Arbitraries.of(Long.MIN_VALUE, -1L, 0L, 1L, Long.MAX_VALUE),
				Arbitraries.longs().between(0, 10_000));
	}

	private Arbitrary<Long> positive() {
		return Arbitraries.oneOf(Arbitraries.of(1L, CommandLimits.MAX_LEASE_MS, CommandLimits.MAX_LEASE_MS + 1, Long.MAX_VALUE),
				Arbitraries.longs().between(1, 5_000));
	}

	private Arbitrary<Operation> operations() {
		return Arbitraries.oneOf(decides(),
				transactionIds().map(Operation.Complete::new),
				Combinators.combine(transactionIds(), owners()).as(Operation.Abort::new),
				Arbitraries.oneOf(Arbitraries.of(0L, 1L, CommandLimits.MAX_RETENTION_MS + 1, Long.MAX_VALUE),
						Arbitraries.longs().between(0, 5_000)).map(Operation.Purge::new),
				Combinators.combine(Arbitraries.oneOf(Arbitraries.of("app", "other"), strings()),
						Arbitraries.oneOf(Arbitraries.of("i1", "i2"), strings()),
						Arbitraries.oneOf(Arbitraries.of("run-1", "run-2"), strings()), positive())
					.as(Operation.RenewLease::new),
				Combinators.combine(owners(), owners()).as(Operation.ClaimLease::new),
				Combinators.combine(owners(), Arbitraries.oneOf(Arbitraries.of("run-1", "run-2"), owners()),
						Arbitraries.of(false, true))
					.as(Operation.ReleaseLease::new));
	}

	private Arbitrary<Operation> decides() {
		Arbitrary<ParticipantRecord> participant = Combinators.combine(Arbitraries.oneOf(Arbitraries.of("east", "west"), strings()),
				Arbitraries.oneOf(Arbitraries.of("app.east.i1.0"), strings()),
				Arbitraries.oneOf(Arbitraries.of(-1L, 0L, Long.MAX_VALUE), Arbitraries.longs()),
				Arbitraries.shorts(), Arbitraries.oneOf(Arbitraries.of("tandem-markers"), strings()),
				Arbitraries.integers(), Arbitraries.longs())
			.as(ParticipantRecord::new);
		Arbitrary<List<ParticipantRecord>> participants = Arbitraries.oneOf(participant.list().ofMinSize(1).ofMaxSize(3),
				participant.map((one) -> java.util.Collections.nCopies(CommandLimits.MAX_PARTICIPANTS + 1, one)));
		Arbitrary<Decision> decision = Combinators.combine(transactionIds(), owners(), times(), participants)
			.as(Decision::new);
		return Combinators.combine(decision, Arbitraries.oneOf(Arbitraries.of("run-1", "run-2"), strings()).injectNull(0.4))
			.as(Operation.Decide::new);
	}

	@Provide
	Arbitrary<Mutation> mutations() {
		return Arbitraries.oneOf(Arbitraries.integers().between(0, 4096).map(Mutation::truncate),
				Combinators.combine(Arbitraries.integers().between(0, 4096), Arbitraries.bytes()).as(Mutation::flip),
				Combinators.combine(Arbitraries.integers().between(0, 4096), Arbitraries.bytes().array(byte[].class).ofMaxSize(12))
					.as(Mutation::insert),
				Arbitraries.bytes().array(byte[].class).ofMaxSize(64).map(Mutation::replace));
	}

	/** A change to encoded bytes: truncated, one byte changed, bytes inserted, or other bytes entirely. */
	record Mutation(String name, java.util.function.UnaryOperator<byte[]> change) {

		static Mutation truncate(int at) {
			return new Mutation("truncate@" + at, (bytes) -> java.util.Arrays.copyOf(bytes, Math.min(at, bytes.length)));
		}

		static Mutation flip(int at, byte value) {
			return new Mutation("set@" + at, (bytes) -> {
				byte[] copy = bytes.clone();
				if (copy.length > 0) {
					copy[at % copy.length] = value;
				}
				return copy;
			});
		}

		static Mutation insert(int at, byte[] inserted) {
			return new Mutation("insert@" + at, (bytes) -> {
				int where = Math.min(at, bytes.length);
				byte[] copy = new byte[bytes.length + inserted.length];
				System.arraycopy(bytes, 0, copy, 0, where);
				System.arraycopy(inserted, 0, copy, where, inserted.length);
				System.arraycopy(bytes, where, copy, where + inserted.length, bytes.length - where);
				return copy;
			});
		}

		static Mutation replace(byte[] other) {
			return new Mutation("replace", (bytes) -> other.clone());
		}

		byte[] apply(byte[] bytes) {
			return this.change.apply(bytes);
		}

		@Override
		public String toString() {
			return this.name;
		}

	}

	private static Decision decision(String transactionId, String owner, long decidedAtMs) {
		return TestDecisions.decision(transactionId, owner, decidedAtMs);
	}

	/** Everything a table holds, comparable with equals. */
	private static Map<String, Object> content(DecisionTable table) {
		Map<String, Object> content = new HashMap<>();
		Map<String, TransactionRecord> records = new HashMap<>();
		table.records().forEach((record) -> records.put(record.transactionId(), record));
		Map<String, InstanceLease> leases = new HashMap<>();
		table.leases().forEach((lease) -> leases.put(lease.owner(), lease));
		content.put("records", records);
		content.put("leases", leases);
		content.put("counts", table.counts());
		List<Object> inDoubt = new ArrayList<>();
		for (String owner : OWNERS) {
			inDoubt.add(table.inDoubt(owner));
		}
		content.put("inDoubt", inDoubt);
		return content;
	}

}
