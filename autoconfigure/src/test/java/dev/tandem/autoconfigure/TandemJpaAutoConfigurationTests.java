package dev.tandem.autoconfigure;

import org.hibernate.SessionFactory;
import org.junit.jupiter.api.Test;
import org.postgresql.xa.PGXADataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;

import dev.tandem.autoconfigure.jdbc.CrossClusterJdbcTransactionManager;
import dev.tandem.autoconfigure.jpa.TandemJpaAutoConfiguration;
import dev.tandem.transaction.CrossClusterDataSource;
import dev.tandem.transaction.TransactionThreadBinding;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link TandemJpaAutoConfiguration} alone, without a database: Hibernate missing, transactions
 * disabled, no cross-cluster data source, no entity manager factory, and a user's transaction
 * manager. The JPA behaviour itself is {@code CrossClusterJpaTests}'.
 */
class TandemJpaAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(TandemJpaAutoConfiguration.class));

	@Test
	void withoutHibernateOnTheClassPathNothingIsConfigured() {
		this.runner.withUserConfiguration(Database.class)
			.withClassLoader(new FilteredClassLoader(SessionFactory.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean("tandemJpaDataSourceCheck")
				.doesNotHaveBean(TransactionThreadBinding.class)
				.doesNotHaveBean(PlatformTransactionManager.class));
	}

	@Test
	void disabledTransactionsConfigureNothing() {
		this.runner.withUserConfiguration(Database.class)
			.withPropertyValues("tandem.transaction.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(TransactionThreadBinding.class)
				.doesNotHaveBean(PlatformTransactionManager.class));
	}

	@Test
	void withoutACrossClusterDataSourceThereIsNoBindingNorTransactionManager() {
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.hasBean("tandemJpaDataSourceCheck")
			.doesNotHaveBean(TransactionThreadBinding.class)
			.doesNotHaveBean(PlatformTransactionManager.class));
	}

	@Test
	void withoutAnEntityManagerFactoryTheTransactionManagerIsTheJdbcOne() {
		this.runner.withUserConfiguration(Database.class).run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(TransactionThreadBinding.class);
			assertThat(context.getBean(PlatformTransactionManager.class))
				.isInstanceOf(CrossClusterJdbcTransactionManager.class);
		});
	}

	@Test
	void aTransactionManagerOfTheApplicationWins() {
		this.runner.withUserConfiguration(Database.class, UserTransactionManager.class)
			.run((context) -> assertThat(context.getBean(PlatformTransactionManager.class))
				.isSameAs(context.getBean(UserTransactionManager.class).manager));
	}

	@Configuration(proxyBeanMethods = false)
	static class Database {

		@Bean
		CrossClusterDataSource ledgerDataSource() {
			return new CrossClusterDataSource("ledger", new PGXADataSource(), new SimpleDriverDataSource());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserTransactionManager {

		final JdbcTransactionManager manager = new JdbcTransactionManager(new SimpleDriverDataSource());

		@Bean
		PlatformTransactionManager transactionManager() {
			return this.manager;
		}

	}

}
