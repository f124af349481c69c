package dev.tandem.actuate;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.common.Node;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import dev.tandem.transaction.BoundedAdmin;

/**
 * Health of one Kafka cluster: UP when its brokers answer a describe-cluster call in time, with
 * the cluster id, controller and broker count. Never renders client configuration.
 *
 * @since 0.1.0
 */
public class KafkaClusterHealthIndicator extends AbstractHealthIndicator implements DisposableBean {

	private final Admin admin;

	private final Duration timeout;

	/**
	 * Creates the indicator.
	 * @param adminConfig admin client properties of the cluster
	 * @param timeout how long the check may take
	 */
	public KafkaClusterHealthIndicator(Map<String, Object> adminConfig, Duration timeout) {
		super("Kafka cluster health check failed");
		this.admin = BoundedAdmin.create(adminConfig, timeout);
		this.timeout = timeout;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) throws Exception {
		DescribeClusterResult result = this.admin
			.describeCluster(new DescribeClusterOptions().timeoutMs((int) this.timeout.toMillis()));
		String clusterId = result.clusterId().get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		Collection<Node> nodes = result.nodes().get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		Node controller = result.controller().get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		builder.up()
			.withDetail("clusterId", clusterId)
			.withDetail("brokers", nodes.size())
			.withDetail("controller", (controller != null) ? controller.id() : -1);
	}

	@Override
	public void destroy() {
		this.admin.close(Duration.ofSeconds(5));
	}

}
