package dev.tandem.autoconfigure.jpa;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceException;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.engine.spi.SessionImplementor;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.orm.jpa.EntityManagerHolder;

import dev.tandem.transaction.CrossClusterDataSource;
import dev.tandem.transaction.TransactionState;
import dev.tandem.transaction.TransactionSynchronization;

/**
 * The entity manager of one cross-cluster transaction: a Hibernate session opened on first use on
 * the database's enlisted connection (its XA branch), its resource-local transaction begun and
 * never allowed to end the branch. {@link #beforePrepare()} flushes it and ends its Hibernate
 * transaction before phase one prepares the branch; {@link #afterCompletion} closes it if the
 * transaction ended without a commit attempt.
 * <p>
 * Hibernate ends a resource-local transaction with {@code Connection.commit()} or
 * {@code rollback()}, which the enlisted connection refuses (the cross-cluster transaction ends
 * the branch). The session therefore gets its own wrapper of that connection which turns those two
 * calls into no-ops only while this class ends the Hibernate transaction itself; at any other time
 * (application code reaching the connection through {@code Session.doWork}) they reach the
 * enlisted connection and are refused as usual.
 * <p>
 * Confined to the thread that runs the transaction's work, then to the one that ends it.
 */
final class BranchEntityManager implements TransactionSynchronization {

	private static final Logger logger = LoggerFactory.getLogger(BranchEntityManager.class);

	private final SessionFactory sessionFactory;

	private final CrossClusterDataSource dataSource;

	private final String transactionId;

	private final EntityManagerHolder holder;

	private @Nullable Session session;

	/** Set while this class commits or rolls back the Hibernate transaction: the wrapper lets it through. */
	private boolean ending;

	/** Set once the transaction began to commit or ended: the entity manager can no longer be used. */
	private boolean closed;

	private @Nullable String rollbackOnly;

	/**
	 * Entity managers bound to the thread before the transaction (open in view, an outer JPA
	 * transaction on the pool) that had no pending change when it set them aside.
	 */
	private final List<EntityManager> setAside = new ArrayList<>();

	BranchEntityManager(SessionFactory sessionFactory, CrossClusterDataSource dataSource, String transactionId) {
		this.sessionFactory = sessionFactory;
		this.dataSource = dataSource;
		this.transactionId = transactionId;
		EntityManager lazy = (EntityManager) Proxy.newProxyInstance(BranchEntityManager.class.getClassLoader(),
				// the interface Spring's shared entity managers expose for Hibernate (HibernateJpaVendorAdapter)
				new Class<?>[] { SessionImplementor.class }, (proxy, method, args) -> invokeOnSession(proxy, method, args));
		this.holder = new Holder(lazy, this);
		// the holder belongs to the cross-cluster transaction: Spring registers no synchronization of its own
		this.holder.setSynchronizedWithTransaction(true);
	}

	/** Returns the holder that Spring's shared entity managers find. */
	EntityManagerHolder holder() {
		return this.holder;
	}

	/** Returns the branch entity manager of a holder, or null if it is not one. */
	static @Nullable BranchEntityManager of(@Nullable Object holder) {
		return (holder instanceof Holder branch) ? branch.branch : null;
	}

	/**
	 * Watches an entity manager bound to the thread before the transaction and set aside while it
	 * runs (Spring Boot's {@code spring.jpa.open-in-view}, on by default in web apps, or a JPA
	 * transaction on the pool around it), if it has no pending change now: an entity it loaded and
	 * the transaction's work changes would not be written by the transaction, whose writes go
	 * through this entity manager only, so {@link #beforePrepare()} refuses the commit instead of
	 * committing the records without the change.
	 * @param view the entity manager set aside
	 */
	void watchSetAside(EntityManager view) {
		if (this.setAside.stream().noneMatch((watched) -> watched == view) && view.isOpen() && !isDirty(view)) {
			this.setAside.add(view);
		}
	}

	private static boolean isDirty(EntityManager entityManager) {
		return entityManager.unwrap(Session.class).isDirty();
	}

	/** Whether the session was opened (the transaction used JPA). */
	boolean used() {
		return this.session != null;
	}

	/**
	 * Makes the transaction abort at commit: a Spring transaction on this entity manager rolled back,
	 * and a persistence context cannot be rolled back to a savepoint.
	 */
	void setRollbackOnly(String reason) {
		this.rollbackOnly = reason;
	}

	private @Nullable Object invokeOnSession(Object proxy, Method method, @Nullable Object[] args) throws Throwable {
		switch (method.getName()) {
			case "equals":
				return proxy == args[0];
			case "hashCode":
				return System.identityHashCode(proxy);
			case "toString":
				return "EntityManager of cross-cluster transaction " + this.transactionId;
			case "isOpen":
				return !this.closed;
			case "close":
				// the cross-cluster transaction closes it
				return null;
			default:
				break;
		}
		try {
			return method.invoke(session(), args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	/** Opens the session on the enlisted connection on first use. */
	private Session session() {
		if (this.closed) {
			throw new IllegalStateException("The entity manager of cross-cluster transaction " + this.transactionId
					+ " is closed: the transaction has begun to commit or has ended");
		}
		Session current = this.session;
		if (current != null) {
			return current;
		}
		Connection enlisted;
		try {
			enlisted = this.dataSource.getConnection();
		}
		catch (SQLException ex) {
			throw new PersistenceException("Database '" + this.dataSource.database() + "' cannot join cross-cluster "
					+ "transaction " + this.transactionId + ": " + ex.getMessage(), ex);
		}
		Session opened = this.sessionFactory.withOptions().connection(wrap(enlisted)).openSession();
		opened.getTransaction().begin();
		this.session = opened;
		return opened;
	}

	/** The enlisted connection, except that commit and rollback pass (as no-ops) while this class ends Hibernate's transaction. */
	private Connection wrap(Connection enlisted) {
		return (Connection) Proxy.newProxyInstance(BranchEntityManager.class.getClassLoader(),
				new Class<?>[] { Connection.class }, (proxy, method, args) -> {
					String name = method.getName();
					if (this.ending && (name.equals("commit") || name.equals("rollback") && args == null
							|| name.equals("setAutoCommit"))) {
						// the branch commits or rolls back with the cross-cluster transaction
						return null;
					}
					switch (name) {
						case "equals":
							return proxy == args[0];
						case "hashCode":
							return System.identityHashCode(proxy);
						case "toString":
							return "JPA view of " + enlisted;
						default:
							break;
					}
					try {
						return method.invoke(enlisted, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	/**
	 * Flushes the persistence context into the branch and ends the Hibernate transaction (its
	 * {@code Connection.commit()} a no-op), so that phase one prepares the rows.
	 * @throws RuntimeException what the flush threw (a constraint violation, say), or
	 *     {@link IllegalStateException} if a Spring transaction on this entity manager rolled back:
	 *     the cross-cluster transaction then aborts everywhere
	 */
	@Override
	public void beforePrepare() {
		for (EntityManager view : this.setAside) {
			if (view.isOpen() && isDirty(view)) {
				throw new IllegalStateException("Cross-cluster transaction " + this.transactionId + " cannot commit: "
						+ "it changed an entity of the entity manager bound to the thread before it (Spring Boot's "
						+ "spring.jpa.open-in-view, or a JPA transaction around it), whose changes it does not write. "
						+ "Load the entity inside the @CrossClusterTransactional method (or merge it there: "
						+ "entityManager.merge / repository.save), or set spring.jpa.open-in-view=false");
			}
		}
		Session current = this.session;
		if (current == null) {
			this.closed = true;
			return;
		}
		if (this.rollbackOnly != null) {
			throw new IllegalStateException("Cross-cluster transaction " + this.transactionId + " cannot commit: "
					+ this.rollbackOnly);
		}
		current.flush();
		this.ending = true;
		try {
			current.getTransaction().commit();
		}
		finally {
			this.ending = false;
		}
		this.closed = true;
		current.close();
		this.session = null;
	}

	/** Closes the session if the transaction ended without reaching {@link #beforePrepare()}. */
	@Override
	public void afterCompletion(TransactionState state) {
		this.closed = true;
		Session current = this.session;
		if (current == null) {
			return;
		}
		this.session = null;
		this.ending = true;
		try {
			if (current.getTransaction().isActive()) {
				current.getTransaction().rollback();
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Rollback of the entity manager of cross-cluster transaction {} ({}) failed: {}",
					this.transactionId, state, ex.toString());
		}
		finally {
			this.ending = false;
			closeQuietly(current, state);
		}
	}

	private void closeQuietly(Session current, TransactionState state) {
		try {
			current.close();
		}
		catch (RuntimeException ex) {
			logger.debug("Closing the entity manager of cross-cluster transaction {} ({}) failed: {}", this.transactionId,
					state, ex.toString());
		}
	}

	@Override
	public String toString() {
		return "BranchEntityManager[" + this.transactionId + "]";
	}

	/** Spring's holder of the branch's entity manager, which knows its branch. */
	private static final class Holder extends EntityManagerHolder {

		final BranchEntityManager branch;

		Holder(EntityManager entityManager, BranchEntityManager branch) {
			super(entityManager);
			this.branch = branch;
		}

	}

}
