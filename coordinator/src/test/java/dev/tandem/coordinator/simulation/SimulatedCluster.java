package dev.tandem.coordinator.simulation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.jspecify.annotations.Nullable;

/**
 * One Kafka cluster as the simulation sees it: the broker-visible state of every transactional id
 * (producer id, epoch, the state of its current transaction) and the outcome of every Tandem
 * transaction's Kafka transaction on it (its marker: committed, aborted and by what, or open).
 * <p>
 * Kafka's rules, as the brokers apply them (transactions V2): {@code initTransactions()} aborts the
 * id's open transaction and raises the epoch, which fences every older producer of the id; a commit
 * or abort raises the epoch too, so a replayed commit of a finished transaction is refused; a
 * transaction open longer than the transaction timeout is aborted by the broker (epoch raised).
 * Epoch exhaustion (a new producer id) is not modelled. Not thread-safe.
 */
final class SimulatedCluster {

	/** The state of an id's current (last) transaction. */
	enum TransactionState {
		EMPTY, ONGOING, COMMITTED, ABORTED
	}

	/** Who aborted a Kafka transaction. */
	enum AbortCause {
		/** The producer aborted it ({@code abortTransaction()}). */
		CLIENT,
		/** {@code initTransactions()} of another producer of the id (a fence, a restart, a re-init). */
		FENCE,
		/** The broker, at the transaction timeout. */
		TIMEOUT
	}

	/**
	 * What a producer of an id knows after {@code initTransactions()} or its last commit/abort.
	 * @param transactionalId the id
	 * @param producerId the producer id
	 * @param epoch the producer epoch
	 */
	record Handle(String transactionalId, long producerId, int epoch) {
	}

	/**
	 * The outcome of one Tandem transaction's Kafka transaction on this cluster, as its marker reads.
	 * @param committed whether it committed
	 * @param cause why it aborted, null when committed
	 * @param by the run that caused the abort (fence or client), or "broker"
	 */
	record Outcome(boolean committed, @Nullable AbortCause cause, String by) {
	}

	/** The marker read of a participant. */
	enum Marker {
		COMMITTED, ABORTED, OPEN
	}

	private static final class IdState {

		long producerId;

		int epoch = -1;

		TransactionState state = TransactionState.EMPTY;

		@Nullable String tandemTransaction;

		long startedAtMs;

	}

	private final String name;

	private final long transactionTimeoutMs;

	private final Map<String, IdState> ids = new TreeMap<>();

	private final Map<String, Outcome> outcomes = new HashMap<>();

	private long nextProducerId = 1000;

	SimulatedCluster(String name, long transactionTimeoutMs) {
		this.name = name;
		this.transactionTimeoutMs = transactionTimeoutMs;
	}

	String name() {
		return this.name;
	}

	/** {@code initTransactions()}: aborts the open transaction (a fence) and raises the epoch. */
	Handle initTransactions(String transactionalId, String by) {
		IdState id = this.ids.computeIfAbsent(transactionalId, (key) -> {
			IdState created = new IdState();
			created.producerId = this.nextProducerId++;
			return created;
		});
		if (id.state == TransactionState.ONGOING) {
			finish(id, false, AbortCause.FENCE, by);
		}
		id.epoch++;
		return new Handle(transactionalId, id.producerId, id.epoch);
	}

	private boolean current(Handle handle, IdState id) {
		return id.producerId == handle.producerId() && id.epoch == handle.epoch();
	}

	/** A send in the Tandem transaction (begins the Kafka transaction); false when the producer is fenced. */
	boolean send(Handle handle, String tandemTransaction, long nowMs) {
		IdState id = this.ids.get(handle.transactionalId());
		if (id == null || !current(handle, id)) {
			return false;
		}
		if (id.state != TransactionState.ONGOING) {
			id.state = TransactionState.ONGOING;
			id.tandemTransaction = tandemTransaction;
			id.startedAtMs = nowMs;
			return true;
		}
		return tandemTransaction.equals(id.tandemTransaction);
	}

	/** {@code flush()} and the send results: whether the transaction is still open under this producer. */
	boolean flush(Handle handle, String tandemTransaction) {
		IdState id = this.ids.get(handle.transactionalId());
		return id != null && current(handle, id) && id.state == TransactionState.ONGOING
				&& tandemTransaction.equals(id.tandemTransaction);
	}

	/** {@code commitTransaction()}: the producer's next handle, or null when fenced or nothing is open. */
	@Nullable Handle commit(Handle handle) {
		IdState id = this.ids.get(handle.transactionalId());
		if (id == null || !current(handle, id) || id.state != TransactionState.ONGOING) {
			return null;
		}
		finish(id, true, null, "");
		id.epoch++;
		return new Handle(handle.transactionalId(), id.producerId, id.epoch);
	}

	/** {@code abortTransaction()}: the producer's next handle, or null when fenced. */
	@Nullable Handle abort(Handle handle, String by) {
		IdState id = this.ids.get(handle.transactionalId());
		if (id == null || !current(handle, id)) {
			return null;
		}
		if (id.state == TransactionState.ONGOING) {
			finish(id, false, AbortCause.CLIENT, by);
			id.epoch++;
		}
		return new Handle(handle.transactionalId(), id.producerId, id.epoch);
	}

	/**
	 * A resumed commit by producer id and epoch (Tandem's {@code ResumeByEpochProtocol}): commits when the id's
	 * open transaction is still the one with that producer id and epoch; refused otherwise.
	 */
	boolean resumeCommit(String transactionalId, long producerId, int epoch, String tandemTransaction) {
		IdState id = this.ids.get(transactionalId);
		if (id == null || id.producerId != producerId || id.epoch != epoch || id.state != TransactionState.ONGOING
				|| !tandemTransaction.equals(id.tandemTransaction)) {
			return false;
		}
		finish(id, true, null, "");
		id.epoch++;
		return true;
	}

	/** The broker's transaction timeout: aborts every transaction open longer than it. */
	void expireTransactions(long nowMs) {
		for (IdState id : this.ids.values()) {
			if (id.state == TransactionState.ONGOING && nowMs - id.startedAtMs > this.transactionTimeoutMs) {
				finish(id, false, AbortCause.TIMEOUT, "broker");
				id.epoch++;
			}
		}
	}

	private void finish(IdState id, boolean committed, @Nullable AbortCause cause, String by) {
		id.state = committed ? TransactionState.COMMITTED : TransactionState.ABORTED;
		String transaction = id.tandemTransaction;
		if (transaction != null) {
			this.outcomes.put(transaction, new Outcome(committed, cause, by));
		}
	}

	/** The ids starting with a prefix that have an open transaction ({@code listTransactions}, state ONGOING). */
	List<String> ongoing(String prefix) {
		List<String> found = new ArrayList<>();
		for (Map.Entry<String, IdState> entry : this.ids.entrySet()) {
			if (entry.getKey().startsWith(prefix) && entry.getValue().state == TransactionState.ONGOING) {
				found.add(entry.getKey());
			}
		}
		return found;
	}

	/** A {@code read_committed} read of a Tandem transaction's marker on this cluster. */
	Marker marker(String tandemTransaction) {
		Outcome outcome = this.outcomes.get(tandemTransaction);
		if (outcome == null) {
			return Marker.OPEN;
		}
		return outcome.committed() ? Marker.COMMITTED : Marker.ABORTED;
	}

	/** The outcome of a Tandem transaction here, null while open or never sent. */
	@Nullable Outcome outcome(String tandemTransaction) {
		return this.outcomes.get(tandemTransaction);
	}

}
