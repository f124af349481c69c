package dev.tandem.transaction;

import org.jspecify.annotations.Nullable;

/**
 * A pipelined transaction was aborted undecided because an earlier transaction of its
 * {@link TransactionPipeline} failed: nothing of it is visible on any cluster, and its work must
 * run again after the earlier transaction's (a consumer rewinds to the first offsets that were
 * not committed).
 *
 * @since 0.1.0
 */
public class PredecessorFailedException extends TransactionAbortedException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates the exception.
	 * @param message what was aborted and why
	 * @param cause the earlier transaction's failure
	 */
	public PredecessorFailedException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

}
