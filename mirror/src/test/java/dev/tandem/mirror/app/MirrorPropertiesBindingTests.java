package dev.tandem.mirror.app;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Binding of {@code tandem.mirror.*}: a misspelt property stops the start-up naming it, instead
 * of being ignored (a typo in {@code topic-pattern} would otherwise mirror nothing, silently).
 */
class MirrorPropertiesBindingTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withUserConfiguration(PropertiesOnly.class);

	@Test
	void aMisspeltPropertyFailsTheStartUpNamingIt() {
		this.runner.withPropertyValues("tandem.mirror.topic-patern=orders.*").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("tandem.mirror.topic-patern");
		});
	}

	@Test
	void knownPropertiesBind() {
		this.runner.withPropertyValues("tandem.mirror.topic-pattern=orders.*", "tandem.mirror.max-records=5",
				"tandem.mirror.health.max-lag-records=10").run((context) -> {
			assertThat(context).hasNotFailed();
			MirrorProperties properties = context.getBean(MirrorProperties.class);
			assertThat(properties.getTopicPattern()).isEqualTo("orders.*");
			assertThat(properties.getMaxRecords()).isEqualTo(5);
			assertThat(properties.getHealth().getMaxLagRecords()).isEqualTo(10);
		});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(MirrorProperties.class)
	static class PropertiesOnly {

	}

}
