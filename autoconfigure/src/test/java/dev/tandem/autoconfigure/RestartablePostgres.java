package dev.tandem.autoconfigure;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import javax.sql.DataSource;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jspecify.annotations.Nullable;

/**
 * An embedded PostgreSQL with prepared transactions on, which a test stops and starts again on the
 * same port and data directory (its prepared branches kept), as a database restarted under an
 * application: what the database outage and restart trials share. Not thread-safe beyond the
 * volatile server reference the application's threads read.
 */
final class RestartablePostgres implements AutoCloseable {

	private final EmbeddedPostgres.Builder builder;

	private final int port;

	private volatile @Nullable EmbeddedPostgres server;

	private RestartablePostgres(Path dataDir, int maxPreparedTransactions) throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			this.port = socket.getLocalPort();
		}
		this.builder = EmbeddedPostgres.builder()
			.setPort(this.port)
			.setDataDirectory(dataDir.resolve("postgres"))
			.setCleanDataDirectory(false)
			.setServerConfig("max_prepared_transactions", Integer.toString(maxPreparedTransactions));
	}

	/**
	 * Starts a database in a directory of the test's, on a free port.
	 * @param dataDir the test's directory; the database's files go to its {@code postgres}
	 * @param maxPreparedTransactions PostgreSQL's {@code max_prepared_transactions}
	 * @param schema statements run once started (the tables)
	 * @return the running database
	 */
	static RestartablePostgres start(Path dataDir, int maxPreparedTransactions, String... schema)
			throws IOException, SQLException {
		RestartablePostgres database = new RestartablePostgres(dataDir, maxPreparedTransactions);
		database.start();
		try (Connection connection = database.dataSource().getConnection();
				Statement statement = connection.createStatement()) {
			for (String sql : schema) {
				statement.execute(sql);
			}
		}
		return database;
	}

	/** The port it listens on, the same across restarts. */
	int port() {
		return this.port;
	}

	/** The {@code postgres} database of the running server. */
	DataSource dataSource() {
		EmbeddedPostgres running = this.server;
		if (running == null) {
			throw new IllegalStateException("the database is stopped");
		}
		return running.getPostgresDatabase();
	}

	/** Starts it (again) on the same port and data directory. */
	void start() throws IOException {
		this.server = this.builder.start();
	}

	/** Stops it: its sessions are dropped, its prepared transactions kept on disk. */
	void stop() throws IOException {
		EmbeddedPostgres running = this.server;
		this.server = null;
		if (running != null) {
			running.close();
		}
	}

	@Override
	public void close() throws IOException {
		stop();
	}

}
