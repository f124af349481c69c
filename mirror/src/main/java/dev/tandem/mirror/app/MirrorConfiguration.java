package dev.tandem.mirror.app;

import io.micrometer.core.instrument.binder.MeterBinder;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.mirror.Mirror;
import dev.tandem.mirror.MirrorSettings;
import dev.tandem.transaction.CrossClusterTransactionManager;

/**
 * The mirror's beans: its settings (checked at start-up), the {@link Mirror} on the starter's
 * {@link CrossClusterTransactionManager}, and its endpoint, health indicator and meters.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(MirrorProperties.class)
@ConditionalOnBooleanProperty(name = "tandem.mirror.enabled", matchIfMissing = true)
class MirrorConfiguration {

	@Bean
	@ConditionalOnMissingBean
	MirrorSettings mirrorSettings(MirrorProperties properties, TandemProperties tandem) {
		return MirrorSettingsFactory.create(properties, tandem);
	}

	@Bean(initMethod = "start", destroyMethod = "close")
	@ConditionalOnMissingBean
	Mirror mirror(CrossClusterTransactionManager manager, MirrorSettings settings) {
		return new Mirror(manager, settings);
	}

	@Bean
	KafkaMirrorEndpoint kafkaMirrorEndpoint(Mirror mirror) {
		return new KafkaMirrorEndpoint(mirror);
	}

	@Bean
	MirrorHealthIndicator mirrorHealthIndicator(Mirror mirror, MirrorProperties properties) {
		return new MirrorHealthIndicator(mirror, properties.getHealth());
	}

	@Bean
	MeterBinder mirrorMetrics(Mirror mirror) {
		return new MirrorMetrics(mirror);
	}

}
