package dev.tandem.autoconfigure.failover;

import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.tandem.actuate.KafkaLeadersEndpoint;
import dev.tandem.autoconfigure.TandemAutoConfiguration;
import dev.tandem.autoconfigure.TandemClusters;
import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.failover.FailoverEvent;
import dev.tandem.failover.FailoverProfile;
import dev.tandem.failover.LeaderCacheListener;
import dev.tandem.failover.LeaderCacheRegistry;
import dev.tandem.failover.LeaderChangeEvent;
import dev.tandem.failover.ReachabilityEvent;

/**
 * Fast failover (KIP-951) for every configured cluster, unless
 * {@code tandem.failover.enabled=false}: Tandem's client profile, a leader cache per client, a
 * start-up check of the broker settings that bound failover, a background check of every
 * client's reachability ({@code tandem.failover.reachability-check-interval}), the
 * {@code kafkaleaders} endpoint and Micrometer meters {@code tandem.failover.leader.changes},
 * {@code tandem.failover.duration}, {@code tandem.failover.brokers.lost} (times a client lost
 * every broker) and the gauge {@code tandem.failover.clients.unreachable} (per cluster).
 *
 * @since 0.1.0
 */
@AutoConfiguration(before = TandemAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnProperty(prefix = "tandem.failover", name = "enabled", matchIfMissing = true)
public class TandemFailoverAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LeaderCacheRegistry tandemLeaderCacheRegistry() {
		return new LeaderCacheRegistry();
	}

	@Bean
	@ConditionalOnMissingBean
	FailoverProfile tandemFailoverProfile() {
		return FailoverProfile.standard();
	}

	@Bean
	FailoverClusterCustomizer tandemFailoverClusterCustomizer(FailoverProfile profile, LeaderCacheRegistry registry) {
		return new FailoverClusterCustomizer(profile, registry);
	}

	@Bean
	@ConditionalOnMissingBean
	ReachabilityMonitor tandemReachabilityMonitor(LeaderCacheRegistry registry, TandemProperties properties) {
		// never negative: TandemProperties rejects that while binding
		Duration interval = properties.getFailover().getReachabilityCheckInterval();
		return new ReachabilityMonitor(registry, interval);
	}

	@Bean
	@ConditionalOnMissingBean
	FailoverReadinessChecks tandemFailoverReadinessChecks(TandemClusters clusters) {
		return new FailoverReadinessChecks(clusters, Duration.ofSeconds(5));
	}

	@Bean
	static SmartInitializingSingleton tandemFailoverReadinessAtStartup(ObjectProvider<FailoverReadinessChecks> checks) {
		return () -> checks.ifAvailable(FailoverReadinessChecks::checkAll);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.kafka.core.KafkaTemplate")
	static class SpringKafkaConfiguration {

		@Bean
		static TandemClientBinder tandemClientBinder(ObjectProvider<LeaderCacheRegistry> registry) {
			return new TandemClientBinder(registry);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Endpoint.class)
	@ConditionalOnAvailableEndpoint(KafkaLeadersEndpoint.class)
	static class EndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		KafkaLeadersEndpoint kafkaLeadersEndpoint(LeaderCacheRegistry registry, FailoverReadinessChecks checks,
				TandemClusters clusters) {
			return new KafkaLeadersEndpoint(registry, checks::reports, clusters.names());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	@ConditionalOnBean(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		static SmartInitializingSingleton tandemFailoverMeters(ObjectProvider<MeterRegistry> meters,
				ObjectProvider<LeaderCacheRegistry> registry, ObjectProvider<TandemClusters> clusters) {
			return () -> meters.ifAvailable((meterRegistry) -> registry.ifAvailable((leaders) -> {
				clusters.ifAvailable((configured) -> configured.names()
					.forEach((cluster) -> Gauge
						.builder("tandem.failover.clients.unreachable", leaders,
								(caches) -> caches.unreachableClients(cluster).size())
						.description("Clients of the cluster to which no broker has answered for longer than "
								+ "their request.timeout.ms, checked from their metadata when read")
						.tag("cluster", cluster)
						.register(meterRegistry)));
				leaders.addListener(new LeaderCacheListener() {

					@Override
					public void leaderChanged(LeaderChangeEvent event) {
						Counter.builder("tandem.failover.leader.changes")
							.description("Partition leader changes seen by clients")
							.tag("cluster", event.cluster())
							.tag("client.type", event.clientType().name().toLowerCase(java.util.Locale.ROOT))
							.register(meterRegistry)
							.increment();
					}

					@Override
					public void reachabilityChanged(ReachabilityEvent event) {
						if (event.lost()) {
							Counter.builder("tandem.failover.brokers.lost")
								.description("Times a client found that no broker of its cluster answers it")
								.tag("cluster", event.cluster())
								.tag("client.type", event.clientType().name().toLowerCase(java.util.Locale.ROOT))
								.register(meterRegistry)
								.increment();
						}
					}

					@Override
					public void failoverCompleted(FailoverEvent event) {
						Timer.builder("tandem.failover.duration")
							.description("First failed or retried attempt to first success on the new leader")
							.tag("cluster", event.cluster())
							.tag("client.type", event.clientType().name().toLowerCase(java.util.Locale.ROOT))
							.register(meterRegistry)
							.record(event.duration());
					}

				});
			}));
		}

	}

}
