package dev.tandem.coordinator.service;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import dev.tandem.clients.ClusterClients;
import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.transaction.HangingTransactions;
import dev.tandem.transaction.HangingTransactionsCheck;
import dev.tandem.transaction.InstanceLease;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The beans of the coordinator service: the hosted peer (built from
 * {@link CoordinatorServerProperties}, started by {@link CoordinatorPeerLifecycle}), its
 * health indicator {@code coordinatorPeer} and its meters, the admin API, and with
 * {@code tandem.coordinator.server.clusters} the served apps' hanging transactions
 * ({@link CoordinatorServerKafkaProperties}).
 *
 * @since 0.1.0
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({ CoordinatorServerProperties.class, CoordinatorServerKafkaProperties.class })
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

	/**
	 * The finder of the served apps' hanging transactions on the configured clusters (none without
	 * clusters):
	 * the id prefixes are those of tandem.coordinator.server.authorization.apps and of every lease
	 * in this peer's replica, read at each call; leases and decisions are read through the peer's
	 * own admin client.
	 */
	@Bean
	HangingTransactionsFinder coordinatorHangingTransactions(CoordinatorServer server,
			RatisDecisionLog coordinatorAdminClient, CoordinatorServerProperties properties,
			CoordinatorServerKafkaProperties kafka, ObjectProvider<SslBundles> sslBundles) {
		if (kafka.getClusters().isEmpty()) {
			return new HangingTransactionsFinder(null, List.of());
		}
		ClusterClients clients = kafka.clusterClients(sslBundles.getIfAvailable());
		HangingTransactions finder = HangingTransactions.forApps(clients, () -> {
			Set<String> prefixes = new LinkedHashSet<>();
			properties.getAuthorization().getApps().values().forEach(prefixes::addAll);
			// the table's view of the leases is read under the state machine's lock
			prefixes.addAll(server.stateMachine()
				.read((table) -> table.leases().stream().map(InstanceLease::idPrefix).toList()));
			return prefixes;
		}, coordinatorAdminClient, kafka.getHanging().getTransactionTimeout());
		return new HangingTransactionsFinder(finder, clients.names());
	}

	@Bean
	CoordinatorHangingTransactionsEndpoint coordinatorHangingTransactionsEndpoint(HangingTransactionsFinder hanging,
			CoordinatorServerKafkaProperties kafka) {
		return new CoordinatorHangingTransactionsEndpoint(hanging.finder(), hanging.clusters(),
				kafka.getHanging().getTimeout());
	}

	/**
	 * Gauge tandem.transaction.hanging over a check every
	 * tandem.coordinator.server.hanging.check-interval; none without clusters.
	 */
	@Bean(destroyMethod = "close")
	HangingTransactionsCheck coordinatorHangingTransactionsCheck(HangingTransactionsFinder hanging,
			CoordinatorServer server, CoordinatorServerKafkaProperties kafka) {
		HangingTransactions finder = hanging.finder();
		return (finder != null)
				? new HangingTransactionsCheck(server.peerId(), finder::find, kafka.getHanging().getCheckInterval(),
						kafka.getHanging().getTimeout())
				: new HangingTransactionsCheck(server.peerId(), (timeout) -> null, Duration.ZERO, Duration.ZERO);
	}

	@Bean
	MeterBinder coordinatorHangingTransactionsGauge(HangingTransactionsCheck coordinatorHangingTransactionsCheck,
			CoordinatorServer server) {
		return (registry) -> {
			if (coordinatorHangingTransactionsCheck.isEnabled()) {
				Gauge.builder(HangingTransactionsCheck.METER_NAME, coordinatorHangingTransactionsCheck,
						HangingTransactionsCheck::count)
					.description("Kafka transactions of the served apps open on a broker with nobody to end them "
							+ "(-1: not known)")
					.tag("peer", server.peerId())
					.register(registry);
			}
		};
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

	/**
	 * The finder of hanging transactions, null without clusters, and the configured clusters.
	 *
	 * @param finder the finder, or null
	 * @param clusters the cluster names in configuration order
	 */
	record HangingTransactionsFinder(@Nullable HangingTransactions finder, List<String> clusters) {
	}

}
