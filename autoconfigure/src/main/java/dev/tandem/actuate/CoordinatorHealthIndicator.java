package dev.tandem.actuate;

import java.time.Duration;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.DecisionLog;

/**
 * Health of the decision log: UP when a linearizable read answers in time, with the number of
 * this instance's in-doubt transactions.
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
		builder.up()
			.withDetail("owner", this.manager.owner())
			.withDetail("decidedNotCompleted", decided)
			.withDetail("inDoubt", this.manager.inDoubtCount());
	}

}
