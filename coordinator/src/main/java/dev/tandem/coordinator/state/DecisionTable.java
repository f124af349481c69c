package dev.tandem.coordinator.state;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import org.jspecify.annotations.Nullable;

/**
 * The coordinator's state: one {@link TransactionRecord} per transaction id (DECIDED,
 * COMPLETED or ABORTED), indexed by owner for recovery and by finish time for purging.
 * <p>
 * Rules (two-phase commit with presumed abort, DESIGN.md §2):
 * <ul>
 * <li>decide: creates a DECIDED record; a retried decide returns the stored decision
 * unchanged; a decide of an aborted id is refused ({@link OperationResult.AbortConflict}).</li>
 * <li>complete: DECIDED becomes COMPLETED; a no-op for any other state, including an unknown
 * id.</li>
 * <li>abort: an unknown id becomes ABORTED; a no-op when the id has a record, so an abort
 * never overrides a decision.</li>
 * <li>purge: removes COMPLETED and ABORTED records that finished more than the retention
 * period before the command's time. A purged id reads as UNKNOWN again.</li>
 * <li>authorization: a command applied with a {@link Grant} changes only records whose owner
 * the grant covers; a complete of another owner's record is a no-op (the coordinator refuses
 * such commands before they reach the log; this rule covers a record created between that
 * check and the apply).</li>
 * </ul>
 * Applying the same commands in the same order gives the same table on every replica: the
 * table reads no clock of its own.
 * <p>
 * Not thread-safe: the owner serialises access (the Ratis adapter holds a read-write lock).
 *
 * @since 0.1.0
 */
public final class DecisionTable {

	private static final Comparator<Key> KEY_ORDER = Comparator.comparingLong(Key::timeMs)
		.thenComparing(Key::transactionId);

	private final Map<String, TransactionRecord> records = new HashMap<>();

	private final Map<String, NavigableSet<Key>> inDoubtByOwner = new HashMap<>();

	private final NavigableSet<Key> finished = new TreeSet<>(KEY_ORDER);

	private int decided;

	private int completed;

	private int aborted;

	/**
	 * Applies every operation of a command, in order.
	 * @param command the command
	 * @return one result per operation, in the command's order
	 */
	public List<OperationResult> apply(Command command) {
		return apply(command, Grant.ALL);
	}

	/**
	 * Applies every operation of a command, in order, for a caller with the given grant.
	 * @param command the command
	 * @param grant what the caller that sent it may act for
	 * @return one result per operation, in the command's order
	 */
	public List<OperationResult> apply(Command command, Grant grant) {
		List<OperationResult> results = new ArrayList<>(command.operations().size());
		for (Operation operation : command.operations()) {
			if (!grant.isAll() && operation instanceof Operation.Complete complete) {
				TransactionRecord existing = this.records.get(complete.transactionId());
				if (existing != null && !grant.coversOwner(existing.owner())) {
					results.add(new OperationResult.StateAfter(existing.state()));
					continue;
				}
			}
			results.add(apply(operation, command.atMs()));
		}
		return results;
	}

	/**
	 * Applies one operation.
	 * @param operation the operation
	 * @param atMs the command's time, epoch milliseconds
	 * @return the result
	 */
	public OperationResult apply(Operation operation, long atMs) {
		if (operation instanceof Operation.Decide decide) {
			return decide(decide.decision());
		}
		if (operation instanceof Operation.Complete complete) {
			return new OperationResult.StateAfter(complete(complete.transactionId(), atMs));
		}
		if (operation instanceof Operation.Abort abort) {
			return new OperationResult.StateAfter(abort(abort.transactionId(), abort.owner(), atMs));
		}
		if (operation instanceof Operation.Purge purge) {
			return new OperationResult.Purged(purge(atMs, purge.retentionMs()));
		}
		throw new IllegalArgumentException("Unknown operation " + operation);
	}

	/**
	 * Records a decision (idempotent).
	 * @param decision the decision
	 * @return {@link OperationResult.Decided} with the stored decision, or
	 *     {@link OperationResult.AbortConflict} when the id is aborted
	 */
	public OperationResult decide(Decision decision) {
		TransactionRecord existing = this.records.get(decision.transactionId());
		if (existing == null) {
			put(TransactionRecord.decided(decision));
			return new OperationResult.Decided(decision, true);
		}
		if (existing.state() == DecisionState.ABORTED) {
			return new OperationResult.AbortConflict(decision.transactionId());
		}
		return new OperationResult.Decided(requireDecision(existing), false);
	}

	/**
	 * Marks a decided transaction completed (idempotent; a no-op for other states).
	 * @param transactionId the transaction id
	 * @param atMs the completion time, epoch milliseconds
	 * @return the state after the call
	 */
	public DecisionState complete(String transactionId, long atMs) {
		TransactionRecord existing = this.records.get(transactionId);
		if (existing == null) {
			return DecisionState.UNKNOWN;
		}
		if (existing.state() == DecisionState.DECIDED) {
			remove(existing);
			put(existing.completed(atMs));
			return DecisionState.COMPLETED;
		}
		return existing.state();
	}

	/**
	 * Records an abort of an unknown transaction id (a no-op when it has a record).
	 * @param transactionId the transaction id
	 * @param owner the owning app instance
	 * @param atMs the abort time, epoch milliseconds
	 * @return the state after the call: {@link DecisionState#ABORTED}, or the state of the
	 *     record that was already there
	 */
	public DecisionState abort(String transactionId, String owner, long atMs) {
		TransactionRecord existing = this.records.get(transactionId);
		if (existing != null) {
			return existing.state();
		}
		put(TransactionRecord.aborted(transactionId, owner, atMs));
		return DecisionState.ABORTED;
	}

	/**
	 * Removes completed and aborted records that finished before {@code nowMs - retentionMs}.
	 * @param nowMs the command's time, epoch milliseconds
	 * @param retentionMs the retention period in milliseconds, zero or more
	 * @return the number of removed records
	 */
	public int purge(long nowMs, long retentionMs) {
		long cutoff = nowMs - retentionMs;
		int count = 0;
		Iterator<Key> iterator = this.finished.iterator();
		while (iterator.hasNext()) {
			Key key = iterator.next();
			if (key.timeMs() >= cutoff) {
				break;
			}
			iterator.remove();
			TransactionRecord removed = this.records.remove(key.transactionId());
			if (removed != null) {
				count(removed.state(), -1);
			}
			count++;
		}
		return count;
	}

	/**
	 * Returns the state of one transaction id.
	 * @param transactionId the transaction id
	 * @return the state, {@link DecisionState#UNKNOWN} when there is no record
	 */
	public DecisionState state(String transactionId) {
		TransactionRecord existing = this.records.get(transactionId);
		return (existing != null) ? existing.state() : DecisionState.UNKNOWN;
	}

	/**
	 * Returns the record of one transaction id.
	 * @param transactionId the transaction id
	 * @return the record, or {@code null} when there is none
	 */
	public @Nullable TransactionRecord record(String transactionId) {
		return this.records.get(transactionId);
	}

	/**
	 * Lists one owner's decided but not completed decisions, oldest decision first (by
	 * {@link Decision#decidedAtMs()}, then transaction id).
	 * @param owner the owning app instance
	 * @return the in-doubt decisions, possibly empty
	 */
	public List<Decision> inDoubt(String owner) {
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
	 * Returns the number of records per state.
	 * @return the counts
	 */
	public Counts counts() {
		return new Counts(this.decided, this.completed, this.aborted);
	}

	/**
	 * Returns every record, in no particular order (for snapshots).
	 * @return an unmodifiable view of the records; do not keep it across mutations
	 */
	public Collection<TransactionRecord> records() {
		return Collections.unmodifiableCollection(this.records.values());
	}

	/**
	 * Replaces the whole content of this table (loading a snapshot).
	 * @param records the records
	 * @throws IllegalArgumentException if two records have the same transaction id
	 */
	public void replaceWith(Collection<TransactionRecord> records) {
		clear();
		for (TransactionRecord record : records) {
			if (this.records.containsKey(record.transactionId())) {
				clear();
				throw new IllegalArgumentException("Duplicate record for " + record.transactionId());
			}
			put(record);
		}
	}

	/**
	 * Removes every record.
	 */
	public void clear() {
		this.records.clear();
		this.inDoubtByOwner.clear();
		this.finished.clear();
		this.decided = 0;
		this.completed = 0;
		this.aborted = 0;
	}

	private void put(TransactionRecord record) {
		this.records.put(record.transactionId(), record);
		if (record.state() == DecisionState.DECIDED) {
			this.inDoubtByOwner.computeIfAbsent(record.owner(), (owner) -> new TreeSet<>(KEY_ORDER))
				.add(inDoubtKey(record));
		}
		else {
			this.finished.add(new Key(record.finishedAtMs(), record.transactionId()));
		}
		count(record.state(), 1);
	}

	private void remove(TransactionRecord record) {
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

	private static Decision requireDecision(@Nullable TransactionRecord record) {
		if (record == null || record.decision() == null) {
			throw new IllegalStateException("Index out of sync with records: " + record);
		}
		return record.decision();
	}

	private record Key(long timeMs, String transactionId) {

	}

	/**
	 * The number of records per state.
	 *
	 * @param decided the number of DECIDED (in-doubt) records
	 * @param completed the number of COMPLETED records
	 * @param aborted the number of ABORTED records
	 * @since 0.1.0
	 */
	public record Counts(int decided, int completed, int aborted) {

		/**
		 * Returns the number of records of every state.
		 * @return the total
		 */
		public int total() {
			return this.decided + this.completed + this.aborted;
		}

	}

}
