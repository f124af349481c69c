package dev.tandem.autoconfigure.diagnostics;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.tandem.transaction.ClusterUnavailableException;

/**
 * Reports a {@link ClusterUnavailableException} that stopped the start-up (with
 * {@code tandem.transaction.require-all-clusters-at-start=true}) naming the cluster's
 * {@code bootstrap-servers}, the timeout that expired and the property that allows starting
 * without it.
 *
 * @since 0.1.0
 */
public class ClusterUnavailableFailureAnalyzer extends AbstractFailureAnalyzer<ClusterUnavailableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, ClusterUnavailableException cause) {
		String cluster = cause.getCluster();
		return new FailureAnalysis("Kafka cluster '" + cluster + "' (property 'tandem.clusters." + cluster
				+ ".bootstrap-servers') did not answer at start-up: " + cause.getMessage(),
				"Check that tandem.clusters." + cluster + ".bootstrap-servers reaches the cluster's brokers within "
						+ "tandem.transaction.commit-timeout, or set tandem.transaction.require-all-clusters-at-start=false "
						+ "to start without it (its health is DOWN and transactions that need it fail until it is back).",
				cause);
	}

}
