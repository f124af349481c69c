package dev.tandem.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import dev.tandem.autoconfigure.kafka.SpringKafkaClientDefaults;

/**
 * Binds {@code tandem.*} and resolves the configured Kafka clusters: each inherits
 * {@code spring.kafka.*} (when Spring Boot's Kafka module is present) and may be overridden per
 * cluster and by a {@link TandemClusterConnectionDetails} bean.
 *
 * @since 0.1.0
 */
@AutoConfiguration(afterName = { "org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration",
		"org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration" })
@EnableConfigurationProperties(TandemProperties.class)
public class TandemAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	TandemClusters tandemClusters(TandemProperties properties, ObjectProvider<TandemClientDefaults> defaults,
			ObjectProvider<TandemClusterConnectionDetails> connectionDetails, ObjectProvider<SslBundles> sslBundles,
			ObjectProvider<TandemClusterCustomizer> customizers, Environment environment) {
		ClusterOrder.apply(environment, properties.getClusters());
		return new TandemClusters(properties, defaults.getIfAvailable(() -> TandemClientDefaults.NONE),
				connectionDetails.orderedStream().toList(), sslBundles.getIfAvailable(),
				customizers.orderedStream().toList(), ClusterKeys.declared(environment));
	}

	/**
	 * {@code spring.kafka.*} as every cluster's base; Spring Boot's bound
	 * {@link KafkaProperties} when its Kafka auto-configuration runs, bound here otherwise.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.boot.kafka.autoconfigure.KafkaProperties")
	static class SpringKafkaDefaultsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		TandemClientDefaults tandemSpringKafkaClientDefaults(ObjectProvider<KafkaProperties> kafkaProperties,
				ObjectProvider<SslBundles> sslBundles, Environment environment) {
			KafkaProperties properties = kafkaProperties.getIfAvailable(() -> org.springframework.boot.context.properties.bind.Binder
				.get(environment)
				.bind("spring.kafka", KafkaProperties.class)
				.orElseGet(KafkaProperties::new));
			return new SpringKafkaClientDefaults(properties, sslBundles.getIfAvailable());
		}

	}

}
