package dev.tandem.coordinator.state;

/**
 * Per-identity limits of what a coordinator holds for the owners one authenticated caller acts
 * for (its {@link Grant}'s id prefixes): open (decided, not completed) decisions and instance
 * leases. Checked on the leader before a command reaches the log, so a refused command leaves no
 * trace; admins and the open policy (no TLS) are not limited. A quota is a bound against a client
 * that floods the log, not an exact count: commands already on their way to the log when the
 * check runs may pass it by a batch.
 * <p>
 * Immutable and thread-safe.
 *
 * @param maxOpenDecisions most decided-not-completed transactions of one identity's owners, positive
 * @param maxLeases most instance leases of one identity's owners, positive
 * @since 0.1.0
 */
public record CoordinatorQuotas(int maxOpenDecisions, int maxLeases) {

	/** The defaults: 50,000 open decisions and 1,000 leases (instances) per identity. */
	public static final CoordinatorQuotas DEFAULTS = new CoordinatorQuotas(50_000, 1_000);

	public CoordinatorQuotas {
		if (maxOpenDecisions <= 0) {
			throw new IllegalArgumentException("maxOpenDecisions must be positive: " + maxOpenDecisions);
		}
		if (maxLeases <= 0) {
			throw new IllegalArgumentException("maxLeases must be positive: " + maxLeases);
		}
	}

}
