package dev.tandem.autoconfigure;

import org.junit.jupiter.api.Test;

import dev.tandem.test.ConfigurationMetadataDefaults;

/**
 * The generated configuration metadata tells the IDE the defaults {@link TandemProperties} really
 * has. Most defaults are the core builder's constants, which the configuration processor cannot
 * read across classes; their metadata comes from {@code additional-spring-configuration-metadata.json},
 * and this test keeps it honest both ways ({@link ConfigurationMetadataDefaults}).
 */
class TandemPropertiesMetadataTests {

	private final ConfigurationMetadataDefaults metadata = new ConfigurationMetadataDefaults(TandemProperties.class,
			"tandem");

	@Test
	void everyDefaultInTheMetadataIsTheDefaultOfTheProperties() throws Exception {
		this.metadata.assertDefaultsAreTheValues("tandem.transaction.slots", "tandem.transaction.lease-timeout",
				"tandem.listener.attempts", "tandem.listener.pipeline-depth", "tandem.listener.max-records",
				"tandem.listener.growth", "tandem.listener.max-interval");
	}

	@Test
	void everyPropertyWithAValueHasADefaultInTheMetadata() throws Exception {
		this.metadata.assertEveryValueHasADefault();
	}

}
