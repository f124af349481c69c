package dev.tandem.actuate;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import javax.sql.XAConnection;
import javax.sql.XADataSource;
import javax.transaction.xa.XAResource;
import javax.transaction.xa.Xid;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of one database participant, checked through the XA data source its branches use: UP
 * when a connection opens and is valid within the timeout and the database can prepare
 * transactions (PostgreSQL: {@code max_prepared_transactions} above zero); DOWN otherwise. Details:
 * the database product and version, {@code maxPreparedTransactions} (PostgreSQL) and
 * {@code preparedBranches}, the branches with Tandem's format id the database lists as prepared
 * (of every Tandem application using it; a number that stays above zero means branches waiting for
 * recovery). Never renders the connection's URL or credentials.
 *
 * @since 0.1.0
 */
public class DatabaseParticipantHealthIndicator extends AbstractHealthIndicator {

	/** Tandem's XA format id, "TAND" ({@code DatabaseXid}). */
	static final int TANDEM_FORMAT_ID = 0x54414E44;

	private final XADataSource dataSource;

	private final Duration timeout;

	/**
	 * Creates the indicator.
	 * @param dataSource the database's XA data source
	 * @param timeout how long the validity check may take (rounded up to whole seconds, at least 1);
	 *     the data source's own connect and socket timeouts bound the rest
	 */
	public DatabaseParticipantHealthIndicator(XADataSource dataSource, Duration timeout) {
		super("Database participant health check failed");
		this.dataSource = dataSource;
		this.timeout = timeout;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) throws Exception {
		XAConnection xa = this.dataSource.getXAConnection();
		try {
			Connection connection = xa.getConnection();
			int seconds = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (this.timeout.toMillis() + 999) / 1000));
			if (!connection.isValid(seconds)) {
				builder.down().withDetail("reason", "connection not valid within " + seconds + " s");
				return;
			}
			DatabaseMetaData metadata = connection.getMetaData();
			String product = metadata.getDatabaseProductName();
			builder.up().withDetail("database", product + " " + metadata.getDatabaseProductVersion());
			if ("PostgreSQL".equals(product)) {
				int max = maxPreparedTransactions(connection, seconds);
				builder.withDetail("maxPreparedTransactions", max);
				if (max == 0) {
					builder.down().withDetail("reason", "max_prepared_transactions = 0: prepared transactions are "
							+ "disabled, the database cannot take part in a two-phase commit");
				}
			}
			connection.close();
			builder.withDetail("preparedBranches", preparedBranches(xa.getXAResource()));
		}
		finally {
			xa.close();
		}
	}

	private static int maxPreparedTransactions(Connection connection, int seconds) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.setQueryTimeout(seconds);
			try (ResultSet result = statement.executeQuery("SHOW max_prepared_transactions")) {
				result.next();
				return Integer.parseInt(result.getString(1).trim());
			}
		}
	}

	private static int preparedBranches(XAResource resource) throws Exception {
		Xid[] xids = resource.recover(XAResource.TMSTARTRSCAN | XAResource.TMENDRSCAN);
		int count = 0;
		if (xids != null) {
			for (Xid xid : xids) {
				if (xid.getFormatId() == TANDEM_FORMAT_ID) {
					count++;
				}
			}
		}
		return count;
	}

}
