package dev.tandem.failover;

/**
 * Thrown when {@link FailoverReadiness} cannot read a cluster's settings at all (the cluster
 * is unreachable, or the call timed out).
 * <p>
 * Retriable: nothing was changed; call the check again later. Settings that could not be
 * read for lack of authorization do not cause this exception: they are reported as
 * {@link ReadinessFinding.Severity#UNKNOWN} findings.
 *
 * @author Tandem
 * @since 0.1.0
 */
public class FailoverReadinessException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Create an exception.
	 * @param message what could not be read, naming the cluster
	 * @param cause the underlying failure
	 * @since 0.1.0
	 */
	public FailoverReadinessException(String message, Throwable cause) {
		super(message, cause);
	}

}
