package dev.tandem.autoconfigure.jpa;

import jakarta.persistence.EntityManagerFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.SimpleTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.tandem.autoconfigure.jdbc.CrossClusterJdbcTransactionManager;
import dev.tandem.transaction.CrossClusterDataSource;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionTemplate;

/**
 * The Spring transaction manager of a JPA entity manager factory whose data source is a
 * {@link CrossClusterDataSource}: {@code @Transactional} JPA code and Spring Data JPA repositories
 * (whose methods are {@code @Transactional}) work both outside and inside cross-cluster
 * transactions, and so does JDBC code on the same data source.
 * <p>
 * Outside a cross-cluster transaction it is Spring's {@link JpaTransactionManager} on the pool
 * (JDBC code in the same Spring transaction shares its connection, as usual). Inside one, the
 * transaction already has its entity manager, bound to the thread by
 * {@link CrossClusterEntityManagerBinding} on the database's branch, flushed before phase one and
 * committed or rolled back with the records; a Spring transaction there joins it, whatever its
 * propagation, and is a savepoint of the branch for JDBC work, as with
 * {@link CrossClusterJdbcTransactionManager}. A persistence context cannot be rolled back to a
 * savepoint, so when such a Spring transaction rolls back after the cross-cluster transaction used
 * JPA, the cross-cluster transaction can no longer commit: it aborts at commit everywhere (Spring's
 * {@code JpaTransactionManager} marks a joined transaction rollback-only for the same reason).
 * <p>
 * Why not let Hibernate commit: in resource-local mode Hibernate ends its transaction with
 * {@code Connection.commit()}, which the enlisted connection refuses, and must refuse, since the
 * decision of the two-phase commit ends the branch. Hibernate's JTA mode would need a JTA
 * transaction manager around every transaction, on the pool too. Instead the cross-cluster
 * transaction owns one Hibernate session on its branch and ends it itself, and this manager never
 * begins a Hibernate transaction inside it ({@code docs/architecture.md}, "JPA").
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class CrossClusterJpaTransactionManager implements PlatformTransactionManager, ResourceTransactionManager {

	private final EntityManagerFactory entityManagerFactory;

	private final JpaTransactionManager outside;

	private final CrossClusterJdbcTransactionManager savepoints;

	/**
	 * Creates the manager of an entity manager factory.
	 * @param entityManagerFactory the factory (the bean Spring's shared entity managers use)
	 * @param dataSource the factory's data source
	 */
	public CrossClusterJpaTransactionManager(EntityManagerFactory entityManagerFactory,
			CrossClusterDataSource dataSource) {
		this.entityManagerFactory = entityManagerFactory;
		this.outside = new JpaTransactionManager(entityManagerFactory);
		this.outside.setDataSource(dataSource);
		this.savepoints = new CrossClusterJdbcTransactionManager(dataSource);
	}

	/**
	 * Returns the manager used outside cross-cluster transactions.
	 * @return Spring's JPA transaction manager on the factory
	 */
	public JpaTransactionManager outside() {
		return this.outside;
	}

	@Override
	public Object getResourceFactory() {
		return this.entityManagerFactory;
	}

	/**
	 * Begins a Spring transaction: on the pool outside a cross-cluster transaction; inside one, a
	 * transaction that joins the cross-cluster transaction's entity manager and sets a savepoint of
	 * the branch.
	 * @throws IllegalTransactionStateException inside a cross-cluster transaction, for propagation
	 *     {@code NEVER}, when a Spring transaction holds a pool connection of the data source, or
	 *     when the transaction's entity manager is not bound (the transaction was begun by a
	 *     manager without {@link CrossClusterEntityManagerBinding})
	 */
	@Override
	public TransactionStatus getTransaction(@Nullable TransactionDefinition definition) throws TransactionException {
		CrossClusterTransaction transaction = CrossClusterTransactionTemplate.currentTransaction();
		if (transaction == null) {
			return this.outside.getTransaction(definition);
		}
		BranchEntityManager entityManager = BranchEntityManager
			.of(TransactionSynchronizationManager.getResource(this.entityManagerFactory));
		if (entityManager == null) {
			throw new IllegalTransactionStateException("Cross-cluster transaction " + transaction.transactionId()
					+ " has no JPA entity manager bound to this thread: its manager was built without a "
					+ "CrossClusterEntityManagerBinding of this entity manager factory (the Spring Boot "
					+ "auto-configuration adds it)");
		}
		return new JoinedStatus(this.savepoints.getTransaction(definition), entityManager);
	}

	@Override
	public void commit(TransactionStatus status) throws TransactionException {
		if (!(status instanceof JoinedStatus joined)) {
			this.outside.commit(status);
			return;
		}
		if (joined.isRollbackOnly()) {
			rollback(joined);
			return;
		}
		joined.setCompleted();
		this.savepoints.commit(joined.savepoint);
	}

	@Override
	public void rollback(TransactionStatus status) throws TransactionException {
		if (!(status instanceof JoinedStatus joined)) {
			this.outside.rollback(status);
			return;
		}
		joined.setCompleted();
		try {
			this.savepoints.rollback(joined.savepoint);
		}
		finally {
			if (joined.entityManager.used()) {
				joined.entityManager.setRollbackOnly("a Spring transaction rolled back after the transaction used JPA, "
						+ "and a persistence context cannot be rolled back to a savepoint");
			}
		}
	}

	/** A Spring transaction inside a cross-cluster one: the transaction's entity manager and a savepoint. */
	static final class JoinedStatus extends SimpleTransactionStatus {

		final TransactionStatus savepoint;

		final BranchEntityManager entityManager;

		JoinedStatus(TransactionStatus savepoint, BranchEntityManager entityManager) {
			super(false);
			this.savepoint = savepoint;
			this.entityManager = entityManager;
		}

	}

}
