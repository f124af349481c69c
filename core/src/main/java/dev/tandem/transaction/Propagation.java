package dev.tandem.transaction;

/**
 * How a {@link CrossClusterTransactionTemplate} or a {@code @CrossClusterTransactional} method
 * relates to a cross-cluster transaction already bound to the calling thread; the same terms as
 * Spring's {@code @Transactional}.
 *
 * @since 0.1.0
 */
public enum Propagation {

	/**
	 * Join the current transaction, or begin one if there is none. An exception that asks for
	 * rollback inside a joined scope marks the whole transaction rollback-only: the outermost
	 * scope then aborts it and throws {@link TransactionAbortedException}, even if the exception
	 * was caught in between.
	 */
	REQUIRED,

	/**
	 * Always begin a new, independent transaction; the current one (if any) is suspended until
	 * the new one ends. Each nesting level holds one slot, so {@code tandem.transaction.slots}
	 * must be at least the nesting depth.
	 */
	REQUIRES_NEW,

	/** Join the current transaction; throw {@link IllegalStateException} if there is none. */
	MANDATORY,

	/** Run without a transaction; throw {@link IllegalStateException} if one is bound. */
	NEVER

}
