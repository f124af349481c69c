package dev.tandem.transaction;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An operator's settlement of one of this app's transactions
 * ({@link CrossClusterTransactionManager#settle}, the actuator's settle operation): COMMIT
 * completes a decided transaction (by {@link TransactionRecovery#recover}), ABORT records the
 * abort of an undecided one; a decided transaction can never abort.
 * <p>
 * Thread-safe.
 */
final class OperatorSettlement {

	private static final Logger logger = LoggerFactory.getLogger(OperatorSettlement.class);

	private final TransactionRecovery.Settings settings;

	private final TransactionRecovery recovery;

	OperatorSettlement(TransactionRecovery.Settings settings, TransactionRecovery recovery) {
		this.settings = settings;
		this.recovery = recovery;
	}

	/**
	 * See {@link CrossClusterTransactionManager#settle}.
	 * @param idPrefix this app's id prefix: only its own transactions are settled
	 */
	TransactionState settle(String transactionId, Settlement action, String idPrefix) {
		if (!TransactionIds.isOfApp(transactionId, idPrefix)) {
			throw new IllegalArgumentException("Transaction " + transactionId + " is not a transaction of this app "
					+ "(its ids are <" + idPrefix + ".instance-id>-<uuid>): an app settles only its own transactions");
		}
		DecisionLog log = this.settings.decisionLog();
		Duration timeout = this.settings.decisionTimeout();
		String owner = Objects.requireNonNull(TransactionIds.ownerOf(transactionId));
		DecisionState state = log.state(transactionId, timeout);
		TransactionState outcome;
		if (action == Settlement.ABORT) {
			if (state == DecisionState.DECIDED || state == DecisionState.COMPLETED) {
				throw new IllegalStateException("Transaction " + transactionId + " is " + state
						+ ": a decided transaction commits everywhere and can never abort; settle it with COMMIT");
			}
			log.abort(transactionId, owner, timeout);
			this.settings.databases().rollbackBranchesOf(transactionId);
			outcome = TransactionState.ABORTED;
		}
		else if (state == DecisionState.COMPLETED) {
			outcome = TransactionState.COMMITTED;
		}
		else if (state == DecisionState.DECIDED) {
			List<Decision> candidates = log.supportsLeases() ? log.appInDoubt(idPrefix, timeout)
					: log.inDoubt(owner, timeout);
			Decision decision = candidates.stream()
				.filter((d) -> d.transactionId().equals(transactionId))
				.findFirst()
				.orElseThrow(() -> new IllegalArgumentException("Transaction " + transactionId
						+ " is decided but belongs to another app than " + idPrefix));
			outcome = (this.recovery.recover(decision) == null) ? TransactionState.COMMITTED
					: TransactionState.HEURISTIC_MIXED;
		}
		else {
			throw new IllegalStateException("Transaction " + transactionId + " has no decision (" + state
					+ "): it aborts (presumed abort); settle it with ABORT to make that explicit");
		}
		logger.warn("Transaction {} settled by hand ({}): {}", transactionId, action, outcome);
		this.settings.listener().onSettled(transactionId, action, outcome);
		return outcome;
	}

}
