package dev.tandem.transaction;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * Runs a unit of work in a cross-cluster transaction bound to the calling thread: commits when
 * the work returns, aborts when it throws an exception that asks for rollback (by default any
 * {@link RuntimeException} or {@link Error}, as with Spring's {@code @Transactional}, and a
 * non-transient database failure: {@link #defaultRollback(Throwable)}).
 * <p>
 * Immutable and thread-safe; the {@code with*} methods return copies. The transaction is bound
 * to the thread for the duration of the callback ({@link #currentTransaction()}), which is how
 * Tandem's per-cluster templates find it; the manager's {@link TransactionThreadBinding}s bind
 * their resources (a JPA entity manager) to the thread for the same time.
 *
 * @since 0.1.0
 */
public final class CrossClusterTransactionTemplate {

	private static final ThreadLocal<@Nullable Scope> CURRENT = new ThreadLocal<>();

	private final CrossClusterTransactionManager manager;

	private final Propagation propagation;

	private final Predicate<Throwable> rollbackOn;

	/**
	 * Creates a template with {@link Propagation#REQUIRED} and the default rollback rule.
	 * @param manager the started transaction manager
	 */
	public CrossClusterTransactionTemplate(CrossClusterTransactionManager manager) {
		this(manager, Propagation.REQUIRED, CrossClusterTransactionTemplate::defaultRollback);
	}

	private CrossClusterTransactionTemplate(CrossClusterTransactionManager manager, Propagation propagation,
			Predicate<Throwable> rollbackOn) {
		this.manager = Objects.requireNonNull(manager, "manager");
		this.propagation = Objects.requireNonNull(propagation, "propagation");
		this.rollbackOn = Objects.requireNonNull(rollbackOn, "rollbackOn");
	}

	/**
	 * Returns a copy with another propagation.
	 * @param propagation the propagation
	 * @return the copy
	 */
	public CrossClusterTransactionTemplate withPropagation(Propagation propagation) {
		return new CrossClusterTransactionTemplate(this.manager, propagation, this.rollbackOn);
	}

	/**
	 * Returns a copy with another rollback rule.
	 * @param rollbackOn whether an exception thrown by the work aborts the transaction; when it
	 *     returns false the transaction commits and the exception is rethrown
	 * @return the copy
	 */
	public CrossClusterTransactionTemplate withRollbackOn(Predicate<Throwable> rollbackOn) {
		return new CrossClusterTransactionTemplate(this.manager, this.propagation, rollbackOn);
	}

	/**
	 * Returns the manager this template begins transactions with.
	 * @return the manager
	 */
	public CrossClusterTransactionManager getManager() {
		return this.manager;
	}

	/**
	 * Returns the cross-cluster transaction bound to the calling thread.
	 * @return the transaction, or null outside any
	 */
	public static @Nullable CrossClusterTransaction currentTransaction() {
		Scope scope = CURRENT.get();
		return (scope != null) ? scope.transaction : null;
	}

	/**
	 * The default rollback rule: unchecked exceptions and errors, as with Spring's
	 * {@code @Transactional}, and a checked exception whose causes hold a non-transient database
	 * failure ({@link DatabaseFailures#isNonTransient(Throwable)}: a constraint violation, a data
	 * exception, a statement the database refuses), the {@code SQLException} of plain JDBC code
	 * say. Such a failure has already broken the transaction's database branch (PostgreSQL refuses
	 * every later statement of the transaction, its prepare among them), so committing on it would
	 * abort at commit, every time the records are processed again; aborting at once makes it a
	 * failure of the work like an unchecked one (which is what Spring's {@code JdbcTemplate} turns
	 * the same {@code SQLException} into). A transient database failure (the database unreachable,
	 * a deadlock) is left to the commit, which aborts when the branch could not prepare: the work
	 * is tried again, not failed.
	 * @param ex the exception
	 * @return whether it aborts the transaction
	 */
	public static boolean defaultRollback(Throwable ex) {
		return ex instanceof RuntimeException || ex instanceof Error || DatabaseFailures.isNonTransient(ex);
	}

	/**
	 * Runs work that declares no checked exception.
	 * @param <T> result type
	 * @param work the work; receives the transaction (null with {@link Propagation#NEVER})
	 * @return the work's result
	 * @throws TransactionAbortedException if the commit aborted, or the transaction was marked
	 *     rollback-only by a joined scope
	 * @throws InDoubtTransactionException if the decision is durable but a cluster could not commit yet
	 * @throws HeuristicOutcomeException on a mixed outcome
	 * @throws IllegalStateException for a propagation that cannot be honoured
	 */
	public <T> T execute(TransactionCallback<T, RuntimeException> work) {
		return executeChecked(work);
	}

	/**
	 * Runs work that may throw a checked exception; the rollback rule decides whether it aborts.
	 * @param <T> result type
	 * @param <E> checked exception type
	 * @param work the work
	 * @return the work's result
	 * @throws E as thrown by the work, after the abort (or commit, per the rollback rule)
	 * @throws TransactionAbortedException see {@link #execute(TransactionCallback)}
	 */
	public <T, E extends Throwable> T executeChecked(TransactionCallback<T, E> work) throws E {
		Scope current = CURRENT.get();
		switch (this.propagation) {
			case NEVER -> {
				if (current != null) {
					throw new IllegalStateException("Propagation NEVER but transaction "
							+ current.transaction.transactionId() + " is bound to this thread");
				}
				return work.doInTransaction(null);
			}
			case MANDATORY -> {
				if (current == null) {
					throw new IllegalStateException("Propagation MANDATORY but no cross-cluster transaction is bound "
							+ "to this thread");
				}
				return participate(current, work);
			}
			case REQUIRED -> {
				return (current != null) ? participate(current, work) : runNew(work, null);
			}
			case REQUIRES_NEW -> {
				return runNew(work, current);
			}
		}
		throw new IllegalStateException("Unknown propagation " + this.propagation);
	}

	private <T, E extends Throwable> T participate(Scope scope, TransactionCallback<T, E> work) throws E {
		try {
			return work.doInTransaction(scope.transaction);
		}
		catch (Throwable ex) {
			if (this.rollbackOn.test(ex)) {
				scope.rollbackOnly = true;
			}
			throw ex;
		}
	}

	private <T, E extends Throwable> T runNew(TransactionCallback<T, E> work, @Nullable Scope suspended) throws E {
		CrossClusterTransaction transaction = this.manager.begin();
		Scope scope = new Scope(transaction);
		CURRENT.set(scope);
		@Nullable Runnable unbind = null;
		try {
			unbind = this.manager.bindToThread(transaction);
			T result;
			try {
				result = work.doInTransaction(transaction);
			}
			catch (Throwable ex) {
				if (this.rollbackOn.test(ex)) {
					transaction.abort();
				}
				else {
					commit(scope);
				}
				throw ex;
			}
			commit(scope);
			return result;
		}
		finally {
			try {
				if (transaction.state() == TransactionState.ACTIVE) {
					transaction.abort();
				}
			}
			finally {
				if (unbind != null) {
					unbind.run();
				}
				CURRENT.set(suspended);
			}
		}
	}

	/**
	 * Runs work in a new transaction begun on a pipeline and hands it to
	 * {@link TransactionPipeline#commitAsync} instead of committing it here: the caller goes on
	 * while it commits. The transaction is bound to the thread while the work runs, so that
	 * {@link #currentTransaction()} and joined scopes see it. A failure the rollback rule lets
	 * commit is committed and waited for before it is rethrown, as {@link #executeChecked} does.
	 * @param <T> result type
	 * @param <E> checked exception type
	 * @param pipeline the pipeline, confined to the calling thread
	 * @param work the work
	 * @return the work's result and the commit's outcome
	 * @throws E as thrown by the work, after the abort (or commit, per the rollback rule)
	 * @throws TransactionAbortedException if a joined scope marked it rollback-only
	 * @throws IllegalStateException if a transaction is already bound to this thread
	 */
	public <T, E extends Throwable> Pipelined<T> executePipelined(TransactionPipeline pipeline,
			TransactionCallback<T, E> work) throws E {
		Scope bound = CURRENT.get();
		if (bound != null) {
			throw new IllegalStateException("Transaction " + bound.transaction.transactionId()
					+ " is bound to this thread: a pipelined transaction must be the outermost");
		}
		CrossClusterTransaction transaction = pipeline.begin();
		Scope scope = new Scope(transaction);
		CURRENT.set(scope);
		boolean handedOver = false;
		@Nullable Runnable unbind = null;
		try {
			unbind = this.manager.bindToThread(transaction);
			T result;
			try {
				result = work.doInTransaction(transaction);
			}
			catch (Throwable ex) {
				if (this.rollbackOn.test(ex) || scope.rollbackOnly) {
					transaction.abort();
				}
				else {
					handedOver = true;
					pipeline.commitAsync(transaction);
					pipeline.drain();
				}
				throw ex;
			}
			if (scope.rollbackOnly) {
				transaction.abort();
				throw new TransactionAbortedException("Transaction " + transaction.transactionId()
						+ " was marked rollback-only by a joined scope and has been aborted", null);
			}
			CompletableFuture<Void> outcome = pipeline.commitAsync(transaction);
			handedOver = true;
			return new Pipelined<>(result, transaction, outcome);
		}
		finally {
			try {
				// once handed over, the transaction is the pipeline thread's: never abort it from here
				if (!handedOver && transaction.state() == TransactionState.ACTIVE) {
					transaction.abort();
				}
			}
			finally {
				if (unbind != null) {
					unbind.run();
				}
				CURRENT.set(null);
			}
		}
	}

	/**
	 * Runs one more piece of work in a transaction that the caller keeps open across calls (a
	 * pipelined transaction spanning several listener deliveries, begun with
	 * {@link TransactionPipeline#begin()}): binds it to the thread while the work runs, so that
	 * {@link #currentTransaction()} and joined scopes see it, and neither commits nor aborts it,
	 * except that it is aborted (and can no longer be used) when the work throws what the
	 * rollback rule aborts or a joined scope marked it rollback-only. A failure the rule lets commit
	 * leaves it active: the caller commits it before rethrowing, as {@link #executeChecked} would.
	 * @param <T> result type
	 * @param <E> checked exception type
	 * @param transaction an active transaction of the calling thread, not bound to it
	 * @param work the work
	 * @return the work's result; the transaction is still active
	 * @throws E as thrown by the work, after the abort if the rollback rule aborts
	 * @throws TransactionAbortedException if a joined scope marked it rollback-only (it was aborted)
	 * @throws IllegalStateException if a transaction is already bound to this thread, or this one
	 *     is not active
	 */
	public <T, E extends Throwable> T executeIn(CrossClusterTransaction transaction, TransactionCallback<T, E> work)
			throws E {
		Scope bound = CURRENT.get();
		if (bound != null) {
			throw new IllegalStateException("Transaction " + bound.transaction.transactionId()
					+ " is bound to this thread: a transaction kept open across calls must be the outermost");
		}
		if (transaction.state() != TransactionState.ACTIVE) {
			throw new IllegalStateException("Transaction " + transaction.transactionId() + " is " + transaction.state()
					+ ", not ACTIVE");
		}
		Scope scope = new Scope(transaction);
		CURRENT.set(scope);
		@Nullable Runnable unbind = null;
		try {
			unbind = this.manager.bindToThread(transaction);
			T result;
			try {
				result = work.doInTransaction(transaction);
			}
			catch (Throwable ex) {
				if (this.rollbackOn.test(ex) || scope.rollbackOnly) {
					transaction.abort();
				}
				throw ex;
			}
			if (scope.rollbackOnly) {
				transaction.abort();
				throw new TransactionAbortedException("Transaction " + transaction.transactionId()
						+ " was marked rollback-only by a joined scope and has been aborted", null);
			}
			return result;
		}
		finally {
			if (unbind != null) {
				unbind.run();
			}
			CURRENT.set(null);
		}
	}

	/**
	 * What {@link #executePipelined} started.
	 * @param <T> result type
	 * @param result the work's result
	 * @param transaction the transaction, committing
	 * @param outcome completes as {@link TransactionPipeline#commitAsync} says
	 */
	public record Pipelined<T>(T result, CrossClusterTransaction transaction, CompletableFuture<Void> outcome) {
	}

	private static void commit(Scope scope) {
		if (scope.rollbackOnly) {
			scope.transaction.abort();
			throw new TransactionAbortedException("Transaction " + scope.transaction.transactionId()
					+ " was marked rollback-only by a joined scope and has been aborted", null);
		}
		scope.transaction.commit();
	}

	/**
	 * Work to run in a cross-cluster transaction.
	 *
	 * @param <T> result type
	 * @param <E> checked exception the work may throw
	 * @since 0.1.0
	 */
	@FunctionalInterface
	public interface TransactionCallback<T, E extends Throwable> {

		/**
		 * Does the work.
		 * @param transaction the bound transaction (null only with {@link Propagation#NEVER})
		 * @return a result
		 * @throws E on failure
		 */
		T doInTransaction(@Nullable CrossClusterTransaction transaction) throws E;

	}

	private static final class Scope {

		final CrossClusterTransaction transaction;

		boolean rollbackOnly;

		Scope(CrossClusterTransaction transaction) {
			this.transaction = transaction;
		}

	}

}
