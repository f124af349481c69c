package dev.tandem.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Binds {@code tandem.*} and resolves the configured Kafka clusters.
 *
 * @since 0.1.0
 */
@AutoConfiguration
@EnableConfigurationProperties(TandemProperties.class)
public class TandemAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	TandemClusters tandemClusters(TandemProperties properties, ObjectProvider<TandemClusterCustomizer> customizers) {
		return new TandemClusters(properties, customizers.orderedStream().toList());
	}

}
