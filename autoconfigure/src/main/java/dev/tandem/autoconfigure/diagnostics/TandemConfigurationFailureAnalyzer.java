package dev.tandem.autoconfigure.diagnostics;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a {@link TandemConfigurationException} as "property X: what is wrong" and its fix.
 *
 * @since 0.1.0
 */
public class TandemConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<TandemConfigurationException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, TandemConfigurationException cause) {
		return new FailureAnalysis("Tandem is misconfigured (property '" + cause.getProperty() + "'): "
				+ cause.getMessage(), cause.getAction(), cause);
	}

}
