package dev.tandem.transaction;

import org.jspecify.annotations.Nullable;

/**
 * The cross-cluster transaction was aborted on every participant before a commit decision was
 * made: none of its records and offsets is visible on any cluster. Not fatal: the caller may
 * retry the whole unit of work in a new transaction (a consumer should seek back to its last
 * committed offsets).
 *
 * @since 0.1.0
 */
public class TransactionAbortedException extends TandemException {

	private static final long serialVersionUID = 1L;

	public TransactionAbortedException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

}
