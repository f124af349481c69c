package dev.tandem.autoconfigure.coordinator;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;

import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.security.CoordinatorTls;
import dev.tandem.transaction.DecisionLog;

/**
 * Creates the decision log of each coordinator mode.
 */
final class Coordinators {

	private Coordinators() {
	}

	static @Nullable CoordinatorTls tls(TandemProperties.Coordinator coordinator, @Nullable SslBundles sslBundles) {
		String name = coordinator.getSsl().getBundle();
		if (name == null || name.isBlank()) {
			if (coordinator.isPlaintextAllowed()) {
				return null;
			}
			throw new TandemConfigurationException("tandem.coordinator.ssl.bundle",
					"tandem.coordinator.mode is REMOTE but no SSL bundle is set: the app would send its decisions in "
							+ "plain text, and the coordinator requires a client certificate unless it runs in plain text.",
					"Set tandem.coordinator.ssl.bundle to a Spring Boot SSL bundle (spring.ssl.bundle.jks.<name> or "
							+ "spring.ssl.bundle.pem.<name>) holding this app's certificate and the coordinator's CA, or set "
							+ "tandem.coordinator.plaintext-allowed=true for a coordinator on a trusted network.");
		}
		SslBundle bundle;
		try {
			if (sslBundles == null) {
				throw new NoSuchSslBundleException(name, "no SslBundles bean");
			}
			bundle = sslBundles.getBundle(name);
		}
		catch (NoSuchSslBundleException ex) {
			throw new TandemConfigurationException("tandem.coordinator.ssl.bundle",
					"tandem.coordinator.ssl.bundle names SSL bundle '" + name + "' but there is none (" + ex.getMessage()
							+ ").",
					"Define it under spring.ssl.bundle.jks." + name + " or spring.ssl.bundle.pem." + name + ".");
		}
		try {
			return CoordinatorTls.of(bundle.getManagers().getKeyManagers(), bundle.getManagers().getTrustManagers(),
					"SSL bundle '" + name + "'");
		}
		catch (IllegalArgumentException ex) {
			throw new TandemConfigurationException("tandem.coordinator.ssl.bundle", ex.getMessage() + ".",
					"Give the bundle both a key store (this app's certificate) and a trust store (the coordinator's CA).");
		}
	}

	static DecisionLog remote(List<String> peers, @Nullable CoordinatorTls tls) {
		CoordinatorGroup group;
		try {
			group = CoordinatorGroup.parse(String.join(",", peers));
		}
		catch (IllegalArgumentException ex) {
			throw new TandemConfigurationException("tandem.coordinator.peers", ex.getMessage() + ".",
					"List the coordinator peers as id=host:port items, for example n0=tandem-0.tandem:9870.");
		}
		// purging is administrative: the coordinator service does it
		return RatisDecisionLog.builder(group).tls(tls).purgeInterval(Duration.ZERO).build();
	}

	static DecisionLog embedded(Path dataDir) {
		try {
			return new EmbeddedDecisionLog(EmbeddedCoordinator.start(dataDir));
		}
		catch (java.io.IOException ex) {
			throw new TandemConfigurationException("tandem.coordinator.data-dir",
					"The embedded coordinator could not use " + dataDir + ": " + ex.getMessage() + ".",
					"Set tandem.coordinator.data-dir to a writable directory that only this app instance uses.");
		}
		catch (java.util.concurrent.CompletionException | IllegalStateException ex) {
			throw new TandemConfigurationException("tandem.coordinator.data-dir",
					"The embedded coordinator could not start in " + dataDir + ": " + ex.getMessage()
							+ " (another process may be using the same directory).",
					"Give each app instance its own tandem.coordinator.data-dir.");
		}
		catch (java.util.concurrent.TimeoutException ex) {
			throw new IllegalStateException("The embedded coordinator did not elect itself leader in time", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while starting the embedded coordinator", ex);
		}
	}

}
