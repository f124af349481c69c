package dev.tandem.sample;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The checks of one routing run, on what {@code read_committed} readers saw: pure logic, no
 * Kafka access ({@link Verification} gathers the records). An anomaly is anything a correct
 * exactly-once pipeline never shows:
 * <ul>
 * <li><b>lost</b>: an input record of the run with no output record;</li>
 * <li><b>duplicated</b>: an input record with more than one output record;</li>
 * <li><b>aborted-but-visible</b>: a transaction whose records are visible on one cluster but not
 * all of them on every cluster it wrote to (its {@code flights-txn-records} header says how many
 * each cluster must show), or, for a two-phase transaction, visible records without the
 * transaction's commit marker on each of its participants;</li>
 * <li><b>out-of-order</b>: a key whose output records are not in input order;</li>
 * <li><b>mirrored aborted source</b>: an output record made from an aborted input transaction;</li>
 * <li>misrouted or unexpected records, committed source offsets that do not match the input,
 * offsets leaked to another cluster, a kcat count that differs from the Java client's;</li>
 * <li>for a run whose router was killed at a known protocol step: the killed transaction's
 * records visible although it was never decided, or not all visible although it was; records
 * of a later router start that do not follow exactly the last committed ones (a restart from
 * the earliest offset, or a gap);</li>
 * <li>a heuristic outcome that was expected but not reported (silent), or reported but not
 * expected.</li>
 * </ul>
 * Duplicates, partly visible transactions and lost records of a transaction that the app itself
 * reported as a heuristic outcome are not anomalies: they are listed as explained by that report
 * (a lost record is attributed through the {@code flights-txn-input} header of the
 * transaction's visible records).
 */
final class VerificationChecks {

	/** Protocol steps after which a killed transaction must commit on recovery. */
	private static final Set<String> DECIDED_STEPS = Set.of("AFTER_DECISION", "MID_COMMIT", "AFTER_COMMIT");

	/**
	 * One record of the input topic, as a {@code read_committed} reader saw it.
	 * @param partition input partition
	 * @param offset offset
	 * @param ofRun whether the record belongs to the run checked
	 * @param seq the record's number within its run
	 * @param origin origin airport (the routing key)
	 * @param abortedSource whether the record was written by a source transaction that aborted
	 */
	record InputRecord(int partition, long offset, boolean ofRun, long seq, String origin, boolean abortedSource) {
	}

	/**
	 * One output record of the run, as a {@code read_committed} reader of its cluster saw it.
	 * @param cluster cluster read
	 * @param partition output partition
	 * @param offset offset
	 * @param key record key
	 * @param seq the input record's number
	 * @param srcPartition input partition it came from, -1 if unknown
	 * @param srcOffset input offset it came from, -1 if unknown
	 * @param transactionId the {@code flights-txn} header, empty if missing
	 * @param recordsPerCluster the {@code flights-txn-records} header, empty if missing
	 * @param consumedInput the {@code flights-txn-input} header, empty if missing
	 * @param incarnation the {@code flights-incarnation} header, empty if missing
	 * @param abortedSource whether the input record was written by an aborted source transaction
	 */
	record OutputRecord(String cluster, int partition, long offset, @Nullable String key, long seq, int srcPartition,
			long srcOffset, String transactionId, Map<String, Integer> recordsPerCluster, String consumedInput,
			String incarnation, boolean abortedSource) {

		/**
		 * Whether the record's transaction consumed this input record.
		 */
		boolean consumed(int partition, long offset) {
			for (String range : this.consumedInput.split(",")) {
				String[] parts = range.split("[:-]");
				if (parts.length == 3 && Integer.parseInt(parts[0]) == partition && Long.parseLong(parts[1]) <= offset
						&& offset <= Long.parseLong(parts[2])) {
					return true;
				}
			}
			return false;
		}

	}

	/**
	 * Result of the checks.
	 * @param facts counts in reading order, for the report
	 * @param anomalies every anomaly found, one line each; empty if the run is correct
	 * @param explained deviations explained by a heuristic outcome the app reported
	 */
	record Result(Map<String, Object> facts, List<String> anomalies, List<String> explained) {

		boolean passed() {
			return this.anomalies.isEmpty();
		}

	}

	private final String sourceCluster;

	private final Function<String, String> clusterOfOrigin;

	private @Nullable Integer loaded;

	private List<InputRecord> input = List.of();

	private Map<String, List<OutputRecord>> outputs = Map.of();

	private Map<String, Set<String>> markers = Map.of();

	private Map<TopicPartition, Long> committedOffsets = Map.of();

	private Map<TopicPartition, Long> inputEndOffsets = Map.of();

	private Map<String, Integer> leakedOffsets = Map.of();

	private Map<String, Long> kcatCounts = Map.of();

	private @Nullable String haltedTransaction;

	private @Nullable String haltedStep;

	private Set<String> expectedHeuristics = Set.of();

	private Set<String> reportedHeuristics = Set.of();

	private List<String> incarnations = List.of();

	private final Map<String, Object> facts = new LinkedHashMap<>();

	private final List<String> anomalies = new ArrayList<>();

	private final List<String> explained = new ArrayList<>();

	/**
	 * Creates the checks of one run.
	 * @param sourceCluster the cluster of the input topic (where offsets are committed)
	 * @param clusterOfOrigin the routing rule: origin airport to cluster
	 */
	VerificationChecks(String sourceCluster, Function<String, String> clusterOfOrigin) {
		this.sourceCluster = sourceCluster;
		this.clusterOfOrigin = clusterOfOrigin;
	}

	VerificationChecks loaded(@Nullable Integer loaded) {
		this.loaded = loaded;
		return this;
	}

	VerificationChecks input(List<InputRecord> input) {
		this.input = input;
		return this;
	}

	VerificationChecks outputs(Map<String, List<OutputRecord>> outputs) {
		this.outputs = outputs;
		return this;
	}

	VerificationChecks markers(Map<String, Set<String>> markers) {
		this.markers = markers;
		return this;
	}

	VerificationChecks offsets(Map<TopicPartition, Long> committed, Map<TopicPartition, Long> inputEnd,
			Map<String, Integer> leaked) {
		this.committedOffsets = committed;
		this.inputEndOffsets = inputEnd;
		this.leakedOffsets = leaked;
		return this;
	}

	VerificationChecks kcat(Map<String, Long> counts) {
		this.kcatCounts = counts;
		return this;
	}

	/**
	 * The router was killed while transaction {@code transactionId} was at protocol step
	 * {@code step} (a {@code ProtocolStep} name).
	 */
	VerificationChecks halted(@Nullable String transactionId, @Nullable String step) {
		this.haltedTransaction = transactionId;
		this.haltedStep = step;
		return this;
	}

	VerificationChecks heuristics(Set<String> expected, Set<String> reported) {
		this.expectedHeuristics = expected;
		this.reportedHeuristics = reported;
		return this;
	}

	/**
	 * The order in which router incarnations started (values of {@code flights-incarnation});
	 * with two or more, each later one must continue exactly where the earlier ones' committed
	 * records end.
	 */
	VerificationChecks incarnations(List<String> incarnations) {
		this.incarnations = incarnations;
		return this;
	}

	Result run() {
		List<InputRecord> ofRun = this.input.stream().filter(InputRecord::ofRun).toList();
		List<InputRecord> runInput = ofRun.stream().filter((r) -> !r.abortedSource()).toList();
		long abortedSourceVisible = ofRun.size() - runInput.size();
		this.facts.put("input records of the run (read_committed)", runInput.size());
		if (this.loaded != null) {
			check(runInput.size() == this.loaded, "input has " + runInput.size() + " records of this run, "
					+ this.loaded + " were committed by the loader");
		}
		check(abortedSourceVisible == 0, abortedSourceVisible + " record(s) of aborted source transactions visible "
				+ "in the input to read_committed");

		Map<Long, InputRecord> bySeq = new HashMap<>();
		for (InputRecord record : runInput) {
			bySeq.put(record.seq(), record);
		}
		List<OutputRecord> all = new ArrayList<>();
		for (Map.Entry<String, List<OutputRecord>> entry : new TreeMap<>(this.outputs).entrySet()) {
			String cluster = entry.getKey();
			long expectedHere = runInput.stream().filter((r) -> cluster.equals(this.clusterOfOrigin.apply(r.origin())))
				.count();
			this.facts.put("output on " + cluster + " (read_committed, Java client)", entry.getValue().size());
			this.facts.put("output expected on " + cluster, expectedHere);
			Long kcat = this.kcatCounts.get(cluster);
			if (kcat != null) {
				this.facts.put("output on " + cluster + " (read_committed, kcat)", kcat);
				check(kcat == entry.getValue().size(), "kcat counts " + kcat + " records on " + cluster
						+ ", the Java client " + entry.getValue().size());
			}
			all.addAll(entry.getValue());
		}

		Map<Long, List<OutputRecord>> outputsBySeq = new HashMap<>();
		int misrouted = 0;
		int mirroredAborted = 0;
		for (OutputRecord record : all) {
			outputsBySeq.computeIfAbsent(record.seq(), (s) -> new ArrayList<>()).add(record);
			InputRecord source = bySeq.get(record.seq());
			if (source != null && !record.cluster().equals(this.clusterOfOrigin.apply(source.origin()))) {
				misrouted++;
			}
			if (record.abortedSource()) {
				mirroredAborted++;
			}
		}
		List<OutputRecord> ofHeuristics = all.stream()
			.filter((r) -> this.reportedHeuristics.contains(r.transactionId()))
			.toList();
		List<InputRecord> missing = runInput.stream().filter((r) -> !outputsBySeq.containsKey(r.seq())).toList();
		long lostExplained = missing.stream()
			.filter((r) -> ofHeuristics.stream().anyMatch((o) -> o.consumed(r.partition(), r.offset())))
			.count();
		long lost = missing.size() - lostExplained;
		if (lostExplained > 0) {
			this.explained.add(lostExplained + " lost record(s) consumed by transactions reported as heuristic outcomes");
		}
		long unexpected = outputsBySeq.keySet().stream().filter((seq) -> !bySeq.containsKey(seq))
			.filter((seq) -> outputsBySeq.get(seq).stream().noneMatch(OutputRecord::abortedSource)).count();
		long duplicated = 0;
		long duplicatedExplained = 0;
		for (List<OutputRecord> copies : outputsBySeq.values()) {
			if (copies.size() > 1) {
				if (copies.stream().anyMatch((r) -> this.reportedHeuristics.contains(r.transactionId()))) {
					duplicatedExplained += copies.size() - 1;
				}
				else {
					duplicated += copies.size() - 1;
				}
			}
		}
		this.facts.put("lost", lost);
		this.facts.put("duplicated", duplicated);
		check(lost == 0, lost + " lost record(s)");
		check(duplicated == 0, duplicated + " duplicated record(s)");
		if (duplicatedExplained > 0) {
			this.explained.add(duplicatedExplained + " duplicated record(s) of transactions reported as heuristic outcomes");
		}
		this.facts.put("misrouted", misrouted);
		check(misrouted == 0, misrouted + " record(s) on the wrong cluster");
		check(unexpected == 0, unexpected + " output record(s) with no input record");
		this.facts.put("mirrored records of aborted source transactions", mirroredAborted);
		check(mirroredAborted == 0, mirroredAborted + " output record(s) made from aborted source transactions");

		Map<String, TransactionView> transactions = transactions(all);
		checkAtomicity(transactions);
		checkOrder(all);
		checkHalted(transactions);
		checkHeuristics();
		checkResume(all);
		checkOffsets();
		return new Result(this.facts, this.anomalies, this.explained);
	}

	/**
	 * What readers see of one transaction: records per cluster, and what its headers promise. A
	 * transaction may hold several listener deliveries (a pipelined batch listener's transaction
	 * spans deliveries); each delivery's records carry that delivery's counts and its consumed
	 * input, so the transaction promises the sum over its deliveries.
	 */
	private static final class TransactionView {

		final Map<String, Integer> visible = new TreeMap<>();

		/** Consumed input of a delivery -> the counts its records carry (one, unless they disagree). */
		final Map<String, Set<Map<String, Integer>>> deliveries = new TreeMap<>();

		boolean disagrees() {
			return this.deliveries.values().stream().anyMatch((counts) -> counts.size() != 1);
		}

		Map<String, Integer> promised() {
			Map<String, Integer> total = new TreeMap<>();
			this.deliveries.values().forEach((counts) -> counts.iterator().next()
				.forEach((cluster, records) -> total.merge(cluster, records, Integer::sum)));
			return total;
		}

	}

	private Map<String, TransactionView> transactions(List<OutputRecord> all) {
		Map<String, TransactionView> transactions = new LinkedHashMap<>();
		int withoutHeader = 0;
		for (OutputRecord record : all) {
			if (record.transactionId().isEmpty()) {
				withoutHeader++;
				continue;
			}
			TransactionView view = transactions.computeIfAbsent(record.transactionId(), (id) -> new TransactionView());
			view.visible.merge(record.cluster(), 1, Integer::sum);
			view.deliveries.computeIfAbsent(record.consumedInput(), (input) -> new HashSet<>())
				.add(record.recordsPerCluster());
		}
		this.facts.put("transactions with visible records", transactions.size());
		check(withoutHeader == 0, withoutHeader + " output record(s) without a transaction header");
		return transactions;
	}

	private void checkAtomicity(Map<String, TransactionView> transactions) {
		int partlyVisible = 0;
		List<String> examples = new ArrayList<>();
		for (Map.Entry<String, TransactionView> entry : transactions.entrySet()) {
			String id = entry.getKey();
			TransactionView view = entry.getValue();
			List<String> why = new ArrayList<>();
			if (view.disagrees()) {
				why.add("records of one delivery disagree on its size " + view.deliveries);
			}
			Map<String, Integer> promised = view.promised();
			Set<String> participants = new TreeSet<>(promised.keySet());
			participants.add(this.sourceCluster); // the consumed offsets are committed there
			for (String cluster : participants) {
				int expected = promised.getOrDefault(cluster, 0);
				int visible = view.visible.getOrDefault(cluster, 0);
				if (visible != expected) {
					why.add(visible + " of " + expected + " records visible on " + cluster);
				}
				if (participants.size() > 1 && !this.markers.getOrDefault(cluster, Set.of()).contains(id)) {
					why.add("no commit marker on " + cluster);
				}
			}
			if (!why.isEmpty()) {
				if (this.reportedHeuristics.contains(id)) {
					this.explained.add("transaction " + id + " (reported heuristic outcome): " + String.join("; ", why));
				}
				else {
					partlyVisible++;
					if (examples.size() < 3) {
						examples.add(id + ": " + String.join("; ", why));
					}
				}
			}
		}
		this.facts.put("aborted-but-visible transactions", partlyVisible);
		check(partlyVisible == 0, partlyVisible + " transaction(s) aborted but visible (partly visible) " + examples);
	}

	private void checkOrder(List<OutputRecord> all) {
		Map<String, Long> lastSeq = new HashMap<>();
		Set<String> outOfOrder = new TreeSet<>();
		all.stream()
			.sorted(Comparator.comparing(OutputRecord::cluster).thenComparingInt(OutputRecord::partition)
				.thenComparingLong(OutputRecord::offset))
			.forEach((record) -> {
				String key = record.cluster() + "/" + record.key();
				Long last = lastSeq.put(key, record.seq());
				if (last != null && last > record.seq()) {
					outOfOrder.add(String.valueOf(record.key()));
				}
			});
		this.facts.put("keys out of input order", outOfOrder.size());
		check(outOfOrder.isEmpty(), outOfOrder.size() + " key(s) whose output is not in input order "
				+ outOfOrder.stream().limit(5).toList());
	}

	private void checkHalted(Map<String, TransactionView> transactions) {
		if (this.haltedTransaction == null || this.haltedStep == null) {
			return;
		}
		String id = this.haltedTransaction;
		TransactionView view = transactions.get(id);
		int visible = (view != null) ? view.visible.values().stream().mapToInt(Integer::intValue).sum() : 0;
		this.facts.put("records of the killed transaction " + id + " (" + this.haltedStep + ")", visible);
		if (this.reportedHeuristics.contains(id)) {
			return; // its outcome is whatever the brokers did; the report says so
		}
		if (DECIDED_STEPS.contains(this.haltedStep)) {
			check(view != null, "transaction " + id + " was decided before the kill (" + this.haltedStep
					+ ") but none of its records is visible");
		}
		else {
			check(visible == 0 && this.markers.values().stream().noneMatch((m) -> m.contains(id)),
					"transaction " + id + " was killed undecided (" + this.haltedStep + ") but " + visible
							+ " of its records are visible");
		}
	}

	private void checkHeuristics() {
		this.facts.put("heuristic outcomes reported", this.reportedHeuristics.size());
		for (String id : this.expectedHeuristics) {
			check(this.reportedHeuristics.contains(id), "transaction " + id
					+ " must end as a heuristic outcome but the app did not report it (silent)");
		}
		for (String id : this.reportedHeuristics) {
			if (this.expectedHeuristics.contains(id)) {
				this.explained.add("transaction " + id + ": heuristic outcome expected and reported");
			}
			else {
				check(false, "unexpected heuristic outcome reported for transaction " + id);
			}
		}
	}

	private void checkResume(List<OutputRecord> all) {
		if (this.incarnations.size() < 2) {
			return;
		}
		Map<Integer, List<OutputRecord>> bySource = new TreeMap<>();
		for (OutputRecord record : all) {
			bySource.computeIfAbsent(record.srcPartition(), (p) -> new ArrayList<>()).add(record);
		}
		List<String> resumedAt = new ArrayList<>();
		for (Map.Entry<Integer, List<OutputRecord>> entry : bySource.entrySet()) {
			List<OutputRecord> records = entry.getValue();
			records.sort(Comparator.comparingLong(OutputRecord::srcOffset));
			int rank = 0;
			for (OutputRecord record : records) {
				int current = this.incarnations.indexOf(record.incarnation());
				if (current < rank) {
					check(false, "input " + entry.getKey() + ":" + record.srcOffset() + " was routed by '"
							+ record.incarnation() + "' after a later start had routed earlier input: a restart did not "
							+ "resume from the last committed offsets");
					return;
				}
				if (current > rank) {
					resumedAt.add(entry.getKey() + ":" + record.srcOffset() + "->" + record.incarnation());
					rank = current;
				}
			}
		}
		this.facts.put("restarts resumed at (input partition:offset)", resumedAt);
	}

	private void checkOffsets() {
		Map<Integer, Long> lastVisible = new HashMap<>();
		for (InputRecord record : this.input) {
			lastVisible.merge(record.partition(), record.offset(), Math::max);
		}
		long committedTotal = 0;
		for (Map.Entry<TopicPartition, Long> end : byName(this.inputEndOffsets).entrySet()) {
			TopicPartition partition = end.getKey();
			long committed = this.committedOffsets.getOrDefault(partition, -1L);
			Long last = lastVisible.get(partition.partition());
			long low = (last != null) ? last + 1 : 0;
			committedTotal += Math.max(committed, 0);
			if (last == null && committed < 0) {
				continue; // an empty partition: nothing to commit
			}
			check(committed >= low && committed <= end.getValue(), "committed offset of " + partition + " on "
					+ this.sourceCluster + " is " + committed + ", the input's last record ends at " + low
					+ " and the partition at " + end.getValue());
		}
		this.facts.put("committed source offsets on " + this.sourceCluster + " (sum)", committedTotal);
		this.facts.put("input end offsets on " + this.sourceCluster + " (sum)",
				this.inputEndOffsets.values().stream().mapToLong(Long::longValue).sum());
		this.leakedOffsets.forEach((cluster, count) -> check(count == 0, count
				+ " offset(s) of the group committed on " + cluster + " instead of " + this.sourceCluster));
	}

	private static Map<TopicPartition, Long> byName(Map<TopicPartition, Long> offsets) {
		Map<TopicPartition, Long> sorted = new TreeMap<>(
				Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
		sorted.putAll(offsets);
		return sorted;
	}

	private void check(boolean ok, String anomaly) {
		if (!ok) {
			this.anomalies.add(Objects.requireNonNull(anomaly));
		}
	}

}
