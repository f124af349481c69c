package dev.tandem.coordinator.simulation;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.tandem.coordinator.simulation.SimulatedCluster.AbortCause;
import dev.tandem.coordinator.simulation.SimulatedCluster.Outcome;
import dev.tandem.coordinator.state.DecisionTable;
import dev.tandem.coordinator.state.Operation;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;

/**
 * What the runs of a simulation share: the decision log (the real {@link DecisionTable}), the clusters, the log's and brokers' clock, every Tandem
 * transaction begun and the heuristic outcomes reported; and the invariants over them. Not thread-safe.
 */
final class SimulatedWorld {

	static final String PREFIX = "app";

	final SimulationSettings settings;

	final DecisionTable table = new DecisionTable();

	final List<SimulatedCluster> clusters = new ArrayList<>();

	/** Every Tandem transaction begun, with its clusters. */
	final Map<String, List<String>> transactions = new LinkedHashMap<>();

	final Set<String> reportedHeuristic = new HashSet<>();

	/** The decision log's and the brokers' clock, epoch milliseconds. */
	long now = 1_000_000;

	/** The number of steps taken so far. */
	long step;

	/** The runs that crashed or whose start-up failed, with the step at which they went down. */
	final Map<String, Long> down = new LinkedHashMap<>();

	/** A violation found inside a step (checked with the others after it), or null. */
	@Nullable String found;

	int transactionCount;

	SimulatedWorld(SimulationSettings settings) {
		this.settings = settings;
		for (int i = 1; i <= settings.clusters(); i++) {
			this.clusters.add(new SimulatedCluster("c" + i, settings.transactionTimeoutMs()));
		}
	}

	long renewInterval() {
		return this.settings.leaseTimeoutMs() / 3;
	}

	SimulatedCluster cluster(String name) {
		return this.clusters.get(Integer.parseInt(name.substring(1)) - 1);
	}

	/** The transactional id of a run's slot on a cluster ({@code TransactionalIds.of}, per run or shared). */
	String transactionalId(SimulatedRun run, String cluster, int slot) {
		return this.settings.perRunTransactionalIds()
				? PREFIX + "." + cluster + "." + run.instanceId + "." + slot + "." + run.incarnation
				: PREFIX + "." + cluster + "." + run.instanceId + "." + slot;
	}

	/**
	 * The open transactions of an instance on a cluster that belong to one of the given runs
	 * ({@code ParticipantPool.fence} and its start-up): with shared ids, every one of the instance.
	 */
	List<String> ongoingOfRuns(SimulatedCluster cluster, String instanceId, Set<String> runs) {
		List<String> ids = cluster.ongoing(PREFIX + "." + cluster.name() + "." + instanceId + ".");
		if (!this.settings.perRunTransactionalIds()) {
			return ids;
		}
		return ids.stream().filter((id) -> runs.contains(id.substring(id.lastIndexOf('.') + 1))).toList();
	}

	/** Time passes: the brokers abort what outlived the transaction timeout. */
	void advance(long deltaMs) {
		this.now += deltaMs;
		for (SimulatedCluster cluster : this.clusters) {
			cluster.expireTransactions(this.now);
		}
	}

	/**
	 * A take or renewal through the log ({@code DecisionLog.renewLease}, then {@code renewHeldLease} once the
	 * run held the lease, when the variant has it).
	 * @return the lease after, or null when a renewal of a held lease finds none
	 */
	@Nullable InstanceLease renewLease(SimulatedRun run) {
		boolean held = this.settings.leaseNeverReturns() && run.lastRenewed != null;
		return this.table.renewLease(new Operation.RenewLease(PREFIX, run.instanceId, run.incarnation,
				this.settings.leaseTimeoutMs(), held), this.now);
	}

	/** The lease of an owner in the log, or null. */
	@Nullable InstanceLease leaseOf(String owner) {
		for (InstanceLease lease : this.table.leases(PREFIX)) {
			if (lease.owner().equals(owner)) {
				return lease;
			}
		}
		return null;
	}

	/**
	 * Checked when a run's start-up is done (with per-run transactional ids): no transaction of a run of its
	 * instance that went down before this run took the lease is still open on any cluster (it would pin the
	 * last stable offset until the transaction timeout, though its run never decides again; the runs that
	 * take the lease after it are the ones to fence it).
	 */
	void checkNothingLeftOpen(SimulatedRun run) {
		for (SimulatedCluster cluster : this.clusters) {
			for (String id : cluster.ongoing(PREFIX + "." + cluster.name() + "." + run.instanceId + ".")) {
				String of = id.substring(id.lastIndexOf('.') + 1);
				Long wentDown = this.down.get(of);
				if (this.found == null && wentDown != null && wentDown < run.acquiredAtStep) {
					this.found = "transaction " + id + " of run " + of + ", down before run " + run
							+ " took the lease, is still open after " + run + " started: nobody fences it before the "
							+ "transaction timeout";
				}
			}
		}
	}

	/** The invariants checked after every step: the first one broken, or null. */
	@Nullable String check() {
		if (this.found != null) {
			return this.found;
		}
		for (Map.Entry<String, List<String>> entry : this.transactions.entrySet()) {
			String id = entry.getKey();
			DecisionState state = this.table.state(id);
			boolean decided = state == DecisionState.DECIDED || state == DecisionState.COMPLETED;
			boolean everywhere = true;
			for (String cluster : entry.getValue()) {
				Outcome outcome = cluster(cluster).outcome(id);
				if (outcome == null) {
					everywhere = false;
				}
				else if (outcome.committed() && !decided) {
					return "undecided transaction " + id + " is visible on " + cluster + " (decision " + state + ")";
				}
				else if (!outcome.committed()) {
					everywhere = false;
					if (decided && outcome.cause() != AbortCause.TIMEOUT) {
						return "decided transaction " + id + " was aborted on " + cluster + " by " + outcome.cause()
								+ " (" + outcome.by() + "): a heuristic outcome by a fence, not by the transaction timeout";
					}
				}
			}
			if (state == DecisionState.COMPLETED && !everywhere && !this.reportedHeuristic.contains(id)) {
				return "transaction " + id + " is completed, visible on a strict subset of " + entry.getValue()
						+ ", and no heuristic outcome was reported";
			}
		}
		return null;
	}

	/** A decided commit is never lost: committed everywhere, or reported as a heuristic outcome. */
	@Nullable String finalCheck() {
		for (Map.Entry<String, List<String>> entry : this.transactions.entrySet()) {
			String id = entry.getKey();
			DecisionState state = this.table.state(id);
			if (state != DecisionState.DECIDED && state != DecisionState.COMPLETED) {
				continue;
			}
			boolean everywhere = entry.getValue().stream().allMatch((cluster) -> {
				Outcome outcome = cluster(cluster).outcome(id);
				return outcome != null && outcome.committed();
			});
			if (!everywhere && !this.reportedHeuristic.contains(id)) {
				return "decided transaction " + id + " is lost: not committed on every cluster of "
						+ entry.getValue() + " and no heuristic outcome was reported";
			}
		}
		return null;
	}

}
