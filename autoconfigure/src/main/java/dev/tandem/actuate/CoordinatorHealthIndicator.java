package dev.tandem.actuate;

import java.time.Duration;
import java.util.List;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.StaleDecision;

/**
 * Health of the decision log: UP when a linearizable read answers in time, with the number of
 * this instance's in-doubt transactions, the stale decisions of any instance of the app (decided,
 * not completed, older than {@code tandem.transaction.stale-decision-age}: count and oldest age),
 * and, DOWN, when another instance took this one's lease.
 *
 * @since 0.1.0
 */
public class CoordinatorHealthIndicator extends AbstractHealthIndicator {

	private final DecisionLog decisionLog;

	private final CrossClusterTransactionManager manager;

	private final Duration timeout;

	/**
	 * Creates the indicator.
	 * @param decisionLog the decision log
	 * @param manager the transaction manager (for the owner id)
	 * @param timeout how long the read may take
	 */
	public CoordinatorHealthIndicator(DecisionLog decisionLog, CrossClusterTransactionManager manager, Duration timeout) {
		super("Tandem coordinator health check failed");
		this.decisionLog = decisionLog;
		this.manager = manager;
		this.timeout = timeout;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		int decided = this.decisionLog.inDoubt(this.manager.owner(), this.timeout).size();
		List<StaleDecision> stale = this.manager.staleDecisions();
		String lostTo = this.manager.leaseLostTo();
		if (lostTo != null) {
			builder.down().withDetail("leaseLostTo", lostTo);
		}
		else {
			builder.up();
		}
		builder.withDetail("owner", this.manager.owner())
			.withDetail("decidedNotCompleted", decided)
			.withDetail("inDoubt", this.manager.inDoubtCount())
			.withDetail("staleDecisions", stale.size());
		if (!stale.isEmpty()) {
			builder.withDetail("oldestStaleDecisionAgeMs", stale.get(0).ageMs())
				.withDetail("oldestStaleDecisionOwner", stale.get(0).owner());
		}
	}

}
