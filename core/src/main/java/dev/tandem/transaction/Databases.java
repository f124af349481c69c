package dev.tandem.transaction;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import javax.sql.XAConnection;
import javax.sql.XADataSource;
import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.transaction.Decision.DatabaseRecord;

/**
 * The database participants of one manager: the named {@link XADataSource}s, their start-up
 * checks, one {@link DatabaseParticipant} per slot and database, and what recovery does to a
 * prepared branch from a fresh connection: commit it (settled by its marker row when the database
 * no longer lists it as prepared), roll it back, list an owner's prepared branches
 * ({@code XAResource.recover()} filtered by {@link DatabaseXid}). See {@code docs/architecture.md},
 * "Database participants".
 * <p>
 * Every call on a database is bounded by the data source's own timeouts (connect and socket
 * timeouts of the driver) and, for Tandem's own statements, by the commit timeout as a query
 * timeout. Thread-safe.
 */
final class Databases {

	private static final Logger logger = LoggerFactory.getLogger(Databases.class);

	/**
	 * The marker table Tandem creates in every database participant: one row per prepared branch,
	 * inserted inside the branch, so that a branch the database no longer lists as prepared is
	 * known to have committed (its row is visible) or rolled back (it is not).
	 */
	static final String MARKER_TABLE = "tandem_markers";

	/** The marker table's columns, as created at start-up. */
	static final String MARKER_COLUMNS = "transaction_id VARCHAR(600) NOT NULL PRIMARY KEY, created_at BIGINT NOT NULL";

	private final Map<String, XADataSource> sources;

	private final String owner;

	private final Duration timeout;

	private final int slots;

	private final BackgroundRetries retries;

	private final Map<String, DatabaseParticipant> participants = new ConcurrentHashMap<>();

	Databases(Map<String, XADataSource> sources, String owner, Duration timeout, int slots, BackgroundRetries retries) {
		this.sources = new LinkedHashMap<>(sources);
		this.owner = owner;
		this.timeout = timeout;
		this.slots = slots;
		this.retries = retries;
	}

	/** Returns the configured database names, in configuration order. */
	List<String> names() {
		return List.copyOf(this.sources.keySet());
	}

	int queryTimeoutSeconds() {
		return (int) Math.max(1, Math.min(Integer.MAX_VALUE, this.timeout.toSeconds()));
	}

	/**
	 * Returns a slot's participant of a database.
	 * @throws IllegalArgumentException if the database is not configured
	 */
	DatabaseParticipant participant(int slot, String database) {
		XADataSource source = source(database);
		return this.participants.computeIfAbsent(slot + "/" + database,
				(key) -> new DatabaseParticipant(database, source, this));
	}

	private XADataSource source(String database) {
		XADataSource source = this.sources.get(database);
		if (source == null) {
			throw new IllegalArgumentException("Unknown database '" + database + "'; configured databases: "
					+ this.sources.keySet());
		}
		return source;
	}

	/**
	 * Checks every database at start-up: it can prepare transactions (PostgreSQL's
	 * {@code max_prepared_transactions} above zero; then a prepare and rollback of an empty branch),
	 * and its marker table exists (created where missing).
	 * @throws PreparedTransactionsDisabledException if a database cannot prepare transactions
	 * @throws TandemException if a database cannot be reached or refuses XA
	 */
	void start() {
		for (String database : this.sources.keySet()) {
			try {
				check(database);
			}
			catch (SQLException | XAException ex) {
				throw new TandemException("Database '" + database + "' failed its start-up check: "
						+ DatabaseParticipant.describe(ex), ex);
			}
		}
	}

	private void check(String database) throws SQLException, XAException {
		XAConnection xa = source(database).getXAConnection();
		try {
			Connection connection = xa.getConnection();
			DatabaseMetaData metadata = connection.getMetaData();
			String product = metadata.getDatabaseProductName();
			if ("PostgreSQL".equals(product)) {
				checkPostgresql(database, connection);
			}
			if (!markerTableExists(connection)) {
				createMarkerTable(database, connection);
			}
			connection.close();
			// An empty branch, prepared and rolled back: XA works for this user on this database.
			XAResource resource = xa.getXAResource();
			DatabaseXid probe = DatabaseXid.of(TransactionIds.newId(this.owner), database);
			resource.start(probe, XAResource.TMNOFLAGS);
			resource.end(probe, XAResource.TMSUCCESS);
			if (resource.prepare(probe) == XAResource.XA_OK) {
				resource.rollback(probe);
			}
			logger.info("Database '{}' ({} {}) takes part in transactions of {}", database, product,
					metadata.getDatabaseProductVersion(), this.owner);
		}
		finally {
			xa.close();
		}
	}

	/**
	 * Whether the marker table exists and this user can read it. Looked up before any
	 * {@code CREATE TABLE IF NOT EXISTS}, which PostgreSQL refuses to a user without CREATE on the
	 * schema even when the table exists (a table created once by the database's owner).
	 */
	private boolean markerTableExists(Connection connection) {
		try (Statement statement = connection.createStatement()) {
			statement.setQueryTimeout(queryTimeoutSeconds());
			statement.executeQuery("SELECT transaction_id, created_at FROM " + MARKER_TABLE + " WHERE 1 = 0").close();
			return true;
		}
		catch (SQLException ex) {
			return false;
		}
	}

	private void createMarkerTable(String database, Connection connection) {
		try (Statement statement = connection.createStatement()) {
			statement.setQueryTimeout(queryTimeoutSeconds());
			statement.execute("CREATE TABLE IF NOT EXISTS " + MARKER_TABLE + " (" + MARKER_COLUMNS + ")");
		}
		catch (SQLException ex) {
			throw new TandemException("Database '" + database + "' has no marker table " + MARKER_TABLE
					+ " and this user cannot create it: " + DatabaseParticipant.describe(ex) + ". Grant the user "
					+ "CREATE on its schema, or create the table once as the schema's owner: CREATE TABLE "
					+ MARKER_TABLE + " (" + MARKER_COLUMNS + "), and grant the user SELECT and INSERT on it", ex);
		}
	}

	private void checkPostgresql(String database, Connection connection) throws SQLException {
		int max;
		try (Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery("SHOW max_prepared_transactions")) {
			result.next();
			max = Integer.parseInt(result.getString(1).trim());
		}
		if (max == 0) {
			throw new PreparedTransactionsDisabledException(database, "max_prepared_transactions", "Database '" + database
					+ "' (PostgreSQL) has max_prepared_transactions = 0: prepared transactions are disabled, so it "
					+ "cannot take part in a two-phase commit. Set max_prepared_transactions (postgresql.conf, or ALTER "
					+ "SYSTEM SET max_prepared_transactions = 100) to at least the transaction slots of every Tandem "
					+ "instance using this database (" + this.slots + " here) plus what else prepares transactions "
					+ "there, and restart PostgreSQL: the setting takes effect at server start only");
		}
		if (max < this.slots) {
			logger.warn("Database '{}' (PostgreSQL) allows {} prepared transactions (max_prepared_transactions) for {} "
					+ "transaction slots of {} alone: commits fail once that many are prepared at once", database, max,
					this.slots, this.owner);
		}
	}

	/**
	 * Commits a prepared branch of a decided transaction from a fresh connection. A branch the
	 * database no longer lists as prepared is settled by its marker row.
	 * @return true if the branch committed (now or before), false if the database had rolled it
	 *     back (a heuristic outcome)
	 * @throws TandemException if the outcome is not known yet (the database is unreachable, or the
	 *     branch stays prepared); retry later
	 */
	boolean commitPrepared(DatabaseRecord record, String transactionId) {
		DatabaseXid xid = DatabaseXid.parse(record.preparedId());
		XADataSource source;
		try {
			source = source(record.database());
		}
		catch (IllegalArgumentException ex) {
			throw new TandemException("Database '" + record.database() + "' of decided transaction " + transactionId
					+ " is not configured any more: configure it again so that its branch commits", ex);
		}
		XAConnection xa = null;
		try {
			xa = source.getXAConnection();
			XAResource resource = xa.getXAResource();
			try {
				resource.commit(xid, false);
				return true;
			}
			catch (XAException ex) {
				if (isPrepared(resource, xid)) {
					throw new TandemException("Branch " + xid + " of " + transactionId + " on database '"
							+ record.database() + "' is prepared and refused its commit: "
							+ DatabaseParticipant.describe(ex), ex);
				}
				// Not prepared any more: committed before (its marker row is visible) or rolled back.
				return markerVisible(xa, transactionId);
			}
		}
		catch (SQLException | XAException ex) {
			throw new TandemException("Database '" + record.database() + "' could not settle branch " + xid + " of "
					+ transactionId + ": " + DatabaseParticipant.describe(ex), ex);
		}
		finally {
			close(xa);
		}
	}

	/**
	 * Rolls back a prepared branch from a fresh connection; a branch already gone is fine.
	 * @throws TandemException if the database cannot be reached or the branch stays prepared
	 */
	void rollbackPrepared(String database, DatabaseXid xid) {
		XAConnection xa = null;
		try {
			xa = source(database).getXAConnection();
			XAResource resource = xa.getXAResource();
			try {
				resource.rollback(xid);
			}
			catch (XAException ex) {
				if (isPrepared(resource, xid)) {
					throw ex;
				}
			}
		}
		catch (SQLException | XAException ex) {
			throw new TandemException("Database '" + database + "' could not roll back branch " + xid + ": "
					+ DatabaseParticipant.describe(ex), ex);
		}
		finally {
			close(xa);
		}
	}

	/**
	 * Rolls back the prepared branches a transaction may have left on any database (an operator's
	 * abort of an undecided transaction). A database that cannot be reached now is logged at WARN:
	 * its branch is rolled back at the owner's next start or takeover ({@code recoverPreparedBranches}).
	 */
	void rollbackBranchesOf(String transactionId) {
		for (String database : this.sources.keySet()) {
			try {
				rollbackPrepared(database, DatabaseXid.of(transactionId, database));
			}
			catch (TandemException ex) {
				logger.warn("Branch of aborted transaction {} on database '{}' not rolled back now ({}); its owner's next "
						+ "start or takeover rolls it back", transactionId, database, ex.getMessage());
			}
		}
	}

	/** Rolls back a prepared branch in the background until done. */
	void rollbackLater(String database, DatabaseXid xid) {
		this.retries.untilDone("Rolling back branch " + xid + " on database '" + database + "'",
				() -> rollbackPrepared(database, xid));
	}

	/**
	 * Lists the prepared branches of an owner on every database.
	 * @return per database, the transaction ids of its prepared branches of that owner
	 * @throws TandemException if a database cannot be reached
	 */
	Map<String, List<String>> prepared(String owner) {
		Map<String, List<String>> prepared = new LinkedHashMap<>();
		for (String database : this.sources.keySet()) {
			XAConnection xa = null;
			try {
				xa = source(database).getXAConnection();
				List<String> transactionIds = new ArrayList<>();
				for (Xid xid : recover(xa.getXAResource())) {
					String transactionId = DatabaseXid.transactionIdIfOf(xid, owner, database);
					if (transactionId != null) {
						transactionIds.add(transactionId);
					}
				}
				prepared.put(database, transactionIds);
			}
			catch (SQLException | XAException ex) {
				throw new TandemException("Database '" + database + "' could not list its prepared branches: "
						+ DatabaseParticipant.describe(ex), ex);
			}
			finally {
				close(xa);
			}
		}
		return prepared;
	}

	private static Xid[] recover(XAResource resource) throws XAException {
		Xid[] xids = resource.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN);
		return (xids != null) ? xids : new Xid[0];
	}

	private static boolean isPrepared(XAResource resource, DatabaseXid xid) throws XAException {
		for (Xid listed : recover(resource)) {
			if (xid.sameAs(listed)) {
				return true;
			}
		}
		return false;
	}

	private boolean markerVisible(XAConnection xa, String transactionId) throws SQLException {
		try (Connection connection = xa.getConnection();
				PreparedStatement select = connection.prepareStatement("SELECT 1 FROM " + MARKER_TABLE
						+ " WHERE transaction_id = ?")) {
			select.setQueryTimeout(queryTimeoutSeconds());
			select.setString(1, transactionId);
			try (ResultSet result = select.executeQuery()) {
				return result.next();
			}
		}
	}

	private static void close(@Nullable XAConnection xa) {
		if (xa != null) {
			try {
				xa.close();
			}
			catch (SQLException ex) {
				logger.debug("Closing an XA connection: {}", ex.toString());
			}
		}
	}

	/** Closes every participant's connection; a prepared branch survives, one not prepared rolls back. */
	void close() {
		this.participants.values().forEach(DatabaseParticipant::discard);
	}

}
