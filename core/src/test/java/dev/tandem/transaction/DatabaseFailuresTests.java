package dev.tandem.transaction;

import java.io.IOException;
import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.sql.SQLIntegrityConstraintViolationException;
import java.sql.SQLInvalidAuthorizationSpecException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLSyntaxErrorException;
import java.sql.SQLTransientConnectionException;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DatabaseFailures}: which database failures fail every time and which may pass later, and
 * the default rollback rule built on it.
 */
class DatabaseFailuresTests {

	@Test
	void integrityDataAndSyntaxStatesAreNonTransient() {
		for (String state : new String[] { "23505", "23514", "22001", "22P02", "42601", "42501", "42P01" }) {
			SQLException failure = new SQLException("refused", state);
			assertThat(DatabaseFailures.isNonTransient(failure)).as(state).isTrue();
			assertThat(DatabaseFailures.isTransient(failure)).as(state).isFalse();
		}
	}

	@Test
	void connectionShutdownResourceSerializationAndDeadlockStatesAreTransient() {
		for (String state : new String[] { "08001", "08006", "57P01", "57P02", "57P03", "53300", "53100", "40001",
				"40P01" }) {
			SQLException failure = new SQLException("outage", state);
			assertThat(DatabaseFailures.isTransient(failure)).as(state).isTrue();
			assertThat(DatabaseFailures.isNonTransient(failure)).as(state).isFalse();
		}
	}

	@Test
	void jdbcExceptionTypesAreClassifiedWithoutAState() {
		assertThat(DatabaseFailures.isNonTransient(new SQLIntegrityConstraintViolationException("dup"))).isTrue();
		assertThat(DatabaseFailures.isNonTransient(new SQLSyntaxErrorException("bad"))).isTrue();
		assertThat(DatabaseFailures.isTransient(new SQLTransientConnectionException("gone"))).isTrue();
		assertThat(DatabaseFailures.isTransient(new SQLRecoverableException("lost"))).isTrue();
		// a connection failure is never a bad record, though the type is non-transient
		assertThat(DatabaseFailures.isTransient(new SQLNonTransientConnectionException("refused"))).isTrue();
		assertThat(DatabaseFailures.isNonTransient(new SQLNonTransientConnectionException("refused"))).isFalse();
	}

	@Test
	void aStatementOfATransactionThatAnEarlierFailureAbortedFailsEveryTime() {
		// the listener caught the first failure: the branch can only roll back, on every delivery
		assertThat(DatabaseFailures.isNonTransient(new SQLException("current transaction is aborted", "25P02"))).isTrue();
		assertThat(DatabaseFailures.isTransient(new SQLException("current transaction is aborted", "25P02"))).isFalse();
	}

	@Test
	void otherStatesAndNoSqlExceptionAreNeither() {
		for (Throwable failure : new Throwable[] { new SQLException("canceled", "57014"), new SQLException("no state"), new IOException("io"),
				new SQLException("password authentication failed", "28P01"),
				new SQLInvalidAuthorizationSpecException("access denied"), null }) {
			assertThat(DatabaseFailures.isNonTransient(failure)).as(String.valueOf(failure)).isFalse();
			assertThat(DatabaseFailures.isTransient(failure)).as(String.valueOf(failure)).isFalse();
		}
	}

	@Test
	void causesAndBatchEntriesAreLookedAtAndOneTransientFailureWins() {
		BatchUpdateException batch = new BatchUpdateException("Batch entry 3 was aborted", null, 0, new int[0]);
		batch.setNextException(new SQLException("duplicate key value violates unique constraint", "23505"));
		assertThat(DatabaseFailures.isNonTransient(new IOException("wrapped", batch))).isTrue();
		// the data source's own failure to join a transaction: no state, a connection refused in its causes
		SQLException unreachable = new SQLException("Database 'db' cannot join transaction t",
				new TandemException("could not begin", new SQLException("Connection refused", "08001")));
		assertThat(DatabaseFailures.isTransient(unreachable)).isTrue();
		SQLException mixed = new SQLException("refused", "23505",
				new SQLException("terminating connection due to administrator command", "57P01"));
		assertThat(DatabaseFailures.isTransient(mixed)).isTrue();
		assertThat(DatabaseFailures.isNonTransient(mixed)).isFalse();
	}

	@Test
	void theDefaultRollbackRuleAbortsOnANonTransientDatabaseFailureOnly() {
		assertThat(CrossClusterTransactionTemplate.defaultRollback(new SQLException("dup", "23505"))).isTrue();
		assertThat(CrossClusterTransactionTemplate.defaultRollback(new IOException(new SQLException("bad", "22001"))))
			.isTrue();
		assertThat(CrossClusterTransactionTemplate.defaultRollback(new SQLException("down", "08006"))).isFalse();
		assertThat(CrossClusterTransactionTemplate.defaultRollback(new SQLException("deadlock", "40P01"))).isFalse();
		assertThat(CrossClusterTransactionTemplate.defaultRollback(new IOException("checked"))).isFalse();
		assertThat(CrossClusterTransactionTemplate.defaultRollback(new IllegalStateException())).isTrue();
	}

}
