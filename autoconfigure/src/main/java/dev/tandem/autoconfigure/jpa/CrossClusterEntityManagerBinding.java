package dev.tandem.autoconfigure.jpa;

import jakarta.persistence.EntityManagerFactory;
import org.hibernate.SessionFactory;
import org.springframework.orm.jpa.EntityManagerHolder;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.tandem.transaction.CrossClusterDataSource;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.TransactionThreadBinding;

/**
 * Gives every cross-cluster transaction one JPA entity manager on its database's branch and binds
 * it, for as long as the transaction is bound to the thread, where Spring's shared
 * {@code EntityManager} (an injected {@code EntityManager}, {@code @PersistenceContext}, Spring
 * Data JPA repositories) looks for the current transaction's one: Spring's
 * {@code TransactionSynchronizationManager}, under the entity manager factory, as Spring's
 * {@code JpaTransactionManager} binds its {@code EntityManagerHolder}. The entity manager opens
 * its Hibernate session on first use (a transaction that never touches JPA never enlists the
 * database for it), is flushed before phase one ({@code TransactionSynchronization.beforePrepare},
 * so a constraint violation at flush aborts the transaction everywhere), and is closed when the
 * transaction ends. A holder bound before (a Spring JPA transaction on the pool around the
 * cross-cluster one, or Spring Boot's {@code spring.jpa.open-in-view}) is set aside meanwhile and bound
 * again afterwards; a change the transaction makes to an entity of that one is not its write, so
 * the commit is refused (it aborts everywhere, naming the fix) rather than committing the records
 * without it.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class CrossClusterEntityManagerBinding implements TransactionThreadBinding {

	private final EntityManagerFactory entityManagerFactory;

	private final SessionFactory sessionFactory;

	private final CrossClusterDataSource dataSource;

	/**
	 * Creates the binding of an entity manager factory whose data source is a cross-cluster one.
	 * @param entityManagerFactory the factory, as Spring's shared entity managers know it (the bean)
	 * @param dataSource the factory's data source
	 * @throws jakarta.persistence.PersistenceException if the factory is not Hibernate's
	 */
	public CrossClusterEntityManagerBinding(EntityManagerFactory entityManagerFactory,
			CrossClusterDataSource dataSource) {
		this.entityManagerFactory = entityManagerFactory;
		this.sessionFactory = entityManagerFactory.unwrap(SessionFactory.class);
		this.dataSource = dataSource;
	}

	@Override
	public Runnable bind(CrossClusterTransaction transaction) {
		BranchEntityManager branch = (BranchEntityManager) transaction.getResource(this);
		if (branch == null) {
			branch = new BranchEntityManager(this.sessionFactory, this.dataSource, transaction.transactionId());
			transaction.putResource(this, branch);
			transaction.registerSynchronization(branch);
		}
		Object previous = TransactionSynchronizationManager.unbindResourceIfPossible(this.entityManagerFactory);
		if (previous instanceof EntityManagerHolder view && BranchEntityManager.of(previous) == null) {
			branch.watchSetAside(view.getEntityManager());
		}
		TransactionSynchronizationManager.bindResource(this.entityManagerFactory, branch.holder());
		return () -> {
			TransactionSynchronizationManager.unbindResourceIfPossible(this.entityManagerFactory);
			if (previous != null) {
				TransactionSynchronizationManager.bindResource(this.entityManagerFactory, previous);
			}
		};
	}

	/**
	 * Returns the entity manager factory whose entity managers this binds.
	 * @return the factory
	 */
	public EntityManagerFactory getEntityManagerFactory() {
		return this.entityManagerFactory;
	}

	/**
	 * Returns the data source of the factory.
	 * @return the cross-cluster data source
	 */
	public CrossClusterDataSource getDataSource() {
		return this.dataSource;
	}

}
