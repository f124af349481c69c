package dev.tandem.coordinator.service;

import java.io.IOException;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.server.CoordinatorServer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The beans of the coordinator service: the hosted peer (built from
 * {@link CoordinatorServerProperties}, started by {@link CoordinatorPeerLifecycle}), its
 * health indicator {@code coordinatorPeer} and its meters.
 *
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(CoordinatorServerProperties.class)
public class CoordinatorServerConfiguration {

	@Bean
	CoordinatorServerSecurity coordinatorServerSecurity(CoordinatorServerProperties properties,
			ObjectProvider<SslBundles> sslBundles) {
		return CoordinatorServerSecurity.of(properties, sslBundles.getIfAvailable());
	}

	@Bean(destroyMethod = "close")
	CoordinatorServer coordinatorServer(CoordinatorServerProperties properties, CoordinatorServerSecurity security)
			throws IOException {
		CoordinatorGroup group = properties.group();
		CoordinatorServerProperties.ElectionTimeout electionTimeout = properties.getElectionTimeout();
		return CoordinatorServer.builder(properties.getPeerId(), group, properties.getDataDir())
			.bindHost(properties.getBindHost())
			.electionTimeout(electionTimeout.getMin(), electionTimeout.getMax())
			.snapshotThreshold(properties.getSnapshot().getThreshold())
			.snapshotRetention(properties.getSnapshot().getRetention())
			.tls(security.tls())
			.accessPolicy(security.policy())
			.quotas(properties.getQuotas().toQuotas())
			.build();
	}

	/**
	 * The peer's own client of its group, with the peer's certificate (an admin identity):
	 * it purges finished records every {@code tandem.coordinator.server.purge.interval}.
	 */
	@Bean(destroyMethod = "close")
	RatisDecisionLog coordinatorAdminClient(CoordinatorServer server, CoordinatorServerProperties properties,
			CoordinatorServerSecurity security) {
		return RatisDecisionLog.builder(server.group())
			.tls(security.tls())
			.purgeInterval(properties.getPurge().getInterval())
			.retention(properties.getPurge().getRetention())
			.build();
	}

	@Bean
	CoordinatorOwnersEndpoint coordinatorOwnersEndpoint(CoordinatorServer server) {
		return new CoordinatorOwnersEndpoint(server);
	}

	@Bean
	CoordinatorTransactionsEndpoint coordinatorTransactionsEndpoint(CoordinatorServer server) {
		return new CoordinatorTransactionsEndpoint(server);
	}

	@Bean
	CoordinatorPeerLifecycle coordinatorPeerLifecycle(CoordinatorServer server, CoordinatorServerProperties properties) {
		return new CoordinatorPeerLifecycle(server, properties.getShutdown().isTransferLeadership(),
				properties.getShutdown().getTransferTimeout());
	}

	@Bean
	CoordinatorPeerHealthIndicator coordinatorPeerHealthIndicator(CoordinatorServer server,
			CoordinatorServerProperties properties) {
		return new CoordinatorPeerHealthIndicator(server, properties.getHealth().getCatchUpThreshold());
	}

	@Bean
	CoordinatorPeerMetrics coordinatorPeerMetrics(CoordinatorServer server) {
		return new CoordinatorPeerMetrics(server);
	}

}
