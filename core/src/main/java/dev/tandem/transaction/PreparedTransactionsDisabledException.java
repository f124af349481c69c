package dev.tandem.transaction;

/**
 * A configured database cannot prepare transactions, so it cannot take part in Tandem's two-phase
 * commit: PostgreSQL ships with {@code max_prepared_transactions = 0}. Thrown by
 * {@link CrossClusterTransactionManager#start()}; fatal for the start. The database's operator must
 * change the setting {@link #setting()} (and, for PostgreSQL, restart the server), or the database
 * must be removed from the manager's configuration.
 *
 * @since 0.1.0
 */
public class PreparedTransactionsDisabledException extends TandemException {

	private static final long serialVersionUID = 1L;

	private final String database;

	private final String setting;

	/**
	 * Creates the exception.
	 * @param database the database's configured name
	 * @param setting the database server's setting that disables prepared transactions
	 * @param message what is wrong and how to fix it
	 */
	public PreparedTransactionsDisabledException(String database, String setting, String message) {
		super(message);
		this.database = database;
		this.setting = setting;
	}

	/**
	 * Returns the database's name in Tandem's configuration.
	 * @return the database name
	 */
	public String database() {
		return this.database;
	}

	/**
	 * Returns the database server's setting to change, such as {@code max_prepared_transactions}.
	 * @return the setting's name
	 */
	public String setting() {
		return this.setting;
	}

}
