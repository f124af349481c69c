package dev.tandem.coordinator.state;

/**
 * A command breaks one of the {@link CommandLimits} (a field too long or empty, a count or a
 * number out of its range): the coordinator refuses it before it reaches the log.
 * <p>
 * Fatal for that command: sending it again fails the same way. The message names the operation,
 * the field and its limit; the caller must shorten the field (for an id prefix or instance id,
 * change {@code tandem.transaction.id-prefix} or {@code tandem.transaction.instance-id}).
 *
 * @since 0.1.0
 */
public class InvalidCommandException extends DecisionCodecException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message which operation and field break which limit
	 */
	public InvalidCommandException(String message) {
		super(message);
	}

}
