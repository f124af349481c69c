package dev.tandem.coordinator.state;

/**
 * Per-identity limits of what a coordinator holds for the owners one authenticated caller acts
 * for (its {@link Grant}'s id prefixes): open (decided, not completed) decisions and instance
 * leases, and aborted records (kept until the retention purges them). With every decision at most
 * {@link CommandLimits#MAX_DECISION_BYTES}, the quotas bound what one app may cost each replica.
 * Checked on the leader before a command reaches the log, so a refused command leaves no trace;
 * admins and the open policy (no TLS) are not limited. A quota is a bound against a client that
 * floods the log, not an exact count: the commands already on their way to the log when the check
 * runs (as many as the app has in flight) may pass it.
 * <p>
 * Immutable and thread-safe.
 *
 * @param maxOpenDecisions most decided-not-completed transactions of one identity's owners, positive
 * @param maxLeases most instance leases of one identity's owners, positive
 * @param maxAborted most aborted records of one identity's owners, positive
 * @since 0.1.0
 */
public record CoordinatorQuotas(int maxOpenDecisions, int maxLeases, int maxAborted) {

	/** The defaults: 10,000 open decisions, 1,000 leases (instances) and 10,000 aborted records per identity. */
	public static final CoordinatorQuotas DEFAULTS = new CoordinatorQuotas(10_000, 1_000, 10_000);

	public CoordinatorQuotas {
		if (maxOpenDecisions <= 0) {
			throw new IllegalArgumentException("maxOpenDecisions must be positive: " + maxOpenDecisions);
		}
		if (maxLeases <= 0) {
			throw new IllegalArgumentException("maxLeases must be positive: " + maxLeases);
		}
		if (maxAborted <= 0) {
			throw new IllegalArgumentException("maxAborted must be positive: " + maxAborted);
		}
	}

}
