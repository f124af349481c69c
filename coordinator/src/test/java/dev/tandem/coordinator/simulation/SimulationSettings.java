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
 * @param perRunTransactionalIds the variant of issue 26 item 1: a transactional id carries its run's
 *     incarnation ({@code <prefix>.<cluster>.<instance>.<incarnation>.<slot>}) and a claimant fences only
 *     the ids of the incarnation it claimed; off, the ids are today's {@code <prefix>.<cluster>.<instance>.<slot>},
 *     shared by every run of an instance
 * @param leaseNeverReturns a rule the decision log does not have today, kept by the simulation in front of
 *     the real {@code DecisionTable}: once an instance's lease moved away from a run (claimed, or renewed by
 *     another run), that run's renewals are refused for good; today {@code InstanceLeases.renew} grants an
 *     expired lease to any run, a run whose lease was claimed and fenced included
 */
record SimulationSettings(int clusters, int instances, int slots, long leaseTimeoutMs, long transactionTimeoutMs,
		int steps, boolean perRunTransactionalIds, boolean leaseNeverReturns) {

	/** Today's protocol: 2 clusters, 2 instances, one slot, 3 s leases, 60 s transaction timeout. */
	static SimulationSettings today() {
		return new SimulationSettings(2, 2, 1, 3000, 60_000, 120, false, false);
	}

	SimulationSettings withPerRunTransactionalIds(boolean perRun) {
		return new SimulationSettings(this.clusters, this.instances, this.slots, this.leaseTimeoutMs,
				this.transactionTimeoutMs, this.steps, perRun, this.leaseNeverReturns);
	}

	SimulationSettings withLeaseNeverReturns(boolean never) {
		return new SimulationSettings(this.clusters, this.instances, this.slots, this.leaseTimeoutMs,
				this.transactionTimeoutMs, this.steps, this.perRunTransactionalIds, never);
	}

	/** Issue 26 item 1 as the simulation shows it sufficient: per-run transactional ids, and a lease that never returns. */
	SimulationSettings item1() {
		return withPerRunTransactionalIds(true).withLeaseNeverReturns(true);
	}

	SimulationSettings withShape(int clusters, int instances, int slots) {
		return new SimulationSettings(clusters, instances, slots, this.leaseTimeoutMs, this.transactionTimeoutMs,
				this.steps, this.perRunTransactionalIds, this.leaseNeverReturns);
	}

	SimulationSettings withSteps(int steps) {
		return new SimulationSettings(this.clusters, this.instances, this.slots, this.leaseTimeoutMs,
				this.transactionTimeoutMs, steps, this.perRunTransactionalIds, this.leaseNeverReturns);
	}

}
