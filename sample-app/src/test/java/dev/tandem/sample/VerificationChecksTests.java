package dev.tandem.sample;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import dev.tandem.sample.VerificationChecks.InputRecord;
import dev.tandem.sample.VerificationChecks.OutputRecord;
import dev.tandem.sample.VerificationChecks.Result;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The checker's logic on hand-made reads: a correct run passes, and each kind of anomaly is
 * found and named.
 */
class VerificationChecksTests {

	private static final String EAST = Regions.EAST;

	private static final String WEST = Regions.WEST;

	/** Origins: BOS routes east, SFO and LAX route west. */
	private static final Map<String, String> ROUTES = Map.of("BOS", EAST, "SFO", WEST, "LAX", WEST);

	private final List<InputRecord> input = new ArrayList<>();

	private final Map<String, List<OutputRecord>> outputs = new TreeMap<>(Map.of(EAST, new ArrayList<>(),
			WEST, new ArrayList<>()));

	private final Map<String, Set<String>> markers = new TreeMap<>(Map.of(EAST, new java.util.HashSet<>(),
			WEST, new java.util.HashSet<>()));

	/**
	 * Input: seq 0..5 on partition 0 (offsets 0..5), origins BOS, SFO, BOS, LAX, SFO, BOS.
	 * Transaction t1 routed seq 0-2 (east 2, west 1), t2 routed seq 3-5 (east 1, west 2).
	 */
	private void correctRun() {
		String[] origins = { "BOS", "SFO", "BOS", "LAX", "SFO", "BOS" };
		for (int seq = 0; seq < origins.length; seq++) {
			this.input.add(new InputRecord(0, seq, true, seq, origins[seq], false));
		}
		route("t1", 0, 1, 2);
		route("t2", 3, 4, 5);
	}

	private void route(String transactionId, int... seqs) {
		String consumed = "0:" + this.input.get(seqs[0]).offset() + "-" + this.input.get(seqs[seqs.length - 1]).offset();
		Map<String, Integer> counts = new TreeMap<>();
		for (int seq : seqs) {
			counts.merge(ROUTES.get(this.input.get(seq).origin()), 1, Integer::sum);
		}
		for (int seq : seqs) {
			InputRecord source = this.input.get(seq);
			String cluster = ROUTES.get(source.origin());
			emit(cluster, source, transactionId, counts, consumed, "a");
		}
		counts.keySet().forEach((cluster) -> this.markers.get(cluster).add(transactionId));
		this.markers.get(EAST).add(transactionId);
	}

	private void emit(String cluster, InputRecord source, String transactionId, Map<String, Integer> counts,
			String consumed, String incarnation) {
		List<OutputRecord> records = this.outputs.get(cluster);
		records.add(new OutputRecord(cluster, 0, records.size(), source.origin(), source.seq(), source.partition(),
				source.offset(), transactionId, counts, consumed, incarnation, source.abortedSource()));
	}

	private VerificationChecks checks() {
		return checksCommittedAt(this.input.size());
	}

	private VerificationChecks checksCommittedAt(long committed) {
		return new VerificationChecks(EAST, ROUTES::get).loaded(this.input.size())
			.input(this.input)
			.outputs(this.outputs)
			.markers(this.markers)
			.offsets(Map.of(new TopicPartition("in", 0), committed),
					Map.of(new TopicPartition("in", 0), (long) this.input.size()), Map.of(WEST, 0));
	}

	@Test
	void aCorrectRunPassesWithEveryCountAtZero() {
		correctRun();
		Result result = checks().run();
		assertThat(result.anomalies()).isEmpty();
		assertThat(result.facts()).containsEntry("lost", 0L).containsEntry("duplicated", 0L)
			.containsEntry("aborted-but-visible transactions", 0)
			.containsEntry("keys out of input order", 0)
			.containsEntry("transactions with visible records", 2);
	}

	@Test
	void aTransactionSpanningTwoDeliveriesPromisesTheirSumAndIsWholeWhenAllOfBothIsVisible() {
		String[] origins = { "BOS", "SFO", "BOS", "LAX", "SFO", "BOS" };
		for (int seq = 0; seq < origins.length; seq++) {
			this.input.add(new InputRecord(0, seq, true, seq, origins[seq], false));
		}
		// one transaction, two deliveries (a pipelined batch listener's transaction spans them)
		route("t1", 0, 1, 2);
		route("t1", 3, 4, 5);
		assertThat(checks().run().anomalies()).isEmpty();

		// the second delivery's west records missing: that transaction is partly visible
		this.outputs.get(WEST).removeIf((r) -> r.seq() == 4);
		Result partial = checks().run();
		assertThat(partial.facts()).containsEntry("aborted-but-visible transactions", 1);
		assertThat(partial.anomalies()).anyMatch((a) -> a.contains("2 of 3 records visible on west"));
	}

	@Test
	void aRecordRoutedTwiceIsADuplicate() {
		correctRun();
		route("t3", 3, 4, 5);
		Result result = checks().run();
		assertThat(result.facts()).containsEntry("duplicated", 3L);
		assertThat(result.anomalies()).anyMatch((a) -> a.startsWith("3 duplicated"));
	}

	@Test
	void aMissingRecordIsLost() {
		correctRun();
		this.outputs.get(WEST).removeIf((r) -> r.seq() == 4);
		this.outputs.get(WEST).removeIf((r) -> r.seq() == 3);
		this.outputs.get(EAST).removeIf((r) -> r.seq() == 5);
		this.markers.values().forEach((m) -> m.remove("t2"));
		Result result = checks().run();
		assertThat(result.facts()).containsEntry("lost", 3L);
		assertThat(result.anomalies()).anyMatch((a) -> a.startsWith("3 lost"));
	}

	@Test
	void aTransactionVisibleOnOneClusterOnlyIsAbortedButVisible() {
		correctRun();
		this.outputs.get(WEST).removeIf((r) -> r.transactionId().equals("t2"));
		this.markers.get(WEST).remove("t2");
		Result result = checks().run();
		assertThat(result.facts()).containsEntry("aborted-but-visible transactions", 1);
		assertThat(result.anomalies()).anyMatch((a) -> a.contains("aborted but visible") && a.contains("0 of 2 records visible on west"));
	}

	@Test
	void visibleRecordsWithoutTheCommitMarkerOfTheSourceClusterAreAbortedButVisible() {
		// t1 sent only to west, its offsets went to east: east's participant must have committed too
		this.input.add(new InputRecord(0, 0, true, 0, "SFO", false));
		this.input.add(new InputRecord(0, 1, true, 1, "LAX", false));
		route("t1", 0, 1);
		this.markers.get(EAST).remove("t1");
		Result result = checksCommittedAt(2).run();
		assertThat(result.anomalies()).anyMatch((a) -> a.contains("no commit marker on east"));
	}

	@Test
	void aKeyWhoseOutputIsNotInInputOrderIsOutOfOrder() {
		correctRun();
		List<OutputRecord> east = this.outputs.get(EAST);
		OutputRecord first = east.get(0);
		OutputRecord second = east.get(1);
		east.set(0, new OutputRecord(EAST, 0, 0, second.key(), second.seq(), second.srcPartition(), second.srcOffset(),
				second.transactionId(), second.recordsPerCluster(), second.consumedInput(), "a", false));
		east.set(1, new OutputRecord(EAST, 0, 1, first.key(), first.seq(), first.srcPartition(), first.srcOffset(),
				first.transactionId(), first.recordsPerCluster(), first.consumedInput(), "a", false));
		Result result = checks().run();
		assertThat(result.facts()).containsEntry("keys out of input order", 1);
		assertThat(result.anomalies()).anyMatch((a) -> a.contains("not in input order [BOS]"));
	}

	@Test
	void anOutputMadeFromAnAbortedSourceTransactionIsFound() {
		correctRun();
		InputRecord aborted = new InputRecord(0, 7, true, InputLoader.ABORTED_SEQ_BASE, "BOS", true);
		emit(EAST, aborted, "t9", Map.of(EAST, 1), "0:7-7", "a");
		Result result = checks().run();
		assertThat(result.facts()).containsEntry("mirrored records of aborted source transactions", 1);
		assertThat(result.anomalies()).anyMatch((a) -> a.contains("made from aborted source transactions"));
	}

	@Test
	void committedSourceOffsetsBehindTheInputAreFound() {
		correctRun();
		Result result = checksCommittedAt(4).run();
		assertThat(result.anomalies()).anyMatch((a) -> a.startsWith("committed offset of in-0 on east is 4"));
	}

	@Test
	void aTransactionKilledBeforeItsDecisionMustLeaveNothingVisible() {
		correctRun();
		Result result = checks().halted("t2", "AFTER_PREPARE").run();
		assertThat(result.anomalies()).anyMatch((a) -> a.contains("killed undecided (AFTER_PREPARE) but 3"));
		assertThat(checks().halted("t2", "AFTER_DECISION").run().anomalies()).isEmpty();
		assertThat(checks().halted("t7", "AFTER_DECISION").run().anomalies())
			.anyMatch((a) -> a.contains("decided before the kill (AFTER_DECISION) but none of its records is visible"));
	}

	@Test
	void aRestartThatDoesNotResumeFromTheLastCommittedOffsetsIsFound() {
		correctRun();
		// A second start routed input 0..2 again after the first one's t1: it restarted from the earliest offset.
		List<OutputRecord> east = this.outputs.get(EAST);
		east.replaceAll((r) -> r.transactionId().equals("t2") ? incarnation(r, "b") : r);
		this.outputs.get(WEST).replaceAll((r) -> r.transactionId().equals("t2") ? incarnation(r, "b") : r);
		assertThat(checks().incarnations(List.of("a", "b")).run().anomalies()).isEmpty();
		this.outputs.get(WEST).replaceAll((r) -> r.seq() == 1 ? incarnation(r, "b") : r);
		assertThat(checks().incarnations(List.of("a", "b")).run().anomalies())
			.anyMatch((a) -> a.contains("did not resume from the last committed offsets"));
	}

	@Test
	void aHeuristicOutcomeMustBeReportedWhenExpectedAndExplainsItsOwnDamageOnly() {
		correctRun();
		this.outputs.get(WEST).removeIf((r) -> r.transactionId().equals("t2"));
		assertThat(checks().heuristics(Set.of("t2"), Set.of()).run().anomalies())
			.anyMatch((a) -> a.contains("did not report it (silent)"))
			.anyMatch((a) -> a.contains("aborted but visible"));
		Result reported = checks().heuristics(Set.of("t2"), Set.of("t2")).run();
		assertThat(reported.anomalies()).isEmpty();
		assertThat(reported.explained()).anyMatch((e) -> e.startsWith("transaction t2 (reported heuristic outcome)"))
			.anyMatch((e) -> e.startsWith("2 lost record(s) consumed by transactions reported as heuristic outcomes"));
		assertThat(checks().heuristics(Set.of(), Set.of("t1")).run().anomalies())
			.anyMatch((a) -> a.contains("unexpected heuristic outcome reported for transaction t1"))
			.anyMatch((a) -> a.contains("aborted but visible"));
	}

	private static OutputRecord incarnation(OutputRecord record, String incarnation) {
		return new OutputRecord(record.cluster(), record.partition(), record.offset(), record.key(), record.seq(),
				record.srcPartition(), record.srcOffset(), record.transactionId(), record.recordsPerCluster(),
				record.consumedInput(), incarnation, record.abortedSource());
	}

}
