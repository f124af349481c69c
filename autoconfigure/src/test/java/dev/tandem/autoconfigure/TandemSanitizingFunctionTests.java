package dev.tandem.autoconfigure;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.context.properties.ConfigurationPropertiesReportEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.env.EnvironmentEndpointAutoConfiguration;
import org.springframework.boot.actuate.context.properties.ConfigurationPropertiesReportEndpoint;
import org.springframework.boot.actuate.context.properties.ConfigurationPropertiesReportEndpoint.ConfigurationPropertiesBeanDescriptor;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.actuate.env.EnvironmentEndpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.tandem.autoconfigure.actuate.TandemActuatorAutoConfiguration;
import dev.tandem.autoconfigure.actuate.TandemSanitizingFunction;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Credential-like client properties of Tandem's clusters (and of {@code spring.kafka.*}, which
 * they inherit) are masked in {@code configprops} and {@code env} even with
 * {@code show-values=always}; other values stay readable.
 */
class TandemSanitizingFunctionTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class,
				ConfigurationPropertiesReportEndpointAutoConfiguration.class, EnvironmentEndpointAutoConfiguration.class,
				TandemAutoConfiguration.class, TandemActuatorAutoConfiguration.class))
		.withPropertyValues("management.endpoints.web.exposure.include=configprops,env",
				"management.endpoint.configprops.show-values=always", "management.endpoint.env.show-values=always",
				"tandem.transaction.enabled=false", "tandem.failover.enabled=false",
				"tandem.clusters.east.bootstrap-servers=localhost:9092",
				"tandem.clusters.east.properties.sasl.mechanism=PLAIN",
				"tandem.clusters.east.properties.sasl.jaas.config=PlainLoginModule required password=\"hunter2\";",
				"tandem.clusters.east.consumer.ssl.keystore.password=changeit",
				"tandem.clusters.east.producer.ssl.keystore.key=-----BEGIN PRIVATE KEY-----",
				"spring.kafka.properties.sasl.jaas.config=PlainLoginModule required password=\"hunter3\";");

	@Test
	void configpropsMasksClusterCredentialsWithShowValuesAlways() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(TandemSanitizingFunction.class);
			ConfigurationPropertiesBeanDescriptor tandem = context.getBean(ConfigurationPropertiesReportEndpoint.class)
				.configurationProperties()
				.getContexts()
				.values()
				.iterator()
				.next()
				.getBeans()
				.values()
				.stream()
				.filter((bean) -> bean.getPrefix().equals("tandem"))
				.findFirst()
				.orElseThrow();
			Map<String, Object> east = map(map(tandem.getProperties().get("clusters")).get("east"));
			assertThat(map(east.get("properties"))).containsEntry("sasl.jaas.config", "******")
				.containsEntry("sasl.mechanism", "PLAIN");
			assertThat(map(east.get("consumer"))).containsEntry("ssl.keystore.password", "******");
			assertThat(map(east.get("producer"))).containsEntry("ssl.keystore.key", "******");
			assertThat(east.get("bootstrapServers")).asString().contains("localhost:9092");
		});
	}

	@Test
	void envMasksClusterAndInheritedSpringKafkaCredentialsWithShowValuesAlways() {
		this.runner.run((context) -> {
			EnvironmentEndpoint env = context.getBean(EnvironmentEndpoint.class);
			assertThat(env.environmentEntry("tandem.clusters.east.properties.sasl.jaas.config").getProperty().getValue())
				.isEqualTo("******");
			assertThat(env.environmentEntry("spring.kafka.properties.sasl.jaas.config").getProperty().getValue())
				.isEqualTo("******");
			assertThat(env.environmentEntry("tandem.clusters.east.properties.sasl.mechanism").getProperty().getValue())
				.isEqualTo("PLAIN");
		});
	}

	@Test
	void withoutActuatorThereIsNoSanitizingFunction() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(TandemAutoConfiguration.class, TandemActuatorAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(SanitizingFunction.class))
			.withPropertyValues("tandem.transaction.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(TandemSanitizingFunction.class));
	}

	@Test
	void onlyCredentialLikeKeysOfTandemAndSpringKafkaAreCredentials() {
		assertThat(TandemSanitizingFunction.isCredential("tandem.clusters.a.properties.basic.auth.user.info")).isTrue();
		assertThat(TandemSanitizingFunction.isCredential("tandem.coordinator.tls.key-store-password")).isTrue();
		assertThat(TandemSanitizingFunction.isCredential("tandem.clusters.a.properties.sasl.mechanism")).isFalse();
		assertThat(TandemSanitizingFunction.isCredential("server.ssl.key-store-password")).isFalse();
	}

	@Test
	void databasePasswordsAreCredentials() {
		assertThat(TandemSanitizingFunction.isCredential("tandem.datasources.ledger.password")).isTrue();
		assertThat(TandemSanitizingFunction.isCredential("tandem.datasources.ledger.xa-properties.password")).isTrue();
		assertThat(TandemSanitizingFunction.isCredential("tandem.datasources.ledger.username")).isFalse();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> map(Object value) {
		assertThat(value).isInstanceOf(Map.class);
		return (Map<String, Object>) value;
	}

}
