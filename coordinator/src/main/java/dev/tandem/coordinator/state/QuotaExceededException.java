package dev.tandem.coordinator.state;

import dev.tandem.transaction.TandemException;

/**
 * A command would take an identity past one of its {@link CoordinatorQuotas} (open decisions or
 * leases of the owners it acts for): the coordinator refuses it before it reaches the log.
 * <p>
 * Retriable once the identity holds fewer records (its decided transactions complete, its leases
 * are released or purged); a steady refusal means an app leaks decisions or instance ids, or the
 * quota is too small for it ({@code tandem.coordinator.server.quotas.*}).
 *
 * @since 0.1.0
 */
public class QuotaExceededException extends TandemException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates an exception.
	 * @param message which identity passes which quota, and the property that sets it
	 */
	public QuotaExceededException(String message) {
		super(message);
	}

}
