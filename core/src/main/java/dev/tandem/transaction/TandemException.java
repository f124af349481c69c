package dev.tandem.transaction;

import org.jspecify.annotations.Nullable;

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

	public TandemException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

}
