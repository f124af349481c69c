package dev.tandem.transaction;

/**
 * A {@link DecisionLog} call failed or did not finish in time. Retriable: for a
 * {@code decide} whose outcome is unknown, the caller must read the transaction's
 * {@link DecisionState} until it is known, and must never report success before that.
 *
 * @since 0.1.0
 */
public class DecisionLogException extends TandemException {

	private static final long serialVersionUID = 1L;

	public DecisionLogException(String message) {
		super(message);
	}

	public DecisionLogException(String message, Throwable cause) {
		super(message, cause);
	}

}
