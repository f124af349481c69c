package dev.tandem.sample;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

import org.postgresql.ds.PGSimpleDataSource;
import org.postgresql.xa.PGXADataSource;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.tandem.transaction.CrossClusterDataSource;

/**
 * The router's database, for the chaos suite's database faults: with {@code flights.database-url}
 * set (a PostgreSQL JDBC URL, {@code max_prepared_transactions} above the router's slots), the
 * router writes one row per routed flight to {@value #TABLE} in the same cross-cluster transaction
 * as the records, through the {@link CrossClusterDataSource} {@value #DATABASE}. The checker
 * ({@link DatabaseCheck}) then matches rows with records. Not needed by the demo.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "flights.database-url")
class FlightLedger {

	/** The database participant's name. */
	static final String DATABASE = "flights";

	/** The table of routed flights: one row per flight routed, no unique key (duplicates stay countable). */
	static final String TABLE = "routed_flights";

	/** Creates {@value #TABLE} where missing. */
	static final String CREATE_TABLE = "CREATE TABLE IF NOT EXISTS " + TABLE
			+ " (run_id VARCHAR(64) NOT NULL, seq BIGINT NOT NULL, cluster VARCHAR(16) NOT NULL, "
			+ "transaction_id VARCHAR(128) NOT NULL, incarnation VARCHAR(16) NOT NULL)";

	@Bean
	CrossClusterDataSource flightsDataSource(@Value("${flights.database-url}") String url) {
		PGXADataSource xa = new PGXADataSource();
		xa.setUrl(url);
		PGSimpleDataSource outside = new PGSimpleDataSource();
		outside.setUrl(url);
		return new CrossClusterDataSource(DATABASE, xa, outside);
	}

	@Bean
	Writer flightLedgerWriter(CrossClusterDataSource flightsDataSource, @Value("${flights.run-id:}") String runId,
			@Value("${flights.incarnation:}") String incarnation) {
		return new Writer(flightsDataSource, runId, incarnation);
	}

	/** A routed flight's row. */
	record Routed(long seq, String cluster) {
	}

	/** Writes the rows of the current cross-cluster transaction. */
	static final class Writer {

		private final CrossClusterDataSource dataSource;

		private final String runId;

		private final String incarnation;

		Writer(CrossClusterDataSource dataSource, String runId, String incarnation) {
			this.dataSource = dataSource;
			this.runId = runId;
			this.incarnation = incarnation;
		}

		/**
		 * Inserts a row per routed flight on the transaction's connection (inside a
		 * {@code @CrossClusterTransactional} method).
		 * @throws SQLException if the insert fails (the transaction then aborts)
		 */
		void record(String transactionId, List<Routed> routed) throws SQLException {
			if (routed.isEmpty()) {
				return;
			}
			try (Connection connection = this.dataSource.getConnection();
					PreparedStatement insert = connection.prepareStatement("INSERT INTO " + TABLE
							+ " (run_id, seq, cluster, transaction_id, incarnation) VALUES (?, ?, ?, ?, ?)")) {
				for (Routed flight : routed) {
					insert.setString(1, this.runId);
					insert.setLong(2, flight.seq());
					insert.setString(3, flight.cluster());
					insert.setString(4, transactionId);
					insert.setString(5, this.incarnation);
					insert.addBatch();
				}
				insert.executeBatch();
			}
		}

	}

}
