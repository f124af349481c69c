package dev.tandem.transaction;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

import javax.sql.XAConnection;
import javax.sql.XADataSource;
import javax.transaction.xa.XAException;
import javax.transaction.xa.XAResource;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.transaction.Decision.DatabaseRecord;

/**
 * One database's participant in one slot: an XA connection kept across the slot's transactions,
 * and the branch of the transaction running in the slot. Phase one inserts the marker row
 * ({@link Databases#MARKER_TABLE}) and prepares the branch ({@code end} + {@code prepare}); after
 * the decision the branch is committed on the same connection; a connection whose state is not
 * known any more (a failed call, a hand-over to recovery) is closed, which leaves a prepared
 * branch to recovery and makes the database roll back one that was not prepared.
 * <p>
 * Confined to the transaction that holds its slot; not thread-safe.
 */
final class DatabaseParticipant {

	private static final Logger logger = LoggerFactory.getLogger(DatabaseParticipant.class);

	private enum Phase {
		IDLE, ACTIVE, PREPARED
	}

	final String database;

	private final XADataSource source;

	private final Databases databases;

	private @Nullable XAConnection xaConnection;

	private @Nullable Connection connection;

	private @Nullable DatabaseXid xid;

	private Phase phase = Phase.IDLE;

	DatabaseParticipant(String database, XADataSource source, Databases databases) {
		this.database = database;
		this.source = source;
		this.databases = databases;
	}

	/**
	 * Starts this transaction's branch and returns its connection.
	 * @throws TandemException if the database cannot be reached or refuses the branch
	 */
	Connection begin(String transactionId) {
		if (this.phase != Phase.IDLE) {
			throw new IllegalStateException("Database '" + this.database + "' still has a branch of another transaction");
		}
		DatabaseXid branch = DatabaseXid.of(transactionId, this.database);
		try {
			if (this.xaConnection == null) {
				this.xaConnection = this.source.getXAConnection();
			}
			// Before start(): a driver hands out a connection in auto-commit outside a branch.
			Connection handle = this.xaConnection.getConnection();
			this.xaConnection.getXAResource().start(branch, XAResource.TMNOFLAGS);
			this.connection = handle;
			this.xid = branch;
			this.phase = Phase.ACTIVE;
			return handle;
		}
		catch (SQLException | XAException ex) {
			discard();
			throw new TandemException("Database '" + this.database + "' could not begin the branch of transaction "
					+ transactionId + ": " + describe(ex), ex);
		}
	}

	/** Returns the open branch's connection. */
	Connection connection() {
		if (this.connection == null) {
			throw new IllegalStateException("Database '" + this.database + "' has no open branch");
		}
		return this.connection;
	}

	/**
	 * Phase one: inserts the marker row, ends and prepares the branch.
	 * @return the prepared branch, for the decision
	 * @throws TandemException if the database failed or refused; the caller rolls back
	 */
	DatabaseRecord prepare(String transactionId) {
		DatabaseXid branch = requireBranch();
		try {
			try (PreparedStatement insert = connection().prepareStatement("INSERT INTO " + Databases.MARKER_TABLE
					+ " (transaction_id, created_at) VALUES (?, ?)")) {
				insert.setQueryTimeout(this.databases.queryTimeoutSeconds());
				insert.setString(1, transactionId);
				insert.setLong(2, System.currentTimeMillis());
				insert.executeUpdate();
			}
			XAResource resource = resource();
			resource.end(branch, XAResource.TMSUCCESS);
			int vote = resource.prepare(branch);
			if (vote != XAResource.XA_OK) {
				// The marker row makes every branch an update: a read-only vote means the driver lost it.
				throw new TandemException("Database '" + this.database + "' voted " + vote
						+ " (not XA_OK) on the prepare of " + transactionId);
			}
			this.phase = Phase.PREPARED;
			return new DatabaseRecord(this.database, branch.toString());
		}
		catch (SQLException | XAException ex) {
			throw new TandemException("Database '" + this.database + "' could not prepare transaction " + transactionId
					+ ": " + describe(ex), ex);
		}
	}

	/** Phase two: commits the prepared branch; returns the failure, or null once committed. */
	@Nullable Throwable commitOrFailure() {
		try {
			resource().commit(requireBranch(), false);
			reset();
			return null;
		}
		catch (XAException | RuntimeException ex) {
			logger.warn("Commit of branch {} on database '{}' failed: {}", this.xid, this.database, describe(ex));
			discard();
			return ex;
		}
	}

	/**
	 * Rolls back the branch, if any. A prepared branch whose rollback fails is rolled back in the
	 * background; a branch not prepared yet dies with its connection, which is closed.
	 */
	void rollback() {
		DatabaseXid branch = this.xid;
		if (this.phase == Phase.IDLE || branch == null) {
			return;
		}
		try {
			XAResource resource = resource();
			if (this.phase == Phase.ACTIVE) {
				try {
					resource.end(branch, XAResource.TMFAIL);
				}
				catch (XAException ex) {
					logger.debug("End of branch {} on database '{}' before its rollback: {}", branch, this.database,
							describe(ex));
				}
			}
			resource.rollback(branch);
			reset();
		}
		catch (XAException | RuntimeException ex) {
			boolean prepared = this.phase == Phase.PREPARED;
			logger.warn("Rollback of branch {} on database '{}' failed ({}); {}", branch, this.database, describe(ex),
					prepared ? "rolling it back in the background" : "closing its connection, which rolls it back");
			discard();
			if (prepared) {
				this.databases.rollbackLater(this.database, branch);
			}
		}
	}

	/**
	 * Leaves the branch to recovery (a decided transaction some participant could not commit, a
	 * decision with an unknown outcome): closes the connection, which a prepared branch survives.
	 */
	void handOver() {
		discard();
	}

	private XAResource resource() throws XAException {
		if (this.xaConnection == null) {
			throw new XAException(XAException.XAER_RMFAIL);
		}
		try {
			return this.xaConnection.getXAResource();
		}
		catch (SQLException ex) {
			XAException failure = new XAException(XAException.XAER_RMFAIL);
			failure.initCause(ex);
			throw failure;
		}
	}

	private DatabaseXid requireBranch() {
		if (this.xid == null) {
			throw new IllegalStateException("Database '" + this.database + "' has no branch");
		}
		return this.xid;
	}

	private void reset() {
		Connection handle = this.connection;
		this.connection = null;
		this.xid = null;
		this.phase = Phase.IDLE;
		if (handle != null) {
			try {
				handle.close(); // the application's handle; the XA connection stays open for the slot
			}
			catch (SQLException ex) {
				logger.debug("Closing the connection handle of database '{}': {}", this.database, ex.toString());
			}
		}
	}

	/** Closes the XA connection: a prepared branch survives it, one not prepared is rolled back. */
	void discard() {
		XAConnection physical = this.xaConnection;
		this.xaConnection = null;
		this.connection = null;
		this.xid = null;
		this.phase = Phase.IDLE;
		if (physical != null) {
			try {
				physical.close();
			}
			catch (SQLException ex) {
				logger.debug("Closing the XA connection of database '{}': {}", this.database, ex.toString());
			}
		}
	}

	static String describe(Throwable ex) {
		if (ex instanceof XAException xa) {
			Throwable cause = xa.getCause();
			return "XA error " + xa.errorCode + ((cause != null) ? " (" + cause.getMessage() + ")"
					: (xa.getMessage() != null) ? " (" + xa.getMessage() + ")" : "");
		}
		return ex.toString();
	}

}
