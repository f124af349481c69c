package dev.tandem.mirror.app;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The Tandem mirror as a process:
 * {@code java -jar tandem-mirror-<version>-exec.jar --spring.config.location=mirror.yml}, configured
 * by {@code tandem.clusters.*} (the source and target clusters), {@code tandem.transaction.instance-id}
 * (unique per instance), {@code tandem.coordinator.*} (embedded, or the shared remote coordinator
 * when several instances run) and {@code tandem.mirror.*} ({@link MirrorProperties}).
 *
 * @since 0.1.0
 */
@SpringBootApplication
public class MirrorApplication {

	/**
	 * Defaults that hold even when {@code --spring.config.location} replaces the packaged
	 * configuration: the id prefix and which actuator endpoints are exposed.
	 * @return the default properties
	 */
	static Map<String, Object> defaults() {
		Map<String, Object> defaults = new LinkedHashMap<>();
		defaults.put("spring.application.name", "tandem-mirror");
		defaults.put("spring.main.banner-mode", "off");
		defaults.put("tandem.transaction.id-prefix", "tandem-mirror");
		defaults.put("management.endpoints.web.exposure.include", "health,kafkamirror,kafkatransactions,metrics");
		defaults.put("management.endpoint.health.show-details", "always");
		defaults.put("management.endpoint.health.probes.enabled", "true");
		return defaults;
	}

	/**
	 * Starts the mirror.
	 * @param args Spring Boot arguments, such as {@code --spring.config.location=mirror.yml}
	 */
	public static void main(String[] args) {
		try {
			run(args);
		}
		catch (RuntimeException ex) {
			// Spring Boot has logged the failure (and its analysis) and closed the context; a
			// thread it could not stop must not keep a failed mirror's JVM alive, or a service
			// manager never sees the failure.
			System.exit(1);
		}
	}

	static ConfigurableApplicationContext run(String... args) {
		SpringApplication application = new SpringApplication(MirrorApplication.class);
		application.setDefaultProperties(defaults());
		return application.run(args);
	}

}
