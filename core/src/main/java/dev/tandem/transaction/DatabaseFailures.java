package dev.tandem.transaction;

import java.sql.SQLException;
import java.sql.SQLInvalidAuthorizationSpecException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLNonTransientException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Tells a database failure that will fail every time it is tried again (a record that violates a
 * constraint, a value the column refuses, a statement the database cannot run) from one that may
 * pass later (the database down or restarting, a connection lost, a deadlock, a serialization
 * failure), from the {@link SQLException}s in a failure's causes: their SQL states (SQLSTATE
 * classes of ISO/IEC 9075 and PostgreSQL's appendix A, "PostgreSQL Error Codes") and the JDBC 4
 * exception types ({@link SQLTransientException}, {@link SQLRecoverableException},
 * {@link SQLNonTransientException}).
 * <p>
 * Transient: SQL state class {@code 08} (connection exception), {@code 53} (insufficient
 * resources), {@code 57P01}-{@code 57P03} (the server shutting down or starting),
 * {@code 40001} (serialization failure), {@code 40P01} (deadlock), an
 * {@link SQLTransientException}, an {@link SQLRecoverableException} or an
 * {@link SQLNonTransientConnectionException}. Non-transient: class {@code 22} (data exception),
 * {@code 23} (integrity constraint violation), {@code 42} (syntax error or access rule
 * violation), {@code 25P02} (in failed SQL transaction: an earlier statement of the same
 * transaction failed and was caught, so the branch can only roll back), or any other {@link SQLNonTransientException} except refused credentials (class
 * {@code 28}, {@link SQLInvalidAuthorizationSpecException}: the set-up's failure, not a record's,
 * so neither). Every {@code SQLException} in the
 * cause chain (and its {@link SQLException#getNextException() next exceptions}, where a batch
 * keeps its entries' failures) is looked at; one transient failure among them makes the whole
 * failure transient, so that an outage is never taken for a bad record. Everything else (no
 * {@code SQLException}, or SQL states of other classes) is neither.
 * <p>
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class DatabaseFailures {

	private DatabaseFailures() {
	}

	/**
	 * Returns whether a failure is a database failure that fails every time it is tried again:
	 * some {@code SQLException} in its causes is non-transient and none is transient.
	 * @param failure the failure, with its causes
	 * @return whether it is a non-transient database failure
	 */
	public static boolean isNonTransient(@Nullable Throwable failure) {
		return classify(failure) == Kind.NON_TRANSIENT;
	}

	/**
	 * Returns whether a failure is a database failure that may pass when tried again: some
	 * {@code SQLException} in its causes is transient.
	 * @param failure the failure, with its causes
	 * @return whether it is a transient database failure
	 */
	public static boolean isTransient(@Nullable Throwable failure) {
		return classify(failure) == Kind.TRANSIENT;
	}

	private enum Kind {
		TRANSIENT, NON_TRANSIENT, OTHER
	}

	private static Kind classify(@Nullable Throwable failure) {
		boolean nonTransient = false;
		Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
		for (Throwable current = failure; current != null && seen.add(current); current = current.getCause()) {
			if (current instanceof SQLException sql) {
				for (SQLException next = sql; next != null && (next == sql || seen.add(next)); next = next
					.getNextException()) {
					Kind kind = kindOf(next);
					if (kind == Kind.TRANSIENT) {
						return Kind.TRANSIENT;
					}
					nonTransient |= kind == Kind.NON_TRANSIENT;
				}
			}
		}
		return nonTransient ? Kind.NON_TRANSIENT : Kind.OTHER;
	}

	private static Kind kindOf(SQLException ex) {
		if (ex instanceof SQLTransientException || ex instanceof SQLRecoverableException
				|| ex instanceof SQLNonTransientConnectionException) {
			return Kind.TRANSIENT;
		}
		String state = ex.getSQLState();
		if (state != null && state.length() == 5) {
			String category = state.substring(0, 2);
			switch (category) {
				case "08", "53":
					return Kind.TRANSIENT;
				case "22", "23", "42":
					return Kind.NON_TRANSIENT;
				default:
					break;
			}
			if (state.equals("40001") || state.equals("40P01") || state.equals("57P01") || state.equals("57P02")
					|| state.equals("57P03")) {
				return Kind.TRANSIENT;
			}
			if (state.equals("25P02")) {
				return Kind.NON_TRANSIENT;
			}
		}
		if (ex instanceof SQLInvalidAuthorizationSpecException || (state != null && state.startsWith("28"))) {
			return Kind.OTHER; // credentials refused: the set-up's failure, not a record's
		}
		return (ex instanceof SQLNonTransientException) ? Kind.NON_TRANSIENT : Kind.OTHER;
	}

}
