package dev.tandem.autoconfigure.actuate;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.tandem.actuate.CoordinatorHealthIndicator;
import dev.tandem.actuate.DatabaseParticipantHealthIndicator;
import dev.tandem.actuate.KafkaClusterHealthIndicator;
import dev.tandem.actuate.HangingTransactionsGauge;
import dev.tandem.actuate.KafkaTransactionsEndpoint;
import dev.tandem.actuate.ListenerContainerMetrics;
import dev.tandem.actuate.ListenerContainersHealthIndicator;
import dev.tandem.actuate.TransactionMetrics;
import dev.tandem.autoconfigure.TandemClusters;
import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.autoconfigure.kafka.ListenerContainerStatuses;
import dev.tandem.autoconfigure.kafka.ListenerContainerStatus;
import dev.tandem.autoconfigure.kafka.TandemKafkaAutoConfiguration;
import dev.tandem.autoconfigure.transaction.TandemTransactionAutoConfiguration;
import dev.tandem.failover.LeaderCacheRegistry;
import dev.tandem.transaction.CrossClusterDataSource;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.TransactionStatistics;

/**
 * Tandem's actuator parts, each present only when its library is: the
 * {@code kafkatransactions} endpoint, health indicators {@code kafkaClusters} (one per cluster),
 * {@code tandemDatabases} (one per database participant), {@code tandemCoordinator} and
 * {@code tandemListeners}, Micrometer meters of transaction outcomes
 * and listener containers, and a
 * {@link TandemSanitizingFunction} that masks credential-like client properties.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = { TandemTransactionAutoConfiguration.class, TandemKafkaAutoConfiguration.class },
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration" })
public class TandemActuatorAutoConfiguration {

	static final Duration CHECK_TIMEOUT = Duration.ofSeconds(5);

	/** The statuses of Tandem's listener containers; none without the monitor (no spring-kafka, no transactions). */
	static Supplier<List<ListenerContainerStatus>> listenerStatuses(ObjectProvider<ListenerContainerStatuses> monitor) {
		return () -> {
			ListenerContainerStatuses containers = monitor.getIfAvailable();
			return (containers != null) ? containers.statuses() : List.of();
		};
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.SanitizingFunction")
	static class SanitizingConfiguration {

		@Bean
		@ConditionalOnMissingBean
		TandemSanitizingFunction tandemSanitizingFunction() {
			return new TandemSanitizingFunction();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Endpoint.class)
	@ConditionalOnBean(CrossClusterTransactionManager.class)
	@ConditionalOnAvailableEndpoint(KafkaTransactionsEndpoint.class)
	static class TransactionsEndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		KafkaTransactionsEndpoint kafkaTransactionsEndpoint(CrossClusterTransactionManager manager,
				TransactionStatistics statistics, DecisionLog decisionLog, TandemProperties properties,
				ObjectProvider<ListenerContainerStatuses> listeners) {
			return new KafkaTransactionsEndpoint(manager, statistics, decisionLog,
					properties.getTransaction().getDecisionTimeout(), listenerStatuses(listeners));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(AbstractHealthIndicator.class)
	static class HealthConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "kafkaClustersHealthContributor")
		@ConditionalOnEnabledHealthIndicator("kafkaclusters")
		HealthContributor kafkaClustersHealthContributor(TandemClusters clusters,
				ObjectProvider<LeaderCacheRegistry> leaders) {
			LeaderCacheRegistry registry = leaders.getIfAvailable();
			Map<String, KafkaClusterHealthIndicator> indicators = new LinkedHashMap<>();
			for (String cluster : clusters.names()) {
				indicators.put(cluster, new KafkaClusterHealthIndicator(clusters.adminConfig(cluster), CHECK_TIMEOUT,
						cluster, registry));
			}
			return new ClosingCompositeHealthContributor(indicators);
		}

		@Bean
		@ConditionalOnMissingBean(name = "tandemDatabasesHealthContributor")
		@ConditionalOnBean(CrossClusterDataSource.class)
		@ConditionalOnEnabledHealthIndicator("tandemdatabases")
		HealthContributor tandemDatabasesHealthContributor(ObjectProvider<CrossClusterDataSource> databases) {
			Map<String, DatabaseParticipantHealthIndicator> indicators = new LinkedHashMap<>();
			databases.orderedStream().forEach((database) -> indicators.put(database.database(),
					new DatabaseParticipantHealthIndicator(database.xaDataSource(), CHECK_TIMEOUT)));
			return CompositeHealthContributor.fromMap(indicators);
		}

		@Bean
		@ConditionalOnMissingBean(name = "tandemCoordinatorHealthContributor")
		@ConditionalOnBean(CrossClusterTransactionManager.class)
		@ConditionalOnEnabledHealthIndicator("tandemcoordinator")
		HealthContributor tandemCoordinatorHealthContributor(DecisionLog decisionLog,
				CrossClusterTransactionManager manager) {
			return new CoordinatorHealthIndicator(decisionLog, manager, CHECK_TIMEOUT);
		}

		@Bean
		@ConditionalOnMissingBean(name = "tandemListenersHealthContributor")
		@ConditionalOnBean(ListenerContainerStatuses.class)
		@ConditionalOnEnabledHealthIndicator("tandemlisteners")
		HealthContributor tandemListenersHealthContributor(ObjectProvider<ListenerContainerStatuses> monitor) {
			return new ListenerContainersHealthIndicator(listenerStatuses(monitor));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	@ConditionalOnBean(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		TransactionMetrics tandemTransactionMetrics(MeterRegistry registry) {
			return new TransactionMetrics(registry);
		}

		@Bean
		static SmartInitializingSingleton tandemTransactionGauges(ObjectProvider<TransactionMetrics> metrics,
				ObjectProvider<CrossClusterTransactionManager> manager) {
			return () -> metrics.ifAvailable((m) -> manager.ifAvailable(m::bindTo));
		}

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean
		@ConditionalOnBean(CrossClusterTransactionManager.class)
		HangingTransactionsGauge tandemHangingTransactionsGauge(CrossClusterTransactionManager manager,
				MeterRegistry registry, TandemProperties properties) {
			return new HangingTransactionsGauge(manager, registry, properties.getTransaction().getHangingCheckInterval(),
					properties.getTransaction().getDecisionTimeout());
		}

		@Bean
		@ConditionalOnBean(ListenerContainerStatuses.class)
		static SmartInitializingSingleton tandemListenerGauges(ObjectProvider<MeterRegistry> registry,
				ObjectProvider<ListenerContainerStatuses> monitor) {
			return () -> registry.ifAvailable((r) -> ListenerContainerMetrics.bindTo(r, listenerStatuses(monitor)));
		}

	}

	/**
	 * A composite of cluster health indicators that closes their admin clients on shutdown.
	 */
	static final class ClosingCompositeHealthContributor implements CompositeHealthContributor,
			org.springframework.beans.factory.DisposableBean {

		private final Map<String, KafkaClusterHealthIndicator> indicators;

		private final CompositeHealthContributor delegate;

		ClosingCompositeHealthContributor(Map<String, KafkaClusterHealthIndicator> indicators) {
			this.indicators = indicators;
			this.delegate = CompositeHealthContributor.fromMap(indicators);
		}

		@Override
		public HealthContributor getContributor(String name) {
			return this.delegate.getContributor(name);
		}

		@Override
		public java.util.stream.Stream<org.springframework.boot.health.contributor.HealthContributors.Entry> stream() {
			return this.delegate.stream();
		}

		@Override
		public void destroy() {
			this.indicators.values().forEach(KafkaClusterHealthIndicator::destroy);
		}

	}

}
