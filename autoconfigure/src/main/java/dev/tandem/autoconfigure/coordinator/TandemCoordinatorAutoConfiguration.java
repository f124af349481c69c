package dev.tandem.autoconfigure.coordinator;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;

import dev.tandem.autoconfigure.TandemAutoConfiguration;
import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.autoconfigure.TandemProperties.Coordinator.Mode;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.transaction.DecisionLog;

/**
 * The decision log: an embedded single Ratis peer with its log under
 * {@code tandem.coordinator.data-dir} (default), or a client of the remote coordinator peers in
 * {@code tandem.coordinator.peers}, over mutual TLS with the certificate of the SSL bundle
 * {@code tandem.coordinator.ssl.bundle} (plain text only with
 * {@code tandem.coordinator.plaintext-allowed=true}). In remote mode the app does not purge
 * finished records: the coordinator service does.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = TandemAutoConfiguration.class)
@ConditionalOnProperty(prefix = "tandem.transaction", name = "enabled", matchIfMissing = true)
public class TandemCoordinatorAutoConfiguration {

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	DecisionLog tandemDecisionLog(TandemProperties properties, ObjectProvider<SslBundles> sslBundles) {
		// before any peer starts: a bad tandem.transaction.* setting leaves no data directory behind
		properties.getTransaction().validate();
		TandemProperties.Coordinator coordinator = properties.getCoordinator();
		if (coordinator.getMode() == Mode.REMOTE) {
			if (coordinator.getPeers().isEmpty()) {
				throw new TandemConfigurationException("tandem.coordinator.peers",
						"tandem.coordinator.mode is REMOTE but no coordinator peers are configured.",
						"Set tandem.coordinator.peers to the coordinator service's peers as id=host:port "
								+ "(for example n0=tandem-0.tandem:9870,n1=...), or remove tandem.coordinator.mode to run "
								+ "the coordinator embedded.");
			}
			return Coordinators.remote(coordinator.getPeers(), Coordinators.tls(coordinator, sslBundles.getIfAvailable()));
		}
		Path dataDir = coordinator.getDataDir().toAbsolutePath();
		checkWritable(dataDir);
		return Coordinators.embedded(dataDir);
	}

	static void checkWritable(Path dataDir) {
		try {
			Files.createDirectories(dataDir);
			Path probe = Files.createTempFile(dataDir, ".write-probe", ".tmp");
			Files.delete(probe);
		}
		catch (IOException | SecurityException ex) {
			throw new TandemConfigurationException("tandem.coordinator.data-dir",
					"The embedded coordinator's data directory " + dataDir + " is not writable (" + ex + ").",
					"Set tandem.coordinator.data-dir to a writable directory that survives restarts (a persistent "
							+ "volume in containers).");
		}
	}

}
