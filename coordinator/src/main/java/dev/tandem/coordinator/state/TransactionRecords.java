package dev.tandem.coordinator.state;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import org.jspecify.annotations.Nullable;

/**
 * The transaction records of a {@link DecisionTable} and their indexes, changed in one place
 * ({@link #put}, {@link #remove}): by transaction id; DECIDED records by owner, oldest decision
 * first (recovery); COMPLETED and ABORTED records by finish time (purging); decided and aborted
 * counts per owner, sorted so that one app's owners are a range (quotas); counts per state.
 * <p>
 * Holds no rules: the table decides what to put and remove.
 * <p>
 * Not thread-safe: the table serialises access.
 *
 * @since 0.1.0
 */
final class TransactionRecords {

	private static final Comparator<Key> KEY_ORDER = Comparator.comparingLong(Key::timeMs)
		.thenComparing(Key::transactionId);

	private final Map<String, TransactionRecord> records = new HashMap<>();

	private final Map<String, NavigableSet<Key>> inDoubtByOwner = new HashMap<>();

	/** Decided and aborted records per owner, sorted so that one app's owners are a range. */
	private final NavigableMap<String, OwnerCounts> countsByOwner = new TreeMap<>();

	private final NavigableSet<Key> finished = new TreeSet<>(KEY_ORDER);

	private int decided;

	private int completed;

	private int aborted;

	/**
	 * Returns the record of one transaction id.
	 * @param transactionId the transaction id
	 * @return the record, or {@code null} when there is none
	 */
	@Nullable TransactionRecord get(String transactionId) {
		return this.records.get(transactionId);
	}

	/**
	 * Returns every record, in no particular order.
	 * @return an unmodifiable view; do not keep it across mutations
	 */
	Collection<TransactionRecord> all() {
		return Collections.unmodifiableCollection(this.records.values());
	}

	/**
	 * Returns the number of records per state.
	 * @return the counts
	 */
	DecisionTable.Counts counts() {
		return new DecisionTable.Counts(this.decided, this.completed, this.aborted);
	}

	/**
	 * Lists one owner's DECIDED records' decisions, oldest decision first.
	 * @param owner the owning app instance
	 * @return the decisions, possibly empty
	 */
	List<Decision> inDoubt(String owner) {
		NavigableSet<Key> keys = this.inDoubtByOwner.get(owner);
		if (keys == null) {
			return Collections.emptyList();
		}
		List<Decision> result = new ArrayList<>(keys.size());
		for (Key key : keys) {
			result.add(requireDecision(this.records.get(key.transactionId())));
		}
		return result;
	}

	/**
	 * Lists the DECIDED records' decisions of every owner {@code <id-prefix>.*}, oldest first.
	 * @param idPrefix the app's id prefix
	 * @return the decisions, possibly empty
	 */
	List<Decision> appInDoubt(String idPrefix) {
		NavigableSet<Key> keys = new TreeSet<>(KEY_ORDER);
		this.inDoubtByOwner.forEach((owner, ownerKeys) -> {
			if (owner.startsWith(idPrefix + ".")) {
				keys.addAll(ownerKeys);
			}
		});
		List<Decision> result = new ArrayList<>(keys.size());
		for (Key key : keys) {
			result.add(requireDecision(this.records.get(key.transactionId())));
		}
		return result;
	}

	/**
	 * Returns the DECIDED records of the owners a test accepts.
	 * @param owners which owners
	 * @return the records, a copy
	 */
	List<TransactionRecord> decidedOf(Predicate<String> owners) {
		List<TransactionRecord> result = new ArrayList<>();
		this.inDoubtByOwner.forEach((owner, keys) -> {
			if (owners.test(owner)) {
				keys.forEach((key) -> result.add(requireRecord(key.transactionId())));
			}
		});
		return result;
	}

	/**
	 * Removes the COMPLETED and ABORTED records that finished before a time.
	 * @param cutoff the time, epoch milliseconds
	 * @return the number of removed records
	 */
	int removeFinishedBefore(long cutoff) {
		int count = 0;
		while (!this.finished.isEmpty() && this.finished.first().timeMs() < cutoff) {
			remove(requireRecord(this.finished.first().transactionId()));
			count++;
		}
		return count;
	}

	/**
	 * Returns the number of DECIDED records of the owners a grant covers; 0 for a grant of every
	 * owner.
	 * @param grant the grant
	 * @return the count, zero or more
	 */
	int openDecisions(Grant grant) {
		return sumOverOwners(grant, (counts) -> counts.decided);
	}

	/**
	 * Returns the number of ABORTED records of the owners a grant covers; 0 for a grant of every
	 * owner.
	 * @param grant the grant
	 * @return the count, zero or more
	 */
	int abortedRecords(Grant grant) {
		return sumOverOwners(grant, (counts) -> counts.aborted);
	}

	/** Sums one count over the owners a grant's prefixes cover (as {@link Grant#coversOwner}). */
	private int sumOverOwners(Grant grant, ToIntFunction<OwnerCounts> count) {
		int sum = 0;
		for (String prefix : grant.ownerPrefixes()) {
			for (OwnerCounts counts : Grant.ownersBelow(this.countsByOwner, prefix).values()) {
				sum += count.applyAsInt(counts);
			}
			OwnerCounts exact = this.countsByOwner.get(prefix);
			sum += (exact != null) ? count.applyAsInt(exact) : 0;
		}
		return sum;
	}

	/**
	 * Removes every record.
	 */
	void clear() {
		this.records.clear();
		this.inDoubtByOwner.clear();
		this.countsByOwner.clear();
		this.finished.clear();
		this.decided = 0;
		this.completed = 0;
		this.aborted = 0;
	}

	/**
	 * Adds a record (its id has none) and indexes it.
	 * @param record the record
	 */
	void put(TransactionRecord record) {
		this.records.put(record.transactionId(), record);
		if (record.state() == DecisionState.DECIDED) {
			this.inDoubtByOwner.computeIfAbsent(record.owner(), (owner) -> new TreeSet<>(KEY_ORDER))
				.add(inDoubtKey(record));
		}
		else {
			this.finished.add(new Key(record.finishedAtMs(), record.transactionId()));
		}
		count(record.state(), 1);
		countOwner(record, 1);
	}

	private void countOwner(TransactionRecord record, int delta) {
		if (record.state() == DecisionState.COMPLETED) {
			return;
		}
		OwnerCounts counts = this.countsByOwner.computeIfAbsent(record.owner(), (owner) -> new OwnerCounts());
		if (record.state() == DecisionState.DECIDED) {
			counts.decided += delta;
		}
		else {
			counts.aborted += delta;
		}
		if (counts.decided == 0 && counts.aborted == 0) {
			this.countsByOwner.remove(record.owner());
		}
	}

	/**
	 * Removes a record and its index entries.
	 * @param record the record, as stored
	 */
	void remove(TransactionRecord record) {
		this.records.remove(record.transactionId());
		if (record.state() == DecisionState.DECIDED) {
			NavigableSet<Key> keys = this.inDoubtByOwner.get(record.owner());
			if (keys != null) {
				keys.remove(inDoubtKey(record));
				if (keys.isEmpty()) {
					this.inDoubtByOwner.remove(record.owner());
				}
			}
		}
		else {
			this.finished.remove(new Key(record.finishedAtMs(), record.transactionId()));
		}
		count(record.state(), -1);
		countOwner(record, -1);
	}

	private void count(DecisionState state, int delta) {
		switch (state) {
			case DECIDED -> this.decided += delta;
			case COMPLETED -> this.completed += delta;
			case ABORTED -> this.aborted += delta;
			default -> throw new IllegalStateException("Unexpected state " + state);
		}
	}

	private static Key inDoubtKey(TransactionRecord record) {
		return new Key(requireDecision(record).decidedAtMs(), record.transactionId());
	}

	static Decision requireDecision(@Nullable TransactionRecord record) {
		if (record == null || record.decision() == null) {
			throw new IllegalStateException("Index out of sync with records: " + record);
		}
		return record.decision();
	}

	private record Key(long timeMs, String transactionId) {

	}

	private static final class OwnerCounts {

		private int decided;

		private int aborted;

	}

	private TransactionRecord requireRecord(String transactionId) {
		TransactionRecord record = this.records.get(transactionId);
		if (record == null) {
			throw new IllegalStateException("Index out of sync with records: no record of " + transactionId);
		}
		return record;
	}

}
