package dev.tandem.coordinator.simulation;

/**
 * The shape of one simulated world and the protocol variant it runs.
 *
 * @param clusters the number of Kafka clusters, 2 or more
 * @param instances the number of instance ids of the app, 2 or more
 * @param slots the participant slots per run, 1 or more
 * @param leaseTimeoutMs the lease timeout (renewals every third of it), milliseconds
 * @param transactionTimeoutMs the brokers' transaction timeout, milliseconds
 * @param steps the random steps of a schedule before it settles
 * @param perRunTransactionalIds issue 26 item 1 as the code has it: a transactional id carries its run's
 *     incarnation ({@code <prefix>.<cluster>.<instance>.<slot>.<incarnation>}, {@code TransactionalIds}), a
 *     claimant fences only the ids of the incarnation it claimed, and a run's start-up fences the ids of the
 *     runs that held its lease before it; off, the ids are those before item 1,
 *     {@code <prefix>.<cluster>.<instance>.<slot>}, shared by every run of an instance
 * @param leaseNeverReturns issue 26 item 1 as the code has it: a run's renewals after its first take say so
 *     ({@code RenewLease.held}), and the real {@code DecisionTable} grants them only while the run still holds
 *     the lease, so once the lease moved away from a run (claimed, released, or taken by another run after it
 *     expired) it never returns; off, every renewal is a take, as before item 1, and the log grants an expired
 *     lease to any run, a run whose lease was claimed and fenced included
 * @param runHistory issue 26 item 1's run histories as the code has it: the lease keeps the runs that held it
 *     and a released marker ({@code ReleaseLease.keepRuns}, what a start-up that fails after taking the lease
 *     sends), and a restart and a claimant fence the ids of every run in the history
 *     ({@code InstanceLease.runsToFence}); off, a failed start-up removes the lease and a restart fences only
 *     the holders it saw, a claimant only the claimed run
 */
record SimulationSettings(int clusters, int instances, int slots, long leaseTimeoutMs, long transactionTimeoutMs,
		int steps, boolean perRunTransactionalIds, boolean leaseNeverReturns, boolean runHistory) {

	/** The protocol as the code has it: 2 clusters, 2 instances, one slot, 3 s leases, 60 s transaction timeout. */
	static SimulationSettings current() {
		return beforeIssue26Item1().item1().withRunHistory(true);
	}

	/** The protocol before issue 26 item 1 (shared transactional ids, renewals that may regain a lease). */
	static SimulationSettings beforeIssue26Item1() {
		return new SimulationSettings(2, 2, 1, 3000, 60_000, 120, false, false, false);
	}

	SimulationSettings withRunHistory(boolean history) {
		return new SimulationSettings(this.clusters, this.instances, this.slots, this.leaseTimeoutMs,
				this.transactionTimeoutMs, this.steps, this.perRunTransactionalIds, this.leaseNeverReturns, history);
	}

	SimulationSettings withPerRunTransactionalIds(boolean perRun) {
		return new SimulationSettings(this.clusters, this.instances, this.slots, this.leaseTimeoutMs,
				this.transactionTimeoutMs, this.steps, perRun, this.leaseNeverReturns, this.runHistory);
	}

	SimulationSettings withLeaseNeverReturns(boolean never) {
		return new SimulationSettings(this.clusters, this.instances, this.slots, this.leaseTimeoutMs,
				this.transactionTimeoutMs, this.steps, this.perRunTransactionalIds, never, this.runHistory);
	}

	/** Issue 26 item 1 without run histories: per-run transactional ids, and a lease that never returns. */
	SimulationSettings item1() {
		return withPerRunTransactionalIds(true).withLeaseNeverReturns(true);
	}

	SimulationSettings withShape(int clusters, int instances, int slots) {
		return new SimulationSettings(clusters, instances, slots, this.leaseTimeoutMs, this.transactionTimeoutMs,
				this.steps, this.perRunTransactionalIds, this.leaseNeverReturns, this.runHistory);
	}

	SimulationSettings withSteps(int steps) {
		return new SimulationSettings(this.clusters, this.instances, this.slots, this.leaseTimeoutMs,
				this.transactionTimeoutMs, steps, this.perRunTransactionalIds, this.leaseNeverReturns, this.runHistory);
	}

}
