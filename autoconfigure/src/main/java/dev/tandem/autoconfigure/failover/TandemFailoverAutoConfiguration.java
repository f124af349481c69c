package dev.tandem.autoconfigure.failover;

import java.time.Duration;

import io.micrometer.core.instrument.Counter;
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
import dev.tandem.failover.FailoverEvent;
import dev.tandem.failover.FailoverProfile;
import dev.tandem.failover.LeaderCacheListener;
import dev.tandem.failover.LeaderCacheRegistry;
import dev.tandem.failover.LeaderChangeEvent;

/**
 * Fast failover (KIP-951) for every configured cluster, unless
 * {@code tandem.failover.enabled=false}: Tandem's client profile, a leader cache per client, a
 * start-up check of the broker settings that bound failover, the {@code kafkaleaders} endpoint
 * and Micrometer meters {@code tandem.failover.leader.changes} and {@code tandem.failover.duration}.
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
		KafkaLeadersEndpoint kafkaLeadersEndpoint(LeaderCacheRegistry registry, FailoverReadinessChecks checks) {
			return new KafkaLeadersEndpoint(registry, checks::reports);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	@ConditionalOnBean(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		static SmartInitializingSingleton tandemFailoverMeters(ObjectProvider<MeterRegistry> meters,
				ObjectProvider<LeaderCacheRegistry> registry) {
			return () -> meters.ifAvailable((meterRegistry) -> registry.ifAvailable((leaders) -> leaders
				.addListener(new LeaderCacheListener() {

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
					public void failoverCompleted(FailoverEvent event) {
						Timer.builder("tandem.failover.duration")
							.description("First failed or retried attempt to first success on the new leader")
							.tag("cluster", event.cluster())
							.tag("client.type", event.clientType().name().toLowerCase(java.util.Locale.ROOT))
							.register(meterRegistry)
							.record(event.duration());
					}

				})));
		}

	}

}
