package dev.tandem.autoconfigure.coordinator;

import java.nio.file.Path;
import java.util.List;

import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.transaction.DecisionLog;

/**
 * Creates the decision log of each coordinator mode.
 */
final class Coordinators {

	private Coordinators() {
	}

	static DecisionLog remote(List<String> peers) {
		CoordinatorGroup group;
		try {
			group = CoordinatorGroup.parse(String.join(",", peers));
		}
		catch (IllegalArgumentException ex) {
			throw new TandemConfigurationException("tandem.coordinator.peers", ex.getMessage() + ".",
					"List the coordinator peers as id=host:port items, for example n0=tandem-0.tandem:9870.");
		}
		return RatisDecisionLog.builder(group).build();
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
