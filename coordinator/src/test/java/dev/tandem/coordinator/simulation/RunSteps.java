package dev.tandem.coordinator.simulation;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import dev.tandem.coordinator.simulation.Simulation.Action;
import dev.tandem.coordinator.simulation.SimulatedCluster.Handle;
import dev.tandem.coordinator.simulation.SimulatedRun.Phase;
import dev.tandem.coordinator.simulation.SimulatedRun.Recovery;
import dev.tandem.coordinator.simulation.SimulatedRun.Takeover;
import dev.tandem.coordinator.simulation.SimulatedRun.TakeoverPhase;
import dev.tandem.coordinator.simulation.SimulatedRun.Txn;
import dev.tandem.coordinator.simulation.SimulatedRun.TxnPhase;
import dev.tandem.coordinator.state.Operation;
import dev.tandem.coordinator.state.OperationResult;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.InstanceLease;

/**
 * The steps of one run, each one call of the code it mirrors ({@code InstanceLeaseKeeper},
 * {@code TransactionRecovery}, {@code ParticipantPool}, {@code CrossClusterTransaction}), offered to the
 * scheduler as the actions enabled in the run's state. Not thread-safe.
 */
final class RunSteps {

	/** What {@code toInit} holds for an id to fence rather than a slot's producer to initialize. */
	private static final String FENCE = "fence";

	private final SimulatedWorld world;

	RunSteps(SimulatedWorld world) {
		this.world = world;
	}

	private void add(List<Action> actions, SimulatedRun run, String what, Runnable effect) {
		actions.add(new Action(run + " " + what, 10, effect));
	}

	
	void actions(SimulatedRun run, List<Action> actions, boolean settling) {
		long local = run.localNow(this.world.now);
		if (run.phase != Phase.ACQUIRING && run.lostTo == null && local >= run.nextRenewMs) {
			add(actions, run, "renew", () -> renew(run));
		}
		switch (run.phase) {
			case ACQUIRING -> add(actions, run, "acquire", () -> acquire(run));
			case RECOVERING -> {
				recoveringActions(run, actions);
				if (!settling && this.world.settings.perRunTransactionalIds()) {
					actions.add(new Action(run + " fail start-up", 1, () -> failStartUp(run)));
				}
			}
			case INITIALIZING -> {
				String[] next = run.toInit.peek();
				add(actions, run, FENCE.equals(next[2]) ? "fence " + next[1] : "init " + next[2] + " on " + next[0],
						() -> initialize(run));
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

	/**
	 * {@code InstanceLeaseKeeper.acquire()}, one renewal attempt per step, with the read of the lease before it
	 * (the runs that held it before this one: {@code previousRuns}).
	 */
	private void acquire(SimulatedRun run) {
		long sentAt = run.localNow(this.world.now);
		InstanceLease before = this.world.leaseOf(run.owner);
		if (before != null) {
			rememberPreviousRuns(run, before);
		}
		InstanceLease lease = this.world.renewLease(run);
		if (lease.isHeldBy(run.incarnation)) {
			// with run histories, the lease as taken names every run before this one (the code reads it again)
			rememberPreviousRuns(run, lease);
			run.acquiredAtStep = this.world.step;
			renewed(run, lease, sentAt);
			run.nextRenewMs = sentAt + this.world.renewInterval();
			run.phase = Phase.RECOVERING;
			return;
		}
		run.previousRuns.add(lease.incarnation());
		if (!lease.isClaimed()) {
			run.tookFromDeadRun = true;
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
		if (run.localNow(this.world.now) > run.acquireDeadlineMs) {
			run.phase = Phase.FAILED; // the lease was not free within two lease timeouts
		}
	}

	/** {@code InstanceLeaseKeeper.rememberPreviousRuns}: the holder, and with run histories every run in the history. */
	private void rememberPreviousRuns(SimulatedRun run, InstanceLease lease) {
		if (!lease.incarnation().equals(run.incarnation) && !lease.released() && !lease.takenOver()) {
			run.tookFromDeadRun = true;
		}
		java.util.Set<String> runs = this.world.settings.runHistory() ? lease.runsToFence()
				: java.util.Set.of(lease.incarnation());
		for (String previous : runs) {
			if (!previous.equals(run.incarnation)) {
				run.previousRuns.add(previous);
			}
		}
	}

	/**
	 * A start-up that fails after the lease was taken (a cluster that does not answer, every cluster
	 * required): {@code CrossClusterTransactionManager.start} releases the lease (with run histories the log keeps
	 * it, marked released, else the release removes it), unless, with run histories, the run took it from a run
	 * that died: then it leaves the lease to expire ({@code InstanceLeaseKeeper.closeAfterFailedStart}).
	 */
	private void failStartUp(SimulatedRun run) {
		if (!(this.world.settings.runHistory() && run.tookFromDeadRun)) {
			this.world.table.releaseLease(
					new Operation.ReleaseLease(run.owner, run.incarnation, this.world.settings.runHistory()), this.world.now);
		}
		run.phase = Phase.FAILED;
		run.producers.clear();
		this.world.down.put(run.incarnation, this.world.step);
	}

	/** {@code InstanceLeaseKeeper.renewed}: the lease, and the log's clock as this run estimates it. */
	private void renewed(SimulatedRun run, InstanceLease lease, long sentAt) {
		run.lastRenewed = lease;
		run.leaderOffsetMs = lease.expiresAtMs() - this.world.settings.leaseTimeoutMs() - sentAt;
	}

	/** {@code InstanceLeaseKeeper.renew}. */
	private void renew(SimulatedRun run) {
		long sentAt = run.localNow(this.world.now);
		InstanceLease lease = this.world.renewLease(run);
		if (lease != null && lease.isHeldBy(run.incarnation)) {
			renewed(run, lease, sentAt);
		}
		else {
			run.lostTo = (lease == null) ? "nobody" : lease.isClaimed() ? lease.claimedBy() : "run " + lease.incarnation();
		}
		run.nextRenewMs = sentAt + this.world.renewInterval();
	}

	/** {@code TransactionRecovery.recoverAtStart}, then {@code ParticipantPool.start}. */
	private void recoveringActions(SimulatedRun run, List<Action> actions) {
		if (run.startDecisions == null) {
			add(actions, run, "read in-doubt", () -> run.startDecisions = new ArrayDeque<>(this.world.table.inDoubt(run.owner)));
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
			if (this.world.settings.perRunTransactionalIds()) {
				// ParticipantPool.abortLeftOpen: the open transactions of the runs that held the lease before
				for (SimulatedCluster cluster : this.world.clusters) {
					for (String id : this.world.ongoingOfRuns(cluster, run.instanceId, run.previousRuns)) {
						run.toInit.add(new String[] { cluster.name(), id, FENCE });
					}
				}
			}
			for (int slot = 0; slot < run.slots.length; slot++) {
				for (SimulatedCluster cluster : this.world.clusters) {
					run.toInit.add(new String[] { cluster.name(), this.world.transactionalId(run, cluster.name(), slot), "s" + slot });
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
		SimulatedCluster cluster = this.world.cluster(participant.cluster());
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
		this.world.table.complete(decision.transactionId(), this.world.now);
		if (!recovery.aborted.isEmpty()) {
			this.world.reportedHeuristic.add(decision.transactionId());
		}
		return true;
	}

	private void initialize(SimulatedRun run) {
		String[] next = run.toInit.poll();
		Handle handle = this.world.cluster(next[0]).initTransactions(next[1], "start of " + run);
		if (!FENCE.equals(next[2])) {
			run.producers.put(next[1], handle);
		}
		if (run.toInit.isEmpty()) {
			run.phase = Phase.RUNNING;
			if (this.world.settings.perRunTransactionalIds()) {
				this.world.checkNothingLeftOpen(run);
			}
			run.nextWatchMs = run.localNow(this.world.now) + this.world.renewInterval();
		}
	}

	// ---- takeover

	/** {@code InstanceLeaseKeeper.takeOverExpired}: claims the first candidate and starts its takeover. */
	private void watch(SimulatedRun run) {
		long leaderNow = run.leaderNow(this.world.now);
		List<InstanceLease> leases = List.copyOf(this.world.table.leases(SimulatedWorld.PREFIX));
		for (InstanceLease lease : leases) {
			if (lease.owner().equals(run.owner) || !isTakeOverCandidate(run, lease, leases, leaderNow)) {
				continue;
			}
			InstanceLease claimed = this.world.table.claimLease(lease.owner(), run.owner, this.world.now);
			if (claimed != null && run.owner.equals(claimed.claimedBy())) {
				run.takeover = new Takeover(claimed);
				break;
			}
		}
		run.nextWatchMs = run.localNow(this.world.now) + this.world.renewInterval();
	}

	private static boolean isTakeOverCandidate(SimulatedRun run, InstanceLease lease, List<InstanceLease> leases,
			long leaderNow) {
		if (lease.released()) {
			return false;
		}
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
				takeover.decisions.addAll(this.world.table.inDoubt(dead));
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
				SimulatedCluster cluster = this.world.clusters.get(takeover.cluster);
				add(actions, run, "fence-list " + dead + " on " + cluster.name(), () -> {
					// with run histories, the claimed run and every run before it (the code reads the history after the claim)
					takeover.toFence.addAll(this.world.ongoingOfRuns(cluster, takeover.claimed.instanceId(),
							this.world.settings.runHistory() ? takeover.claimed.runsToFence()
									: java.util.Set.of(takeover.claimed.incarnation())));
					nextFence(takeover);
				});
			}
			case FENCE -> {
				String id = takeover.toFence.peek();
				add(actions, run, "fence " + id, () -> {
					takeover.toFence.poll();
					this.world.clusters.get(takeover.cluster).initTransactions(id, "fence by " + run);
					nextFence(takeover);
				});
			}
			case RELEASE -> add(actions, run, "release " + dead, () -> {
				this.world.table.releaseLease(dead, run.owner);
				run.takeover = null;
			});
		}
	}

	private void nextFence(Takeover takeover) {
		if (!takeover.toFence.isEmpty()) {
			takeover.phase = TakeoverPhase.FENCE;
		}
		else if (takeover.cluster + 1 < this.world.clusters.size()) {
			takeover.cluster++;
			takeover.phase = TakeoverPhase.LIST;
		}
		else {
			takeover.phase = TakeoverPhase.RELEASE;
		}
	}

	/** {@code InstanceLeaseKeeper.stillEntitled}: the re-check right before fencing. */
	private boolean stillEntitled(SimulatedRun run, InstanceLease claimed) {
		long leaderNow = run.leaderNow(this.world.now);
		InstanceLease mine = run.lastRenewed;
		if (run.lostTo != null || mine == null || mine.expiresAtMs() - leaderNow < this.world.renewInterval()) {
			return false;
		}
		return this.world.table.leases(SimulatedWorld.PREFIX).stream()
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
						Txn begun = new Txn("t" + (++this.world.transactionCount), participants);
						this.world.transactions.put(begun.id, participants);
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
				OperationResult result = this.world.table.apply(new Operation.Decide(txn.decision, run.incarnation), this.world.now);
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
					String id = this.world.transactionalId(run, txn.clusters.get(i), slot);
					Handle handle = run.producers.get(id);
					if (handle != null) {
						Handle next = this.world.cluster(txn.clusters.get(i)).abort(handle, "abort by " + run);
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
		List<String> names = this.world.clusters.stream().map(SimulatedCluster::name).toList();
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
		String id = this.world.transactionalId(run, cluster, slot);
		Handle handle = run.producers.get(id);
		if (handle == null) {
			handle = this.world.cluster(cluster).initTransactions(id, "re-init by " + run);
			run.producers.put(id, handle);
		}
		txn.sent++;
		if (!this.world.cluster(cluster).send(handle, txn.id, this.world.now)) {
			txn.phase = TxnPhase.ABORTING;
		}
	}

	/** {@code CrossClusterTransaction.prepare}: flush and check every send, capture producer id and epoch. */
	private void prepare(SimulatedRun run, int slot, Txn txn) {
		List<ParticipantRecord> records = new ArrayList<>();
		for (String cluster : txn.clusters) {
			Handle handle = run.producers.get(this.world.transactionalId(run, cluster, slot));
			if (handle == null || !this.world.cluster(cluster).flush(handle, txn.id)) {
				txn.phase = TxnPhase.ABORTING;
				return;
			}
			records.add(new ParticipantRecord(cluster, handle.transactionalId(), handle.producerId(),
					(short) handle.epoch(), "tandem-markers", 0, 0));
		}
		txn.decision = new Decision(txn.id, run.owner, this.world.now, records);
		txn.phase = TxnPhase.PREPARED;
	}

	/** One participant of {@code CrossClusterTransaction.commitDecided}; the last one completes or hands over. */
	private void commit(SimulatedRun run, int slot, Txn txn, String cluster) {
		String id = this.world.transactionalId(run, cluster, slot);
		Handle handle = run.producers.get(id);
		Handle next = (handle != null) ? this.world.cluster(cluster).commit(handle) : null;
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
			this.world.table.complete(txn.id, this.world.now);
			run.slots[slot] = null;
			return;
		}
		// TransactionRecovery.decidedNotCommitted: abandon the slot's producers, resolve by resuming
		for (String participant : txn.clusters) {
			run.producers.remove(this.world.transactionalId(run, participant, slot));
		}
		txn.recovery = new Recovery(txn.decision);
		txn.phase = TxnPhase.RESOLVING;
	}

}
