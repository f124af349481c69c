package dev.tandem.coordinator.state;

import dev.tandem.transaction.TandemException;

/**
 * Bytes are not a valid message or snapshot of {@link DecisionCodec}: truncated, corrupt, of an
 * unsupported format version, or of another kind than expected.
 * <p>
 * Fatal for that message: retrying the same bytes fails the same way. A peer that reads such
 * a snapshot must not start from it (restore another snapshot or replay from a healthy peer);
 * a peer that receives such a request refuses it.
 *
 * @since 0.1.0
 */
public class DecisionCodecException extends TandemException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message what is wrong with the bytes
	 */
	public DecisionCodecException(String message) {
		super(message);
	}

	/**
	 * Creates an exception.
	 * @param message what is wrong with the bytes
	 * @param cause the underlying failure
	 */
	public DecisionCodecException(String message, Throwable cause) {
		super(message, cause);
	}

}
