package dev.tandem.autoconfigure.diagnostics;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

class NoPrimaryDatabaseFailureAnalyzerTests {

	private static MockEnvironment twoDatabases() {
		return new MockEnvironment().withProperty("tandem.datasources.ledger.url", "jdbc:postgresql://db/ledger")
			.withProperty("tandem.datasources.audit.url", "jdbc:postgresql://db/audit");
	}

	@Test
	void aMissingJdbcTemplateWithSeveralDatabasesAndNonePrimaryNamesThePrimaryProperty() {
		FailureAnalysis analysis = new NoPrimaryDatabaseFailureAnalyzer(twoDatabases())
			.analyze(new NoSuchBeanDefinitionException(JdbcTemplate.class));
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).contains("No JdbcTemplate bean")
			.contains("ledger")
			.contains("audit")
			.contains("none is primary");
		assertThat(analysis.getAction()).contains("tandem.datasources.<name>.primary=true")
			.contains("ledgerDataSource")
			.contains("auditDataSource");
	}

	@Test
	void anAmbiguousDataSourceIsReportedTheSameWay() {
		FailureAnalysis analysis = new NoPrimaryDatabaseFailureAnalyzer(twoDatabases())
			.analyze(new NoUniqueBeanDefinitionException(DataSource.class, "ledgerDataSource", "auditDataSource"));
		assertThat(analysis).isNotNull();
		assertThat(analysis.getAction()).contains("primary=true");
	}

	@Test
	void aPrimaryDatabaseOneDatabaseOrAnotherMissingTypeIsLeftToSpringBoot() {
		assertThat(new NoPrimaryDatabaseFailureAnalyzer(twoDatabases().withProperty("tandem.datasources.audit.primary", "true"))
			.analyze(new NoSuchBeanDefinitionException(JdbcTemplate.class))).isNull();
		assertThat(new NoPrimaryDatabaseFailureAnalyzer(
				new MockEnvironment().withProperty("tandem.datasources.ledger.url", "jdbc:postgresql://db/ledger"))
			.analyze(new NoSuchBeanDefinitionException(JdbcTemplate.class))).isNull();
		assertThat(new NoPrimaryDatabaseFailureAnalyzer(twoDatabases())
			.analyze(new NoSuchBeanDefinitionException(KafkaTemplate.class))).isNull();
	}

}
