package dev.tandem.test;

/**
 * Thrown when an embedded Kafka cluster cannot be started, stopped or closed, or does not
 * reach an awaited state (topic ready, broker unfenced, leader moved) within the operation
 * timeout.
 * <p>
 * Fatal for the test that triggered it: the cluster may be left in an intermediate state, so
 * the caller should fail the test rather than retry. The cause, when present, is the
 * underlying Kafka or I/O failure.
 *
 * @author Tandem
 * @since 0.1.0
 */
public class EmbeddedKafkaClusterException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Create a new exception with the given message.
	 * @param message the detail message
	 */
	public EmbeddedKafkaClusterException(String message) {
		super(message);
	}

	/**
	 * Create a new exception with the given message and cause.
	 * @param message the detail message
	 * @param cause the underlying failure
	 */
	public EmbeddedKafkaClusterException(String message, Throwable cause) {
		super(message, cause);
	}

}
