package dev.tandem.autoconfigure.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.IllegalTransactionStateException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.SimpleTransactionStatus;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.tandem.transaction.CrossClusterDataSource;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionTemplate;

/**
 * The Spring transaction manager of a {@link CrossClusterDataSource}: {@code @Transactional}
 * methods, {@code TransactionTemplate} and Spring Data JDBC repositories (whose methods are
 * {@code @Transactional}) work both outside and inside cross-cluster transactions.
 * <p>
 * Outside a cross-cluster transaction it is Spring's {@link JdbcTransactionManager} on the data
 * source's pool. Inside one (a {@code @CrossClusterTransactional} method, or
 * {@link CrossClusterTransactionTemplate}), the database's work already belongs to the
 * transaction's branch, which commits or rolls back with the records; a Spring transaction there
 * is a <em>savepoint</em> of that branch, whatever its propagation: its commit releases the
 * savepoint (its writes commit later, with the cross-cluster transaction), its rollback rolls back
 * to the savepoint (its writes are undone, the cross-cluster transaction goes on unless the
 * exception leaves the {@code @CrossClusterTransactional} method). Read-only flags, isolation
 * levels and timeouts of such a Spring transaction are ignored (the branch has begun; PostgreSQL
 * refuses to change them inside a transaction), propagation {@code NEVER} is refused and
 * {@code NOT_SUPPORTED} still writes in the branch. Transaction synchronizations are not active
 * there: {@code TransactionSynchronizationManager.registerSynchronization} fails, as it would
 * outside any transaction.
 * <p>
 * A Spring transaction begun on the pool <em>before</em> the cross-cluster transaction (an outer
 * {@code @Transactional} method calling a {@code @CrossClusterTransactional} one) holds a pool
 * connection that is not part of the branch: a Spring transaction begun inside the cross-cluster
 * one then fails with {@link IllegalTransactionStateException} rather than write outside it.
 * <p>
 * Thread-safe.
 *
 * @since 0.1.0
 */
public class CrossClusterJdbcTransactionManager implements PlatformTransactionManager, ResourceTransactionManager {

	private final CrossClusterDataSource dataSource;

	private final JdbcTransactionManager outside;

	private final AtomicLong savepoints = new AtomicLong();

	/**
	 * Creates the manager of a data source.
	 * @param dataSource the data source, which is also the pool's {@link JdbcTransactionManager}'s
	 */
	public CrossClusterJdbcTransactionManager(CrossClusterDataSource dataSource) {
		this.dataSource = dataSource;
		this.outside = new JdbcTransactionManager(dataSource);
	}

	/**
	 * Returns the manager used outside cross-cluster transactions.
	 * @return Spring's JDBC transaction manager on the data source
	 */
	public JdbcTransactionManager outside() {
		return this.outside;
	}

	@Override
	public Object getResourceFactory() {
		return this.dataSource;
	}

	/**
	 * Begins a Spring transaction: on the pool outside a cross-cluster transaction, a savepoint of
	 * the database's branch inside one.
	 * @throws IllegalTransactionStateException inside a cross-cluster transaction, for propagation
	 *     {@code NEVER} or when a Spring transaction holds a pool connection of this data source
	 * @throws TransactionSystemException if the savepoint cannot be set
	 */
	@Override
	public TransactionStatus getTransaction(@Nullable TransactionDefinition definition) throws TransactionException {
		CrossClusterTransaction transaction = CrossClusterTransactionTemplate.currentTransaction();
		if (transaction == null) {
			return this.outside.getTransaction(definition);
		}
		String database = this.dataSource.database();
		TransactionDefinition effective = (definition != null) ? definition : TransactionDefinition.withDefaults();
		if (effective.getPropagationBehavior() == TransactionDefinition.PROPAGATION_NEVER) {
			throw new IllegalTransactionStateException("Propagation NEVER, but cross-cluster transaction "
					+ transaction.transactionId() + " is active on this thread");
		}
		if (TransactionSynchronizationManager.hasResource(this.dataSource)) {
			throw new IllegalTransactionStateException("A Spring transaction on database '" + database
					+ "' began before cross-cluster transaction " + transaction.transactionId() + " on a pool "
					+ "connection that is not part of it; begin the Spring transaction inside the cross-cluster one, "
					+ "or call the @CrossClusterTransactional method outside the @Transactional one");
		}
		Connection connection;
		try {
			connection = this.dataSource.getConnection();
		}
		catch (SQLException ex) {
			throw new TransactionSystemException("Database '" + database + "' cannot join cross-cluster transaction "
					+ transaction.transactionId(), ex);
		}
		String savepoint = "tandem_spring_" + this.savepoints.incrementAndGet();
		execute(connection, "SAVEPOINT " + savepoint);
		return new BranchStatus(connection, savepoint);
	}

	@Override
	public void commit(TransactionStatus status) throws TransactionException {
		if (!(status instanceof BranchStatus branch)) {
			this.outside.commit(status);
			return;
		}
		end(branch, branch.isRollbackOnly());
	}

	@Override
	public void rollback(TransactionStatus status) throws TransactionException {
		if (!(status instanceof BranchStatus branch)) {
			this.outside.rollback(status);
			return;
		}
		end(branch, true);
	}

	private void end(BranchStatus branch, boolean rollback) {
		if (branch.isCompleted()) {
			throw new IllegalTransactionStateException(
					"Transaction is already completed - do not call commit or rollback more than once per transaction");
		}
		try {
			if (rollback) {
				execute(branch.connection, "ROLLBACK TO SAVEPOINT " + branch.savepoint);
			}
			execute(branch.connection, "RELEASE SAVEPOINT " + branch.savepoint);
		}
		finally {
			branch.setCompleted();
		}
	}

	private void execute(Connection connection, String sql) {
		try (Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
		catch (SQLException ex) {
			throw new TransactionSystemException("Database '" + this.dataSource.database() + "': " + sql
					+ " failed in the branch of the cross-cluster transaction", ex);
		}
	}

	/** A Spring transaction inside a cross-cluster one: a savepoint of the database's branch. */
	static final class BranchStatus extends SimpleTransactionStatus {

		final Connection connection;

		final String savepoint;

		BranchStatus(Connection connection, String savepoint) {
			super(true);
			this.connection = connection;
			this.savepoint = savepoint;
		}

	}

}
