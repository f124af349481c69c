package dev.tandem.transaction;

/**
 * Base type of Tandem's unchecked exceptions.
 *
 * @since 0.1.0
 */
public class TandemException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public TandemException(String message) {
		super(message);
	}

	public TandemException(String message, Throwable cause) {
		super(message, cause);
	}

}
