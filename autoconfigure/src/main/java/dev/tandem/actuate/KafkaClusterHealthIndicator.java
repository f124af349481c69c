package dev.tandem.actuate;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.common.Node;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import dev.tandem.failover.BrokerReachability;
import dev.tandem.failover.LeaderCache;
import dev.tandem.failover.LeaderCacheRegistry;
import dev.tandem.clients.BoundedAdmin;
import dev.tandem.text.DurationText;

/**
 * Health of one Kafka cluster: UP when its brokers answer a describe-cluster call in time and
 * no client of the application that talks to the cluster is
 * {@link BrokerReachability#UNREACHABLE} (every broker it knows gone, for example after all
 * brokers were replaced with addresses its {@code bootstrap.servers} do not reach); DOWN
 * otherwise, with the unreachable clients' ids under {@code unreachableClients}. Details: the
 * cluster id, controller and broker count; when the brokers do not answer in time, {@code error}
 * names the cluster, its bootstrap servers and the timeout ("cluster 'east' (localhost:1) did not
 * answer within 5s"). Renders no other client configuration.
 *
 * @since 0.1.0
 */
public class KafkaClusterHealthIndicator extends AbstractHealthIndicator implements DisposableBean {

	private final Admin admin;

	private final Duration timeout;

	private final String cluster;

	private final @Nullable LeaderCacheRegistry leaders;

	private final String bootstrapServers;

	/**
	 * Creates an indicator that checks the brokers only.
	 * @param adminConfig admin client properties of the cluster
	 * @param timeout how long the check may take
	 */
	public KafkaClusterHealthIndicator(Map<String, Object> adminConfig, Duration timeout) {
		this(adminConfig, timeout, "", null);
	}

	/**
	 * Creates an indicator that checks the brokers and the reachability of the application's
	 * clients of the cluster.
	 * @param adminConfig admin client properties of the cluster
	 * @param timeout how long the check may take
	 * @param cluster the cluster's name, as its clients were instrumented with
	 * @param leaders the clients' leader caches, or {@code null} if failover support is off
	 * @since 0.1.0
	 */
	public KafkaClusterHealthIndicator(Map<String, Object> adminConfig, Duration timeout, String cluster,
			@Nullable LeaderCacheRegistry leaders) {
		super("Kafka cluster health check failed");
		this.admin = BoundedAdmin.create(adminConfig, timeout);
		this.bootstrapServers = bootstrapServers(adminConfig.get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG));
		this.timeout = timeout;
		this.cluster = cluster;
		this.leaders = leaders;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) throws Exception {
		// first, so that the detail survives a failing describe-cluster call
		List<String> unreachable = unreachableClients();
		if (!unreachable.isEmpty()) {
			builder.withDetail("unreachableClients", unreachable);
		}
		DescribeClusterResult result = this.admin
			.describeCluster(new DescribeClusterOptions().timeoutMs((int) this.timeout.toMillis()));
		String clusterId;
		Collection<Node> nodes;
		Node controller;
		try {
			clusterId = result.clusterId().get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
			nodes = result.nodes().get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
			controller = result.controller().get(this.timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException ex) {
			// the JDK's timeout has no message ("TimeoutException: null"): say who did not answer, and where
			builder.down().withDetail("error", notAnswered());
			return;
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof org.apache.kafka.common.errors.TimeoutException) {
				builder.down().withDetail("error", notAnswered());
				return;
			}
			throw ex;
		}
		if (unreachable.isEmpty()) {
			builder.up();
		}
		else {
			builder.down();
		}
		builder.withDetail("clusterId", clusterId)
			.withDetail("brokers", nodes.size())
			.withDetail("controller", (controller != null) ? controller.id() : -1);
	}

	/** For example {@code cluster 'east' (localhost:1) did not answer within 5s}. */
	private String notAnswered() {
		String name = this.cluster.isEmpty() ? "cluster" : "cluster '" + this.cluster + "'";
		return name + " (" + this.bootstrapServers + ") did not answer within " + DurationText.of(this.timeout);
	}

	private List<String> unreachableClients() {
		if (this.leaders == null) {
			return List.of();
		}
		return this.leaders.unreachableClients(this.cluster).stream().map(LeaderCache::clientId).toList();
	}

	private static String bootstrapServers(@Nullable Object value) {
		if (value instanceof Collection<?> servers) {
			return String.join(",", servers.stream().map(String::valueOf).toList());
		}
		return (value != null) ? String.valueOf(value) : "no bootstrap servers";
	}

	@Override
	public void destroy() {
		this.admin.close(Duration.ofSeconds(5));
	}

}
