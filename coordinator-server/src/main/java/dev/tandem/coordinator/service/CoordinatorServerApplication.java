package dev.tandem.coordinator.service;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

import dev.tandem.coordinator.server.CoordinatorServer;

/**
 * The coordinator service: one peer of Tandem's decision log per process (run three or five,
 * for example with the {@code helm/tandem} chart). Configure it with
 * {@code tandem.coordinator.server.*} ({@link CoordinatorServerProperties}); health at
 * {@code /actuator/health} (readiness: {@code /actuator/health/readiness}), metrics at
 * {@code /actuator/prometheus}.
 *
 * @since 0.1.0
 */
@SpringBootApplication
public class CoordinatorServerApplication {

	/**
	 * Runs the service.
	 * @param args command-line arguments ({@code --tandem.coordinator.server.peer-id=...})
	 */
	public static void main(String[] args) {
		CoordinatorServer.useCommonPoolForAsyncTasks();
		SpringApplication.run(CoordinatorServerApplication.class, args);
	}

}
