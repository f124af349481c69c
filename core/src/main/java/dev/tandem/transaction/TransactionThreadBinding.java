package dev.tandem.transaction;

/**
 * Told whenever {@link CrossClusterTransactionTemplate} binds a cross-cluster transaction to the
 * calling thread for a unit of work and unbinds it afterwards: a framework that looks its
 * resources up by thread (Spring's {@code TransactionSynchronizationManager}, where a shared JPA
 * {@code EntityManager} finds the one of the current transaction) binds the transaction's resource
 * there for the duration. Registered with
 * {@link CrossClusterTransactionManagerBuilder#threadBinding(TransactionThreadBinding)}.
 * <p>
 * A transaction may be bound several times (a transaction kept open across listener deliveries,
 * {@link CrossClusterTransactionTemplate#executeIn}), and bindings nest (a {@code REQUIRES_NEW}
 * transaction inside another): each {@link #bind} is undone by running what it returned, in reverse
 * order, on the same thread. Implementations must be thread-safe.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface TransactionThreadBinding {

	/**
	 * Binds what belongs to the transaction to the calling thread.
	 * @param transaction the transaction just bound to the thread, active
	 * @return what undoes the binding, run on the same thread when the unit of work ends (after the
	 *     transaction's commit or abort when the template ends it); it must not throw
	 */
	Runnable bind(CrossClusterTransaction transaction);

}
