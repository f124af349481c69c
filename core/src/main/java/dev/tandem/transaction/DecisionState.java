package dev.tandem.transaction;

/**
 * What the {@link DecisionLog} knows of one transaction id.
 *
 * @since 0.1.0
 */
public enum DecisionState {

	/**
	 * No record: the transaction was never decided, so it is aborted (presumed abort), or its
	 * completed record was purged after the retention period.
	 */
	UNKNOWN,

	/**
	 * Decided to commit; some participant may not have committed yet (in-doubt until
	 * {@link #COMPLETED}).
	 */
	DECIDED,

	/** Decided, and every participant committed. */
	COMPLETED,

	/** Explicitly recorded as aborted. */
	ABORTED

}
