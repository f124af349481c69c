package dev.tandem.transaction;

/**
 * A decided transaction that has not completed for longer than the stale-decision age: its owner
 * is down or cannot reach a participant's cluster. Unless its owner returns or another instance
 * of its app takes it over, its brokers abort it at {@code transaction.timeout.ms}, a heuristic
 * outcome. Immutable.
 *
 * @param transactionId the transaction id
 * @param owner the owning instance, {@code <id-prefix>.<instance-id>}
 * @param decidedAtMs when it was decided, epoch milliseconds of the owner's clock
 * @param ageMs how long ago, milliseconds, as the reporting instance's clock sees it
 * @since 0.1.0
 */
public record StaleDecision(String transactionId, String owner, long decidedAtMs, long ageMs) {
}
