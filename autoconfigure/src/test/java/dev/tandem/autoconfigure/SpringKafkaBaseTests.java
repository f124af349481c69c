package dev.tandem.autoconfigure;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.DefaultKafkaProducerFactoryCustomizer;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.metrics.KafkaMetricsAutoConfiguration;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.MicrometerProducerListener;
import org.springframework.kafka.core.ProducerFactory;

import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.autoconfigure.kafka.TandemKafkaAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code spring.kafka.*} is the base of every cluster under {@code tandem.clusters}: each level
 * of precedence (inherited, per-cluster properties and sections, per-cluster SSL bundle,
 * connection details), Spring Boot's factory customizers and listener settings on Tandem's
 * beans, and the mistakes reported with the property to fix. No broker is needed: these
 * contexts have cross-cluster transactions off.
 */
class SpringKafkaBaseTests {

	@TempDir
	static Path stores;

	static Path truststore;

	@BeforeAll
	static void writeTruststore() throws Exception {
		KeyStore store = KeyStore.getInstance("PKCS12");
		store.load(null, null);
		truststore = stores.resolve("trust.p12");
		try (OutputStream out = Files.newOutputStream(truststore)) {
			store.store(out, "secret".toCharArray());
		}
	}

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(SslAutoConfiguration.class, KafkaAutoConfiguration.class,
				TandemAutoConfiguration.class, TandemKafkaAutoConfiguration.class))
		.withPropertyValues("tandem.transaction.enabled=false", "tandem.failover.enabled=false",
				"tandem.clusters.east.bootstrap-servers=east:9092", "tandem.clusters.west.bootstrap-servers=west:9092");

	private ApplicationContextRunner withBundles() {
		return this.runner.withPropertyValues(bundle("shared"), bundle("west-only"),
				"spring.ssl.bundle.jks.shared.truststore.password=secret",
				"spring.ssl.bundle.jks.west-only.truststore.password=secret");
	}

	private static String bundle(String name) {
		return "spring.ssl.bundle.jks." + name + ".truststore.location=file:" + truststore;
	}

	@Test
	void everyClusterInheritsSpringKafkaSecurityPropertiesAndSectionsButNotItsBootstrapServers() {
		this.runner
			.withPropertyValues("spring.kafka.bootstrap-servers=spring:9092", "spring.kafka.security.protocol=SASL_SSL",
					"spring.kafka.properties.sasl.mechanism=PLAIN", "spring.kafka.producer.acks=1",
					"spring.kafka.consumer.max-poll-records=77", "spring.kafka.admin.properties.retries=5")
			.run((context) -> {
				TandemClusters clusters = context.getBean(TandemClusters.class);
				for (String cluster : List.of("east", "west")) {
					assertThat(clusters.producerConfig(cluster)).containsEntry("bootstrap.servers", cluster + ":9092")
						.containsEntry("security.protocol", "SASL_SSL")
						.containsEntry("sasl.mechanism", "PLAIN")
						.containsEntry("acks", "1");
					assertThat(clusters.consumerConfig(cluster)).containsEntry("security.protocol", "SASL_SSL")
						.containsEntry("max.poll.records", 77)
						.doesNotContainKey("acks");
					assertThat(clusters.adminConfig(cluster)).containsEntry("retries", "5")
						.containsEntry("sasl.mechanism", "PLAIN");
					assertThat(clusters.commonConfig(cluster)).containsEntry("security.protocol", "SASL_SSL");
				}
			});
	}

	@Test
	void aClustersOwnPropertiesAndSectionsWinOverInheritedOnes() {
		this.runner
			.withPropertyValues("spring.kafka.properties.sasl.mechanism=PLAIN", "spring.kafka.consumer.max-poll-records=77",
					"spring.kafka.producer.acks=1", "tandem.clusters.west.properties.sasl.mechanism=SCRAM-SHA-512",
					"tandem.clusters.west.consumer.max.poll.records=5", "tandem.clusters.west.properties.acks=all")
			.run((context) -> {
				TandemClusters clusters = context.getBean(TandemClusters.class);
				assertThat(clusters.consumerConfig("east")).containsEntry("sasl.mechanism", "PLAIN")
					.containsEntry("max.poll.records", 77);
				assertThat(clusters.consumerConfig("west")).containsEntry("sasl.mechanism", "SCRAM-SHA-512")
					.containsEntry("max.poll.records", "5");
				assertThat(clusters.producerConfig("west")).containsEntry("acks", "all");
				assertThat(clusters.producerConfig("east")).containsEntry("acks", "1");
			});
	}

	@Test
	void springKafkaSslBundleReachesEveryClusterAndAClusterBundleReplacesIt() {
		withBundles().withPropertyValues("spring.kafka.ssl.bundle=shared", "spring.kafka.security.protocol=SSL",
				"tandem.clusters.west.ssl.bundle=west-only")
			.run((context) -> {
				SslBundles bundles = context.getBean(SslBundles.class);
				TandemClusters clusters = context.getBean(TandemClusters.class);
				assertThat(clusters.producerConfig("east")).containsEntry("security.protocol", "SSL")
					.containsEntry("ssl.engine.factory.class",
							"org.springframework.boot.kafka.autoconfigure.SslBundleSslEngineFactory")
					.containsEntry(SslBundle.class.getName(), bundles.getBundle("shared"));
				assertThat(clusters.consumerConfig("east")).containsEntry(SslBundle.class.getName(),
						bundles.getBundle("shared"));
				assertThat(clusters.producerConfig("west")).containsEntry("security.protocol", "SSL")
					.containsEntry(SslBundle.class.getName(), bundles.getBundle("west-only"));
				assertThat(clusters.adminConfig("west")).containsEntry(SslBundle.class.getName(),
						bundles.getBundle("west-only"));
			});
	}

	@Test
	void aClusterWithItsOwnSslPropertiesDropsTheInheritedBundle() {
		withBundles().withPropertyValues("spring.kafka.ssl.bundle=shared",
				"tandem.clusters.west.properties.ssl.truststore.location=/etc/west.p12")
			.run((context) -> {
				TandemClusters clusters = context.getBean(TandemClusters.class);
				assertThat(clusters.producerConfig("west")).doesNotContainKey(SslBundle.class.getName())
					.doesNotContainKey("ssl.engine.factory.class")
					.containsEntry("ssl.truststore.location", "/etc/west.p12");
				assertThat(clusters.producerConfig("east")).containsKey(SslBundle.class.getName());
			});
	}

	@Test
	void anUnknownClusterSslBundleFailsNamingTheProperty() {
		withBundles().withPropertyValues("tandem.clusters.west.ssl.bundle=missing").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("'missing'")
				.isInstanceOfSatisfying(TandemConfigurationException.class,
						(ex) -> assertThat(ex.getProperty()).isEqualTo("tandem.clusters.west.ssl.bundle"));
		});
	}

	@Test
	void connectionDetailsWinOverTheClustersBootstrapServersAndSecurity() {
		withBundles().withPropertyValues("spring.kafka.security.protocol=SASL_SSL")
			.withUserConfiguration(EastConnectionDetails.class)
			.run((context) -> {
				TandemClusters clusters = context.getBean(TandemClusters.class);
				SslBundle bundle = context.getBean(SslBundles.class).getBundle("west-only");
				assertThat(clusters.producerConfig("east")).containsEntry("bootstrap.servers", "container:1234")
					.containsEntry("security.protocol", "SSL")
					.containsEntry(SslBundle.class.getName(), bundle);
				assertThat(clusters.consumerConfig("west")).containsEntry("bootstrap.servers", "west:9092")
					.containsEntry("security.protocol", "SASL_SSL")
					.doesNotContainKey(SslBundle.class.getName());
			});
	}

	@Test
	void connectionDetailsMakeBootstrapServersOptional() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(TandemAutoConfiguration.class, TandemKafkaAutoConfiguration.class))
			.withPropertyValues("tandem.transaction.enabled=false", "tandem.clusters.east.consumer.max.poll.records=10")
			.withBean(TandemClusterConnectionDetails.class,
					() -> TandemClusterConnectionDetails.of("east", List.of("embedded:1")))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(TandemClusters.class).consumerConfig("east"))
					.containsEntry("bootstrap.servers", "embedded:1");
				assertThat(context.getBean("eastKafkaTemplate")).isNotNull();
			});
	}

	@Test
	void connectionDetailsOfAnUndeclaredClusterFailNamingIt() {
		this.runner
			.withBean(TandemClusterConnectionDetails.class,
					() -> TandemClusterConnectionDetails.of("north", List.of("north:1")))
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("[east, west]")
				.isInstanceOfSatisfying(TandemConfigurationException.class,
						(ex) -> assertThat(ex.getProperty()).isEqualTo("tandem.clusters.north")));
	}

	@Test
	void bootsFactoryCustomizersClientMetricsAndListenerSettingsApplyToTandemsBeans() {
		this.runner.withConfiguration(AutoConfigurations.of(KafkaMetricsAutoConfiguration.class))
			.withUserConfiguration(Customizers.class)
			.withPropertyValues("spring.kafka.listener.poll-timeout=1234ms", "spring.kafka.listener.observation-enabled=true")
			.run((context) -> {
				DefaultKafkaProducerFactory<?, ?> factory = context.getBean("westKafkaProducerFactory",
						DefaultKafkaProducerFactory.class);
				List<Object> producerListeners = List.copyOf(factory.getListeners());
				assertThat(producerListeners).hasAtLeastOneElementOfType(MicrometerProducerListener.class)
					.contains(Customizers.LISTENER);
				ConcurrentKafkaListenerContainerFactory<?, ?> listeners = context.getBean(
						"eastKafkaListenerContainerFactory", ConcurrentKafkaListenerContainerFactory.class);
				assertThat(listeners.getContainerProperties().getPollTimeout()).isEqualTo(1234);
				assertThat(listeners.getContainerProperties().isObservationEnabled()).isTrue();
			});
	}

	@Test
	void withoutSpringBootsKafkaModuleClustersStillResolveFromTheirOwnProperties() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(TandemAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("org.springframework.boot.kafka"))
			.withPropertyValues("tandem.transaction.enabled=false", "tandem.clusters.east.bootstrap-servers=east:9092",
					"spring.kafka.security.protocol=SSL")
			.run((context) -> {
				assertThat(context).hasNotFailed().doesNotHaveBean(TandemClientDefaults.class);
				assertThat(context.getBean(TandemClusters.class).producerConfig("east"))
					.containsEntry("bootstrap.servers", "east:9092")
					.doesNotContainKey("security.protocol");
			});
	}

	@Configuration(proxyBeanMethods = false)
	static class EastConnectionDetails {

		@Bean
		TandemClusterConnectionDetails eastDetails(SslBundles bundles) {
			return new TandemClusterConnectionDetails() {

				@Override
				public String getCluster() {
					return "east";
				}

				@Override
				public List<String> getBootstrapServers() {
					return List.of("container:1234");
				}

				@Override
				public String getSecurityProtocol() {
					return "SSL";
				}

				@Override
				public SslBundle getSslBundle() {
					return bundles.getBundle("west-only");
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Customizers {

		static final ProducerFactory.Listener<Object, Object> LISTENER = new ProducerFactory.Listener<>() {
		};

		@Bean
		MeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		@SuppressWarnings("unchecked")
		DefaultKafkaProducerFactoryCustomizer marker() {
			return (factory) -> ((DefaultKafkaProducerFactory<Object, Object>) factory).addListener(LISTENER);
		}

	}

}
