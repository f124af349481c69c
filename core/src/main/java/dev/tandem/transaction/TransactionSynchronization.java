package dev.tandem.transaction;

/**
 * Work tied to the life of one {@link CrossClusterTransaction}, registered with
 * {@link CrossClusterTransaction#registerSynchronization}: a resource that buffers writes (a JPA
 * persistence context) flushes them into an enlisted database before phase one, and releases
 * itself when the transaction ends. The idea is JTA's {@code jakarta.transaction.Synchronization}
 * ({@code beforeCompletion}/{@code afterCompletion}), narrowed to what a two-phase commit whose
 * branches Tandem prepares itself needs.
 * <p>
 * Implementations need not be thread-safe: each method is called once, {@link #beforePrepare()}
 * before {@link #afterCompletion}, never at the same time.
 *
 * @since 0.1.0
 */
public interface TransactionSynchronization {

	/**
	 * Called once when the transaction begins to commit, before any participant is flushed or any
	 * database branch prepared, while the transaction is still active (its databases can still be
	 * written): on the thread that calls {@link CrossClusterTransaction#commit()}, or, for a
	 * pipelined transaction, on the thread that hands it to {@link TransactionPipeline#commitAsync}.
	 * Not called when the transaction aborts without a commit attempt.
	 * @throws RuntimeException to refuse the commit: the transaction then aborts on every cluster and
	 *     database, and the commit throws {@link TransactionAbortedException} with this cause
	 */
	default void beforePrepare() {
	}

	/**
	 * Called once when the transaction ends (committed, aborted, heuristic) or is handed to
	 * background resolution (in-doubt), on the thread that ended it: release what was held. Nothing
	 * may be written in the transaction any more. An exception is logged and otherwise ignored.
	 * @param state the state the transaction reached: {@code COMMITTED}, {@code ABORTED},
	 *     {@code HEURISTIC_MIXED} or {@code IN_DOUBT}
	 */
	default void afterCompletion(TransactionState state) {
	}

}
