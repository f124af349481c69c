package dev.tandem.coordinator.service;

import java.io.IOException;

import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.server.CoordinatorServer;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
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

	@Bean(destroyMethod = "close")
	CoordinatorServer coordinatorServer(CoordinatorServerProperties properties) throws IOException {
		CoordinatorGroup group = properties.group();
		CoordinatorServerProperties.ElectionTimeout electionTimeout = properties.getElectionTimeout();
		return CoordinatorServer.builder(properties.getPeerId(), group, properties.getDataDir())
			.bindHost(properties.getBindHost())
			.electionTimeout(electionTimeout.getMin(), electionTimeout.getMax())
			.snapshotThreshold(properties.getSnapshot().getThreshold())
			.snapshotRetention(properties.getSnapshot().getRetention())
			.build();
	}

	@Bean
	CoordinatorPeerLifecycle coordinatorPeerLifecycle(CoordinatorServer server, CoordinatorServerProperties properties) {
		return new CoordinatorPeerLifecycle(server, properties.getShutdown().isTransferLeadership(),
				properties.getShutdown().getTransferTimeout());
	}

	@Bean
	CoordinatorPeerHealthIndicator coordinatorPeerHealthIndicator(CoordinatorServer server) {
		return new CoordinatorPeerHealthIndicator(server);
	}

	@Bean
	CoordinatorPeerMetrics coordinatorPeerMetrics(CoordinatorServer server) {
		return new CoordinatorPeerMetrics(server);
	}

}
