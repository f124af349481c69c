package dev.tandem.coordinator.simulation;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.tandem.coordinator.simulation.SimulatedCluster.Handle;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.InstanceLease;

/**
 * One run (process) of an app instance: what {@code InstanceLeaseKeeper}, {@code TransactionRecovery},
 * {@code ParticipantPool} and {@code CrossClusterTransaction} hold in memory, cut where the code can be
 * paused between two calls. The simulation moves it one step at a time. Not thread-safe.
 */
final class SimulatedRun {

	/** Where the run is in its life. */
	enum Phase {
		/** {@code InstanceLeaseKeeper.acquire()}: waiting for the previous run's lease. */
		ACQUIRING,
		/** {@code TransactionRecovery.recoverAtStart}: committing its decided transactions by resuming them. */
		RECOVERING,
		/** {@code ParticipantPool.start}: {@code initTransactions()} on every id of its slots. */
		INITIALIZING,
		RUNNING,
		/** Killed: takes no step again; its producers are gone, their open transactions stay. */
		CRASHED,
		/** Start-up failed (a duplicate, or the lease stayed claimed): takes no step again. */
		FAILED
	}

	/** Where one slot's transaction is. */
	enum TxnPhase {
		ACTIVE, PREPARED, DECIDED, ABORTING, RESOLVING
	}

	/** One slot's cross-cluster transaction. */
	static final class Txn {

		final String id;

		final List<String> clusters;

		int sent;

		TxnPhase phase = TxnPhase.ACTIVE;

		@Nullable Decision decision;

		final Set<String> commitAttempted = new LinkedHashSet<>();

		boolean commitFailed;

		@Nullable Recovery recovery;

		Txn(String id, List<String> clusters) {
			this.id = id;
			this.clusters = clusters;
		}

	}

	/** {@code TransactionRecovery.recover(decision)}, one participant per step. */
	static final class Recovery {

		final Decision decision;

		int next;

		final List<String> committed = new ArrayList<>();

		final List<String> aborted = new ArrayList<>();

		Recovery(Decision decision) {
			this.decision = decision;
		}

	}

	/** Where a takeover is ({@code TransactionRecovery.takeOver} and {@code ParticipantPool.fence}). */
	enum TakeoverPhase {
		READ, RECOVER, CHECK, LIST, FENCE, RELEASE
	}

	/** One takeover of a claimed instance. */
	static final class Takeover {

		final InstanceLease claimed;

		TakeoverPhase phase = TakeoverPhase.READ;

		final Deque<Decision> decisions = new ArrayDeque<>();

		@Nullable Recovery current;

		int cluster;

		final Deque<String> toFence = new ArrayDeque<>();

		Takeover(InstanceLease claimed) {
			this.claimed = claimed;
		}

	}

	final String instanceId;

	final String incarnation;

	final String owner;

	Phase phase = Phase.ACQUIRING;

	boolean paused;

	/** This run's clock minus the decision log's, milliseconds (skew). */
	long clockOffsetMs;

	long acquireDeadlineMs;

	@Nullable InstanceLease firstSeen;

	/**
	 * The incarnations seen holding the lease before this run took it, and with run histories every run in the
	 * lease's history (InstanceLeaseKeeper.previousRuns).
	 */
	final Set<String> previousRuns = new LinkedHashSet<>();

	/** InstanceLeaseKeeper.tookFromDeadRun: a holder seen that neither released the lease nor was taken over. */
	boolean tookFromDeadRun;

	/** The world's step at which this run took its lease, or -1. */
	long acquiredAtStep = -1;

	@Nullable InstanceLease lastRenewed;

	/** The decision log's clock minus this run's, as of the last renewal (InstanceLeaseKeeper.leaderOffsetMs). */
	long leaderOffsetMs;

	long nextRenewMs;

	long nextWatchMs;

	@Nullable String lostTo;

	/** Start-up recovery: null until the in-doubt list is read. */
	@Nullable Deque<Decision> startDecisions;

	@Nullable Recovery startRecovery;

	final Deque<String[]> toInit = new ArrayDeque<>();

	/** The producers this run holds, by transactional id. */
	final Map<String, Handle> producers = new HashMap<>();

	final Txn[] slots;

	@Nullable Takeover takeover;

	SimulatedRun(String idPrefix, String instanceId, String incarnation, int slots) {
		this.instanceId = instanceId;
		this.incarnation = incarnation;
		this.owner = idPrefix + "." + instanceId;
		this.slots = new Txn[slots];
	}

	/** The run's clock, milliseconds. */
	long localNow(long nowMs) {
		return nowMs + this.clockOffsetMs;
	}

	/** The decision log's time as this run estimates it (InstanceLeaseKeeper.leaderNow). */
	long leaderNow(long nowMs) {
		return localNow(nowMs) + this.leaderOffsetMs;
	}

	boolean alive() {
		return this.phase != Phase.CRASHED && this.phase != Phase.FAILED;
	}

	boolean canStep() {
		return alive() && !this.paused;
	}

	boolean busy() {
		if (this.takeover != null || this.phase == Phase.RECOVERING || this.phase == Phase.INITIALIZING) {
			return true;
		}
		for (Txn txn : this.slots) {
			if (txn != null) {
				return true;
			}
		}
		return false;
	}

	@Override
	public String toString() {
		return this.incarnation;
	}

}
