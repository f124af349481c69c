package dev.tandem.coordinator.service;

import org.junit.jupiter.api.Test;

import dev.tandem.test.ConfigurationMetadataDefaults;

/**
 * The coordinator service's configuration metadata shows the defaults its properties really have:
 * most are constants of {@code CoordinatorServerBuilder}, {@code RatisDecisionLogBuilder} and the
 * core, declared once there, whose metadata comes from
 * {@code additional-spring-configuration-metadata.json} ({@link ConfigurationMetadataDefaults}).
 */
class CoordinatorServerPropertiesMetadataTests {

	@Test
	void everyDefaultInTheMetadataIsTheDefaultOfTheProperties() throws Exception {
		new ConfigurationMetadataDefaults(CoordinatorServerProperties.class, "tandem.coordinator.server")
			.assertDefaultsAreTheValues("tandem.coordinator.server.purge.retention",
					"tandem.coordinator.server.election-timeout.min", "tandem.coordinator.server.snapshot.threshold");
		new ConfigurationMetadataDefaults(CoordinatorServerKafkaProperties.class, "tandem.coordinator.server")
			.assertDefaultsAreTheValues("tandem.coordinator.server.hanging.transaction-timeout",
					"tandem.coordinator.server.hanging.check-interval");
	}

	@Test
	void everyPropertyWithAValueHasADefaultInTheMetadata() throws Exception {
		new ConfigurationMetadataDefaults(CoordinatorServerProperties.class, "tandem.coordinator.server")
			.assertEveryValueHasADefault();
		new ConfigurationMetadataDefaults(CoordinatorServerKafkaProperties.class, "tandem.coordinator.server")
			.assertEveryValueHasADefault();
	}

}
