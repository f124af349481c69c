package dev.tandem.autoconfigure.diagnostics;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.tandem.transaction.DuplicateInstanceException;

/**
 * Reports a {@link DuplicateInstanceException} (another running instance holds this instance's id)
 * naming {@code tandem.transaction.instance-id} and how to give every instance its own.
 *
 * @since 0.1.0
 */
public class DuplicateInstanceFailureAnalyzer extends AbstractFailureAnalyzer<DuplicateInstanceException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, DuplicateInstanceException cause) {
		return new FailureAnalysis("Tandem is misconfigured (property 'tandem.transaction.instance-id'): "
				+ cause.getMessage() + " Two running instances with one id fence each other's producers and leave "
				+ "transactions visible on some clusters only.",
				"Give every running instance its own tandem.transaction.instance-id, stable across its restarts: for "
						+ "example the StatefulSet pod name (tandem.transaction.instance-id=${HOSTNAME}). If the other "
						+ "instance is gone, start again after tandem.transaction.lease-timeout.",
				cause);
	}

}
