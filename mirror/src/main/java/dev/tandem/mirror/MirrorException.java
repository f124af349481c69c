package dev.tandem.mirror;

import org.jspecify.annotations.Nullable;

/**
 * A mirror could not reach or change a cluster (list, describe or create topics, read offsets).
 * Retriable: the mirror's transaction aborts, its consumer is rewound and the work is retried
 * after a back-off; nothing is lost or written twice.
 *
 * @since 0.1.0
 */
public class MirrorException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message what failed
	 * @param cause the cause, or {@code null}
	 */
	public MirrorException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

}
