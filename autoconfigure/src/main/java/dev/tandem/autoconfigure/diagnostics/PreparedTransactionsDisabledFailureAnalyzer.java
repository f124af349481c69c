package dev.tandem.autoconfigure.diagnostics;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.tandem.transaction.PreparedTransactionsDisabledException;

/**
 * Reports a {@link PreparedTransactionsDisabledException} (a database participant cannot prepare
 * transactions, such as a PostgreSQL with {@code max_prepared_transactions = 0}) naming the
 * database, the server setting and how to change it.
 *
 * @since 0.1.0
 */
public class PreparedTransactionsDisabledFailureAnalyzer
		extends AbstractFailureAnalyzer<PreparedTransactionsDisabledException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, PreparedTransactionsDisabledException cause) {
		return new FailureAnalysis("Database '" + cause.database() + "' cannot take part in cross-cluster "
				+ "transactions (server setting '" + cause.setting() + "'): " + cause.getMessage(),
				"Change " + cause.setting() + " on the database server as described above and restart it, or remove "
						+ "database '" + cause.database() + "' from the application (tandem.datasources."
						+ cause.database() + ".*, or its CrossClusterDataSource bean).",
				cause);
	}

}
