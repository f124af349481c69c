package dev.tandem.coordinator.security;

import dev.tandem.transaction.DecisionLogException;

/**
 * The coordinator refused a command or query because the caller's certificate identity may
 * not act for the owner it touches, or because the operation is administrative and the caller
 * is no admin. Nothing of the command was applied.
 * <p>
 * Fatal for the request: retrying does not help. Fix the identity (the certificate's common
 * name) or the coordinator's policy ({@code tandem.coordinator.server.authorization.*}).
 *
 * @since 0.1.0
 */
public class CoordinatorAccessDeniedException extends DecisionLogException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates the exception.
	 * @param message what was refused, for whom and why
	 */
	public CoordinatorAccessDeniedException(String message) {
		super(message);
	}

}
