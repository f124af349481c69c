package dev.tandem.transaction;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Objects;
import java.util.logging.Logger;

import javax.sql.DataSource;
import javax.sql.XADataSource;

import org.jspecify.annotations.Nullable;

/**
 * A {@link DataSource} whose connections join the cross-cluster transaction bound to the calling
 * thread ({@link CrossClusterTransactionTemplate#currentTransaction()}, which
 * {@code @CrossClusterTransactional} methods run in): code that takes its connections from a
 * {@code DataSource} (Spring's {@code JdbcTemplate}, Spring Data JDBC, plain JDBC) writes in the
 * transaction's branch of this database, which commits or rolls back with the transaction's records
 * ({@link CrossClusterTransaction#database(String)}). Outside a cross-cluster transaction it hands
 * out the connections of an ordinary data source (a pool), as if it were not there.
 * <p>
 * Inside a transaction every {@code getConnection()} returns the same enlisted connection, wrapped:
 * {@code close()} does nothing (the transaction closes it when it ends), and {@code commit()},
 * {@code rollback()} and {@code setAutoCommit(true)} throw {@link SQLException} (the transaction ends
 * the branch); savepoints work. The database must be registered with the manager under the same
 * name: {@link CrossClusterTransactionManagerBuilder#database(String, XADataSource)} with
 * {@link #xaDataSource()} (the Spring Boot auto-configuration does it for every bean of this type).
 * <p>
 * Failures: when the database cannot be reached (down, restarting, refusing connections),
 * {@code getConnection()} throws a {@link SQLException}, a checked exception, on which the default
 * rollback rule of {@code @CrossClusterTransactional} would commit; the transaction still never
 * commits its records without its rows: it aborts everywhere at commit unless a later
 * {@code getConnection()} in it begins the branch. A connection lost after the branch began (the
 * session terminated, the database restarted) fails its statements with {@code SQLException} and
 * the branch cannot prepare: the transaction aborts at commit too. Either way the caller sees
 * {@link TransactionAbortedException} from the commit, and a Tandem listener's records are
 * delivered again. Nothing here retries a statement. A statement the database refuses for what
 * it writes (a duplicate key, a value the column refuses: {@link DatabaseFailures#isNonTransient})
 * breaks the branch too, but its {@code SQLException} rolls back under the default rule, so the
 * caller sees that exception and a listener's failing record is narrowed and failed like any
 * other.
 * <p>
 * Thread-safe; the connections are not (JDBC connections are used by one thread at a time).
 *
 * @since 0.1.0
 */
public final class CrossClusterDataSource implements DataSource {

	private final String database;

	private final XADataSource xaDataSource;

	private final DataSource outside;

	/**
	 * Creates the data source of one database participant.
	 * @param database the database's name in the manager ({@link CrossClusterTransactionManagerBuilder#database})
	 * @param xaDataSource the driver's XA data source of the database, which the manager's branches use
	 * @param outside the data source used outside cross-cluster transactions (a pool of the same database)
	 */
	public CrossClusterDataSource(String database, XADataSource xaDataSource, DataSource outside) {
		this.database = Objects.requireNonNull(database, "database");
		this.xaDataSource = Objects.requireNonNull(xaDataSource, "xaDataSource");
		this.outside = Objects.requireNonNull(outside, "outside");
	}

	/**
	 * Returns the database's name in the manager.
	 * @return the name
	 */
	public String database() {
		return this.database;
	}

	/**
	 * Returns the XA data source the manager's branches of this database use.
	 * @return the XA data source
	 */
	public XADataSource xaDataSource() {
		return this.xaDataSource;
	}

	/**
	 * Returns the enlisted connection of the thread's cross-cluster transaction, or a connection
	 * of the outside data source when no transaction is bound to the thread.
	 * @return the connection
	 * @throws SQLException if the database is not registered with the transaction's manager, the
	 *     transaction is no longer active, or its branch cannot start (the cause says which; the
	 *     transaction then aborts at commit unless a later call begins the branch); or what the
	 *     outside data source throws
	 */
	@Override
	public Connection getConnection() throws SQLException {
		CrossClusterTransaction transaction = CrossClusterTransactionTemplate.currentTransaction();
		if (transaction == null) {
			return this.outside.getConnection();
		}
		try {
			return enlisted(transaction.database(this.database));
		}
		catch (RuntimeException ex) {
			throw new SQLException("Database '" + this.database + "' cannot join transaction "
					+ transaction.transactionId() + ": " + ex.getMessage(), ex);
		}
	}

	/**
	 * As {@link #getConnection()} outside a transaction; refused inside one, whose branch uses the
	 * XA data source's own credentials.
	 * @throws SQLException inside a cross-cluster transaction, or what the outside data source throws
	 */
	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		CrossClusterTransaction transaction = CrossClusterTransactionTemplate.currentTransaction();
		if (transaction != null) {
			throw new SQLException("Database '" + this.database + "' in transaction " + transaction.transactionId()
					+ " uses the credentials of its XA data source; call getConnection() without credentials");
		}
		return this.outside.getConnection(username, password);
	}

	private static Connection enlisted(Connection connection) {
		return (Connection) Proxy.newProxyInstance(CrossClusterDataSource.class.getClassLoader(),
				new Class<?>[] { Connection.class }, (proxy, method, args) -> {
					switch (method.getName()) {
						case "close":
							return null;
						case "commit":
							throw endedByTheTransaction("commit()");
						case "rollback":
							if (args == null || args.length == 0) {
								throw endedByTheTransaction("rollback()");
							}
							break;
						case "setAutoCommit":
							if (Boolean.TRUE.equals(args[0])) {
								throw endedByTheTransaction("setAutoCommit(true)");
							}
							return null;
						case "equals":
							return proxy == args[0];
						case "hashCode":
							return System.identityHashCode(proxy);
						case "toString":
							return "enlisted " + connection;
						default:
							break;
					}
					return invoke(method, connection, args);
				});
	}

	private static @Nullable Object invoke(Method method, Connection connection, @Nullable Object[] args)
			throws Throwable {
		try {
			return method.invoke(connection, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	private static SQLException endedByTheTransaction(String call) {
		return new SQLException(call + " is not allowed on a connection of a cross-cluster transaction: the "
				+ "transaction commits or rolls back its branch with its records");
	}

	@Override
	public @Nullable PrintWriter getLogWriter() throws SQLException {
		return this.outside.getLogWriter();
	}

	@Override
	public void setLogWriter(@Nullable PrintWriter out) throws SQLException {
		this.outside.setLogWriter(out);
	}

	@Override
	public void setLoginTimeout(int seconds) throws SQLException {
		this.outside.setLoginTimeout(seconds);
	}

	@Override
	public int getLoginTimeout() throws SQLException {
		return this.outside.getLoginTimeout();
	}

	@Override
	public Logger getParentLogger() throws SQLFeatureNotSupportedException {
		return this.outside.getParentLogger();
	}

	@Override
	public <T> T unwrap(Class<T> type) throws SQLException {
		if (type.isInstance(this)) {
			return type.cast(this);
		}
		return this.outside.unwrap(type);
	}

	@Override
	public boolean isWrapperFor(Class<?> type) throws SQLException {
		return type.isInstance(this) || this.outside.isWrapperFor(type);
	}

}
