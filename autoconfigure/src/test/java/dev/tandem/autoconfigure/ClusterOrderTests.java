package dev.tandem.autoconfigure;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Clusters are listed in the order they are declared, even when a source that iterates in hash
 * order (environment variables, a {@code Map} of properties) overrides their settings, and by name
 * when only such a source names them.
 */
class ClusterOrderTests {

	private static final List<String> DECLARED = List.of("zeta", "alpha", "mid", "kilo", "beta", "omega");

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(TandemAutoConfiguration.class));

	@Test
	void clustersKeepTheirDeclaredOrderWhenAHashMapSourceOverridesThem() {
		Map<String, Object> overrides = new HashMap<>();
		DECLARED.forEach((name) -> overrides.put("tandem.clusters." + name + ".bootstrap-servers", name + "-new:9092"));
		this.runner
			.withPropertyValues(DECLARED.stream()
				.map((name) -> "tandem.clusters." + name + ".bootstrap-servers=" + name + ":9092")
				.toArray(String[]::new))
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("overrides", overrides)))
			.run((context) -> {
				TandemClusters clusters = context.getBean(TandemClusters.class);
				assertThat(clusters.names()).containsExactlyElementsOf(DECLARED);
				assertThat(String.valueOf(clusters.adminConfig("zeta").get("bootstrap.servers"))).contains("zeta-new:9092");
				assertThat(context.getBean(TandemProperties.class).getClusters().keySet())
					.containsExactlyElementsOf(DECLARED);
			});
	}

	@Test
	void clustersNamedOnlyByEnvironmentVariablesAreListedByName() {
		Map<String, Object> variables = new HashMap<>();
		DECLARED.forEach((name) -> variables.put("TANDEM_CLUSTERS_" + name.toUpperCase() + "_BOOTSTRAP_SERVERS",
				name + ":9092"));
		this.runner
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new SystemEnvironmentPropertySource("test-" + StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
						variables)))
			.run((context) -> assertThat(context.getBean(TandemClusters.class).names())
				.containsExactly("alpha", "beta", "kilo", "mid", "omega", "zeta"));
	}

	@Test
	void aClusterAddedByAHigherSourceComesAfterTheDeclaredOnes() {
		Map<String, Object> overrides = new HashMap<>();
		overrides.put("tandem.clusters.added.bootstrap-servers", "added:9092");
		overrides.put("tandem.clusters.west.bootstrap-servers", "west-new:9092");
		this.runner
			.withPropertyValues("tandem.clusters.west.bootstrap-servers=west:9092",
					"tandem.clusters.east.bootstrap-servers=east:9092")
			.withInitializer((context) -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("overrides", overrides)))
			.run((context) -> assertThat(context.getBean(TandemClusters.class).names()).containsExactly("west", "east",
					"added"));
	}

}
