package dev.tandem.coordinator.simulation;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.tandem.coordinator.simulation.SimulatedCluster.AbortCause;
import dev.tandem.coordinator.simulation.SimulatedCluster.Handle;
import dev.tandem.coordinator.simulation.SimulatedCluster.Outcome;
import dev.tandem.coordinator.simulation.SimulatedRun.Phase;
import dev.tandem.coordinator.simulation.SimulatedRun.Recovery;
import dev.tandem.coordinator.simulation.SimulatedRun.Takeover;
import dev.tandem.coordinator.simulation.SimulatedRun.TakeoverPhase;
import dev.tandem.coordinator.simulation.SimulatedRun.Txn;
import dev.tandem.coordinator.simulation.SimulatedRun.TxnPhase;
import dev.tandem.coordinator.state.DecisionTable;
import dev.tandem.coordinator.state.Operation;
import dev.tandem.coordinator.state.OperationResult;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;

/**
 * A deterministic simulation of Tandem's two-phase commit with leases and takeover (issue 26 item 5):
 * runs of an app's instances, the real {@link DecisionTable} as the decision log, Kafka transactions as
 * their broker-visible states ({@link SimulatedCluster}), one clock for the log and the brokers and a
 * skewed one per run. Each step is one action the scheduler picks among those enabled: an environment
 * action (advance time, crash, pause, resume, skew a clock, restart an instance) or one step of a run,
 * cut where the code makes one call (renew, claim, read, resume a participant, re-check, list, fence,
 * release, begin, send, prepare, decide, commit, abort). The invariants are checked after every step;
 * after the random steps the world settles (everyone resumes, crashed instances restart, time goes on)
 * and the final invariants are checked. The same seed gives the same schedule. Not thread-safe.
 */
final class Simulation {

	static final String PREFIX = "app";

	private static final long[] ADVANCES = { 100, 500, 1000, 2000, 4000 };

	private static final int MAX_RUNS_PER_INSTANCE = 4;

	private static final int SETTLE_STEPS = 3000;

	/** One enabled action: its label (the trace, and the key of an explicit schedule) and weight. */
	private record Action(String label, int weight, Runnable effect) {
	}

	/**
	 * The result of one schedule.
	 * @param seed the seed
	 * @param settings the world
	 * @param violation the first invariant broken, null if none
	 * @param trace the labels of every step taken
	 */
	record Result(long seed, SimulationSettings settings, @Nullable String violation, List<String> trace) {

		boolean ok() {
			return this.violation == null;
		}

		String describe() {
			return "seed " + this.seed + " " + this.settings + "\nviolation: " + this.violation + "\nsteps:\n  "
					+ String.join("\n  ", this.trace);
		}

	}

	private final SimulationSettings settings;

	private final long seed;

	private final Random random;

	private final DecisionTable table = new DecisionTable();

	private final List<SimulatedCluster> clusters = new ArrayList<>();

	private final List<String> instanceIds = new ArrayList<>();

	private final List<SimulatedRun> runs = new ArrayList<>();

	private final Map<String, Integer> runCounts = new LinkedHashMap<>();

	/** Every Tandem transaction begun, with its clusters. */
	private final Map<String, List<String>> transactions = new LinkedHashMap<>();

	private final Set<String> reportedHeuristic = new HashSet<>();

	/** The runs the lease moved away from (for {@link SimulationSettings#leaseNeverReturns()}). */
	private final Set<String> retired = new HashSet<>();

	private final List<String> trace = new ArrayList<>();

	private long now = 1_000_000;

	private int transactionCount;

	private @Nullable String violation;

	Simulation(SimulationSettings settings, long seed) {
		this.settings = settings;
		this.seed = seed;
		this.random = new Random(seed);
		for (int i = 1; i <= settings.clusters(); i++) {
			this.clusters.add(new SimulatedCluster("c" + i, settings.transactionTimeoutMs()));
		}
		for (int i = 0; i < settings.instances(); i++) {
			String instance = String.valueOf((char) ('a' + i));
			this.instanceIds.add(instance);
			start(instance);
		}
	}

	/** Runs a random schedule of {@code settings.steps()} steps, then settles. */
	Result run() {
		for (int i = 0; i < this.settings.steps() && this.violation == null; i++) {
			take(pick(actions(false)));
		}
		settleAndCheck();
		return result();
	}

	/**
	 * Replays an explicit schedule (step labels as in a trace), then settles.
	 * @param strict whether a step that is not enabled is a failure (otherwise it is skipped)
	 */
	Result replay(List<String> steps, boolean strict) {
		for (String label : steps) {
			if (this.violation != null) {
				break;
			}
			Action action = actions(false).stream().filter((a) -> a.label().equals(label)).findFirst().orElse(null);
			if (action == null) {
				if (strict) {
					this.violation = "step not enabled: " + label;
				}
				continue;
			}
			take(action);
		}
		settleAndCheck();
		return result();
	}

	private Result result() {
		return new Result(this.seed, this.settings, this.violation, List.copyOf(this.trace));
	}

	private void take(Action action) {
		this.trace.add(action.label());
		action.effect().run();
		check();
	}

	private Action pick(List<Action> actions) {
		int total = 0;
		for (Action action : actions) {
			total += action.weight();
		}
		int chosen = this.random.nextInt(total);
		for (Action action : actions) {
			chosen -= action.weight();
			if (chosen < 0) {
				return action;
			}
		}
		throw new IllegalStateException("no action");
	}

	// ---- the world

	private SimulatedRun start(String instance) {
		int number = this.runCounts.merge(instance, 1, Integer::sum);
		SimulatedRun run = new SimulatedRun(PREFIX, instance, instance + number, this.settings.slots());
		run.acquireDeadlineMs = run.localNow(this.now) + 2 * this.settings.leaseTimeoutMs();
		this.runs.add(run);
		return run;
	}

	private long renewInterval() {
		return this.settings.leaseTimeoutMs() / 3;
	}

	private SimulatedCluster cluster(String name) {
		return this.clusters.get(Integer.parseInt(name.substring(1)) - 1);
	}

	/** The transactional id of a run's slot on a cluster ({@code TransactionalIds.of}, or its per-run variant). */
	private String transactionalId(SimulatedRun run, String cluster, int slot) {
		return this.settings.perRunTransactionalIds()
				? PREFIX + "." + cluster + "." + run.instanceId + "." + run.incarnation + "." + slot
				: PREFIX + "." + cluster + "." + run.instanceId + "." + slot;
	}

	/** What a claimant fences of a claimed lease on a cluster ({@code TransactionalIds.prefix}). */
	private String fencePrefix(InstanceLease claimed, String cluster) {
		return this.settings.perRunTransactionalIds()
				? PREFIX + "." + cluster + "." + claimed.instanceId() + "." + claimed.incarnation() + "."
				: PREFIX + "." + cluster + "." + claimed.instanceId() + ".";
	}

	private List<Action> actions(boolean settling) {
		List<Action> actions = new ArrayList<>();
		if (settling) {
			long interval = renewInterval();
			actions.add(new Action("advance " + interval, 4, () -> advance(interval)));
		}
		else {
			for (long delta : ADVANCES) {
				actions.add(new Action("advance " + delta, 3, () -> advance(delta)));
			}
			long beyond = this.settings.transactionTimeoutMs() + 1;
			actions.add(new Action("advance " + beyond, 1, () -> advance(beyond)));
			for (SimulatedRun run : this.runs) {
				if (!run.alive()) {
					continue;
				}
				actions.add(new Action("crash " + run, 1, () -> crash(run)));
				if (run.paused) {
					actions.add(new Action("resume " + run, 6, () -> run.paused = false));
				}
				else {
					actions.add(new Action("pause " + run, 3, () -> run.paused = true));
				}
				actions.add(new Action("skew " + run + " +1500", 1, () -> run.clockOffsetMs += 1500));
				actions.add(new Action("skew " + run + " -1500", 1, () -> run.clockOffsetMs -= 1500));
			}
			for (String instance : this.instanceIds) {
				if (this.runCounts.get(instance) >= MAX_RUNS_PER_INSTANCE) {
					continue;
				}
				SimulatedRun latest = latest(instance);
				if (!latest.alive() || latest.paused) {
					// a paused latest run is a zombie: its restart races it
					actions.add(new Action("restart " + instance, latest.alive() ? 1 : 5, () -> start(instance)));
				}
			}
		}
		for (SimulatedRun run : this.runs) {
			if (run.canStep()) {
				runActions(run, actions, settling);
			}
		}
		return actions;
	}

	private SimulatedRun latest(String instance) {
		SimulatedRun latest = null;
		for (SimulatedRun run : this.runs) {
			if (run.instanceId.equals(instance)) {
				latest = run;
			}
		}
		if (latest == null) {
			throw new IllegalStateException("no run of " + instance);
		}
		return latest;
	}

	private void add(List<Action> actions, SimulatedRun run, String what, Runnable effect) {
		actions.add(new Action(run + " " + what, 10, effect));
	}

	private void advance(long deltaMs) {
		this.now += deltaMs;
		for (SimulatedCluster cluster : this.clusters) {
			cluster.expireTransactions(this.now);
		}
	}

	private void crash(SimulatedRun run) {
		run.phase = Phase.CRASHED;
		run.producers.clear();
		run.takeover = null;
		Arrays.fill(run.slots, null);
	}

	// ---- one run's steps, as the code makes its calls

	private void runActions(SimulatedRun run, List<Action> actions, boolean settling) {
		long local = run.localNow(this.now);
		if (run.phase != Phase.ACQUIRING && run.lostTo == null && local >= run.nextRenewMs) {
			add(actions, run, "renew", () -> renew(run));
		}
		switch (run.phase) {
			case ACQUIRING -> add(actions, run, "acquire", () -> acquire(run));
			case RECOVERING -> recoveringActions(run, actions);
			case INITIALIZING -> {
				String[] next = run.toInit.peek();
				add(actions, run, "init " + next[2] + " on " + next[0], () -> initialize(run));
			}
			case RUNNING -> {
				if (run.takeover == null && run.lostTo == null && local >= run.nextWatchMs) {
					add(actions, run, "watch", () -> watch(run));
				}
				if (run.takeover != null) {
					takeoverActions(run, run.takeover, actions);
				}
				for (int slot = 0; slot < run.slots.length; slot++) {
					slotActions(run, slot, actions, settling);
				}
			}
			default -> throw new IllegalStateException(run.phase.toString());
		}
	}

	/** {@code InstanceLeaseKeeper.acquire()}, one renewal attempt per step. */
	private void acquire(SimulatedRun run) {
		long sentAt = run.localNow(this.now);
		InstanceLease lease = renewLease(run);
		if (lease.isHeldBy(run.incarnation)) {
			renewed(run, lease, sentAt);
			run.nextRenewMs = sentAt + renewInterval();
			run.phase = Phase.RECOVERING;
			return;
		}
		InstanceLease first = run.firstSeen;
		if (lease.isClaimed()) {
			// waiting for the claimant to finish
		}
		else if (first == null) {
			run.firstSeen = lease;
		}
		else if (!lease.incarnation().equals(first.incarnation()) || lease.expiresAtMs() > first.expiresAtMs()) {
			run.phase = Phase.FAILED; // DuplicateInstanceException
			return;
		}
		if (run.localNow(this.now) > run.acquireDeadlineMs) {
			run.phase = Phase.FAILED; // the lease was not free within two lease timeouts
		}
	}

	private InstanceLease renewLease(SimulatedRun run) {
		InstanceLease before = leaseOf(run.owner);
		if (this.settings.leaseNeverReturns() && before != null && this.retired.contains(run.incarnation)) {
			return before; // refused: the lease moved away from this run once
		}
		InstanceLease after = this.table.renewLease(new Operation.RenewLease(PREFIX, run.instanceId, run.incarnation,
				this.settings.leaseTimeoutMs()), this.now);
		if (before != null && !before.incarnation().equals(after.incarnation())) {
			this.retired.add(before.incarnation());
		}
		return after;
	}

	private @Nullable InstanceLease leaseOf(String owner) {
		for (InstanceLease lease : this.table.leases(PREFIX)) {
			if (lease.owner().equals(owner)) {
				return lease;
			}
		}
		return null;
	}

	/** {@code InstanceLeaseKeeper.renewed}: the lease, and the log's clock as this run estimates it. */
	private void renewed(SimulatedRun run, InstanceLease lease, long sentAt) {
		run.lastRenewed = lease;
		run.leaderOffsetMs = lease.expiresAtMs() - this.settings.leaseTimeoutMs() - sentAt;
	}

	/** {@code InstanceLeaseKeeper.renew}. */
	private void renew(SimulatedRun run) {
		long sentAt = run.localNow(this.now);
		InstanceLease lease = renewLease(run);
		if (lease.isHeldBy(run.incarnation)) {
			renewed(run, lease, sentAt);
		}
		else {
			run.lostTo = lease.isClaimed() ? lease.claimedBy() : "run " + lease.incarnation();
		}
		run.nextRenewMs = sentAt + renewInterval();
	}

	/** {@code TransactionRecovery.recoverAtStart}, then {@code ParticipantPool.start}. */
	private void recoveringActions(SimulatedRun run, List<Action> actions) {
		if (run.startDecisions == null) {
			add(actions, run, "read in-doubt", () -> run.startDecisions = new ArrayDeque<>(this.table.inDoubt(run.owner)));
			return;
		}
		Recovery current = run.startRecovery;
		if (current == null && !run.startDecisions.isEmpty()) {
			current = new Recovery(run.startDecisions.peek());
		}
		if (current != null) {
			Recovery recovery = current;
			add(actions, run, "recover " + label(recovery), () -> {
				if (run.startRecovery == null) {
					run.startDecisions.poll();
					run.startRecovery = recovery;
				}
				if (recoverStep(recovery)) {
					run.startRecovery = null;
				}
			});
			return;
		}
		add(actions, run, "start pool", () -> {
			for (int slot = 0; slot < run.slots.length; slot++) {
				for (SimulatedCluster cluster : this.clusters) {
					run.toInit.add(new String[] { cluster.name(), transactionalId(run, cluster.name(), slot), "s" + slot });
				}
			}
			run.phase = Phase.INITIALIZING;
		});
	}

	private static String label(Recovery recovery) {
		return recovery.decision.transactionId() + " on " + recovery.decision.participants().get(recovery.next).cluster();
	}

	/**
	 * One participant of {@code TransactionRecovery.recover}: resume the commit by producer id and epoch; if
	 * refused, read the marker. After the last one, record the completion and report a heuristic outcome.
	 * @return whether the recovery is finished
	 */
	private boolean recoverStep(Recovery recovery) {
		Decision decision = recovery.decision;
		ParticipantRecord participant = decision.participants().get(recovery.next);
		SimulatedCluster cluster = cluster(participant.cluster());
		if (cluster.resumeCommit(participant.transactionalId(), participant.producerId(), participant.producerEpoch(),
				decision.transactionId())) {
			recovery.committed.add(participant.cluster());
		}
		else {
			switch (cluster.marker(decision.transactionId())) {
				case COMMITTED -> recovery.committed.add(participant.cluster());
				case ABORTED -> recovery.aborted.add(participant.cluster());
				case OPEN -> {
					return false; // TandemException: retried
				}
			}
		}
		recovery.next++;
		if (recovery.next < decision.participants().size()) {
			return false;
		}
		this.table.complete(decision.transactionId(), this.now);
		if (!recovery.aborted.isEmpty()) {
			this.reportedHeuristic.add(decision.transactionId());
		}
		return true;
	}

	private void initialize(SimulatedRun run) {
		String[] next = run.toInit.poll();
		run.producers.put(next[1], cluster(next[0]).initTransactions(next[1], "start of " + run));
		if (run.toInit.isEmpty()) {
			run.phase = Phase.RUNNING;
			run.nextWatchMs = run.localNow(this.now) + renewInterval();
		}
	}

	// ---- takeover

	/** {@code InstanceLeaseKeeper.takeOverExpired}: claims the first candidate and starts its takeover. */
	private void watch(SimulatedRun run) {
		long leaderNow = run.leaderNow(this.now);
		List<InstanceLease> leases = List.copyOf(this.table.leases(PREFIX));
		for (InstanceLease lease : leases) {
			if (lease.owner().equals(run.owner) || !isTakeOverCandidate(run, lease, leases, leaderNow)) {
				continue;
			}
			InstanceLease claimed = this.table.claimLease(lease.owner(), run.owner, this.now);
			if (claimed != null && claimed.isClaimed()) {
				this.retired.add(claimed.incarnation());
			}
			if (claimed != null && run.owner.equals(claimed.claimedBy())) {
				run.takeover = new Takeover(claimed);
				break;
			}
		}
		run.nextWatchMs = run.localNow(this.now) + renewInterval();
	}

	private static boolean isTakeOverCandidate(SimulatedRun run, InstanceLease lease, List<InstanceLease> leases,
			long leaderNow) {
		String claimant = lease.claimedBy();
		if (claimant == null) {
			return lease.isExpiredAt(leaderNow);
		}
		if (lease.takenOver()) {
			return false;
		}
		if (claimant.equals(run.owner)) {
			return true;
		}
		return leases.stream()
			.noneMatch((other) -> other.owner().equals(claimant) && !other.isClaimed() && !other.isExpiredAt(leaderNow));
	}

	private void takeoverActions(SimulatedRun run, Takeover takeover, List<Action> actions) {
		String dead = takeover.claimed.owner();
		switch (takeover.phase) {
			case READ -> add(actions, run, "takeover read " + dead, () -> {
				takeover.decisions.addAll(this.table.inDoubt(dead));
				takeover.phase = takeover.decisions.isEmpty() ? TakeoverPhase.CHECK : TakeoverPhase.RECOVER;
			});
			case RECOVER -> {
				Recovery current = (takeover.current != null) ? takeover.current
						: new Recovery(takeover.decisions.peek());
				add(actions, run, "takeover recover " + label(current), () -> {
					if (takeover.current == null) {
						takeover.decisions.poll();
						takeover.current = current;
					}
					if (recoverStep(current)) {
						takeover.current = null;
						if (takeover.decisions.isEmpty()) {
							takeover.phase = TakeoverPhase.CHECK;
						}
					}
				});
			}
			case CHECK -> add(actions, run, "check " + dead, () -> {
				if (stillEntitled(run, takeover.claimed)) {
					takeover.phase = TakeoverPhase.LIST;
					takeover.cluster = 0;
				}
				else {
					run.takeover = null;
				}
			});
			case LIST -> {
				SimulatedCluster cluster = this.clusters.get(takeover.cluster);
				add(actions, run, "fence-list " + dead + " on " + cluster.name(), () -> {
					takeover.toFence.addAll(cluster.ongoing(fencePrefix(takeover.claimed, cluster.name())));
					nextFence(takeover);
				});
			}
			case FENCE -> {
				String id = takeover.toFence.peek();
				add(actions, run, "fence " + id, () -> {
					takeover.toFence.poll();
					this.clusters.get(takeover.cluster).initTransactions(id, "fence by " + run);
					nextFence(takeover);
				});
			}
			case RELEASE -> add(actions, run, "release " + dead, () -> {
				this.table.releaseLease(dead, run.owner);
				run.takeover = null;
			});
		}
	}

	private void nextFence(Takeover takeover) {
		if (!takeover.toFence.isEmpty()) {
			takeover.phase = TakeoverPhase.FENCE;
		}
		else if (takeover.cluster + 1 < this.clusters.size()) {
			takeover.cluster++;
			takeover.phase = TakeoverPhase.LIST;
		}
		else {
			takeover.phase = TakeoverPhase.RELEASE;
		}
	}

	/** {@code InstanceLeaseKeeper.stillEntitled}: the re-check right before fencing. */
	private boolean stillEntitled(SimulatedRun run, InstanceLease claimed) {
		long leaderNow = run.leaderNow(this.now);
		InstanceLease mine = run.lastRenewed;
		if (run.lostTo != null || mine == null || mine.expiresAtMs() - leaderNow < renewInterval()) {
			return false;
		}
		return this.table.leases(PREFIX).stream()
			.anyMatch((lease) -> lease.owner().equals(claimed.owner()) && run.owner.equals(lease.claimedBy())
					&& !lease.takenOver() && lease.incarnation().equals(claimed.incarnation()));
	}

	// ---- transactions

	private void slotActions(SimulatedRun run, int slot, List<Action> actions, boolean settling) {
		Txn txn = run.slots[slot];
		if (txn == null) {
			if (run.lostTo == null && !settling) {
				for (List<String> participants : participantChoices()) {
					add(actions, run, "begin s" + slot + " " + participants, () -> {
						Txn begun = new Txn("t" + (++this.transactionCount), participants);
						this.transactions.put(begun.id, participants);
						run.slots[slot] = begun;
					});
				}
			}
			return;
		}
		switch (txn.phase) {
			case ACTIVE -> {
				if (txn.sent < txn.clusters.size()) {
					String cluster = txn.clusters.get(txn.sent);
					add(actions, run, "send " + txn.id + " to " + cluster, () -> send(run, slot, txn, cluster));
				}
				else {
					add(actions, run, "prepare " + txn.id, () -> prepare(run, slot, txn));
				}
			}
			case PREPARED -> add(actions, run, "decide " + txn.id, () -> {
				OperationResult result = this.table.apply(new Operation.Decide(txn.decision, run.incarnation), this.now);
				txn.phase = (result instanceof OperationResult.Decided) ? TxnPhase.DECIDED : TxnPhase.ABORTING;
			});
			case DECIDED -> {
				for (String cluster : txn.clusters) {
					if (!txn.commitAttempted.contains(cluster)) {
						add(actions, run, "commit " + txn.id + " on " + cluster, () -> commit(run, slot, txn, cluster));
					}
				}
			}
			case RESOLVING -> add(actions, run, "resolve " + label(txn.recovery), () -> {
				if (recoverStep(txn.recovery)) {
					run.slots[slot] = null;
				}
			});
			case ABORTING -> add(actions, run, "abort " + txn.id, () -> {
				for (int i = 0; i < txn.sent; i++) {
					String id = transactionalId(run, txn.clusters.get(i), slot);
					Handle handle = run.producers.get(id);
					if (handle != null) {
						Handle next = cluster(txn.clusters.get(i)).abort(handle, "abort by " + run);
						if (next != null) {
							run.producers.put(id, next);
						}
						else {
							run.producers.remove(id); // abandoned: the next use initializes a new producer
						}
					}
				}
				run.slots[slot] = null;
			});
		}
	}

	private List<List<String>> participantChoices() {
		List<String> names = this.clusters.stream().map(SimulatedCluster::name).toList();
		if (names.size() == 2) {
			return List.of(names);
		}
		List<List<String>> choices = new ArrayList<>();
		choices.add(names);
		for (int skip = 0; skip < names.size(); skip++) {
			List<String> some = new ArrayList<>(names);
			some.remove(skip);
			choices.add(List.copyOf(some));
		}
		return choices;
	}

	/** {@code Participant.send}: a producer abandoned after a failure is initialized again first ({@code ParticipantPool.open}). */
	private void send(SimulatedRun run, int slot, Txn txn, String cluster) {
		String id = transactionalId(run, cluster, slot);
		Handle handle = run.producers.get(id);
		if (handle == null) {
			handle = cluster(cluster).initTransactions(id, "re-init by " + run);
			run.producers.put(id, handle);
		}
		txn.sent++;
		if (!cluster(cluster).send(handle, txn.id, this.now)) {
			txn.phase = TxnPhase.ABORTING;
		}
	}

	/** {@code CrossClusterTransaction.prepare}: flush and check every send, capture producer id and epoch. */
	private void prepare(SimulatedRun run, int slot, Txn txn) {
		List<ParticipantRecord> records = new ArrayList<>();
		for (String cluster : txn.clusters) {
			Handle handle = run.producers.get(transactionalId(run, cluster, slot));
			if (handle == null || !cluster(cluster).flush(handle, txn.id)) {
				txn.phase = TxnPhase.ABORTING;
				return;
			}
			records.add(new ParticipantRecord(cluster, handle.transactionalId(), handle.producerId(),
					(short) handle.epoch(), "tandem-markers", 0, 0));
		}
		txn.decision = new Decision(txn.id, run.owner, this.now, records);
		txn.phase = TxnPhase.PREPARED;
	}

	/** One participant of {@code CrossClusterTransaction.commitDecided}; the last one completes or hands over. */
	private void commit(SimulatedRun run, int slot, Txn txn, String cluster) {
		String id = transactionalId(run, cluster, slot);
		Handle handle = run.producers.get(id);
		Handle next = (handle != null) ? cluster(cluster).commit(handle) : null;
		if (next != null) {
			run.producers.put(id, next);
		}
		else {
			txn.commitFailed = true;
		}
		txn.commitAttempted.add(cluster);
		if (txn.commitAttempted.size() < txn.clusters.size()) {
			return;
		}
		if (!txn.commitFailed) {
			this.table.complete(txn.id, this.now);
			run.slots[slot] = null;
			return;
		}
		// TransactionRecovery.decidedNotCommitted: abandon the slot's producers, resolve by resuming
		for (String participant : txn.clusters) {
			run.producers.remove(transactionalId(run, participant, slot));
		}
		txn.recovery = new Recovery(txn.decision);
		txn.phase = TxnPhase.RESOLVING;
	}

	// ---- invariants

	/** The invariants checked after every step. */
	private void check() {
		if (this.violation != null) {
			return;
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
					this.violation = "undecided transaction " + id + " is visible on " + cluster + " (decision " + state + ")";
					return;
				}
				else if (!outcome.committed()) {
					everywhere = false;
					if (decided && outcome.cause() != AbortCause.TIMEOUT) {
						this.violation = "decided transaction " + id + " was aborted on " + cluster + " by " + outcome.cause()
								+ " (" + outcome.by() + "): a heuristic outcome by a fence, not by the transaction timeout";
						return;
					}
				}
			}
			if (state == DecisionState.COMPLETED && !everywhere && !this.reportedHeuristic.contains(id)) {
				this.violation = "transaction " + id + " is completed, visible on a strict subset of " + entry.getValue()
						+ ", and no heuristic outcome was reported";
				return;
			}
		}
	}

	/** Resumes every run, restarts what is down, lets time run until nothing is pending; then the final invariants. */
	private void settleAndCheck() {
		if (this.violation != null) {
			return;
		}
		for (SimulatedRun run : this.runs) {
			run.paused = false;
		}
		this.trace.add("-- settle");
		for (int step = 0; step < SETTLE_STEPS && this.violation == null; step++) {
			for (String instance : this.instanceIds) {
				restartIfDown(instance);
			}
			if (settled()) {
				finalCheck();
				return;
			}
			take(pick(actions(true)));
		}
		if (this.violation == null) {
			this.violation = "did not settle within " + SETTLE_STEPS + " steps (decided and not completed: "
					+ this.table.counts().decided() + ")";
		}
	}

	/** An operator restarts an instance whose runs are all down or lost their lease (killing the latter). */
	private void restartIfDown(String instance) {
		boolean healthy = false;
		for (SimulatedRun run : this.runs) {
			if (run.instanceId.equals(instance) && run.alive()) {
				if (run.lostTo != null && !run.busy()) {
					crash(run);
				}
				else {
					healthy = true;
				}
			}
		}
		if (!healthy) {
			this.trace.add("restart " + instance);
			start(instance);
		}
	}

	private boolean settled() {
		if (this.table.counts().decided() > 0) {
			return false;
		}
		for (SimulatedRun run : this.runs) {
			if (run.alive() && (run.busy() || run.phase == Phase.ACQUIRING)) {
				return false;
			}
		}
		return true;
	}

	/** A decided commit is never lost: committed everywhere, or reported as a heuristic outcome. */
	private void finalCheck() {
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
				this.violation = "decided transaction " + id + " is lost: not committed on every cluster of "
						+ entry.getValue() + " and no heuristic outcome was reported";
				return;
			}
		}
	}

}
