package dev.tandem.autoconfigure.jdbc;

import javax.sql.DataSource;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionManager;

import dev.tandem.transaction.CrossClusterDataSource;

/**
 * When the application's one {@code DataSource} is a {@link CrossClusterDataSource} (from
 * {@code tandem.datasources.*} or a bean) and it defines no transaction manager: a
 * {@link CrossClusterJdbcTransactionManager} named {@code transactionManager} (the name Spring Data
 * repositories look for), so that {@code @Transactional} code and Spring Data JDBC work inside
 * cross-cluster transactions. A configuration of its own, after {@link TandemDataSourceAutoConfiguration}:
 * its conditions must see the data source beans that one registers. Before Spring Boot's
 * {@code DataSourceTransactionManagerAutoConfiguration}, which then backs off.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = TandemDataSourceAutoConfiguration.class,
		beforeName = "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration")
@ConditionalOnProperty(prefix = "tandem.transaction", name = "enabled", matchIfMissing = true)
@ConditionalOnClass(name = "org.springframework.jdbc.support.JdbcTransactionManager")
public class TandemJdbcTransactionManagerAutoConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnSingleCandidate(DataSource.class)
	static class TransactionManagerConfiguration {

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnSingleCandidate(CrossClusterDataSource.class)
		@ConditionalOnMissingBean(TransactionManager.class)
		static class CrossClusterTransactionManagerConfiguration {

			@Bean
			PlatformTransactionManager transactionManager(ObjectProvider<DataSource> dataSource,
					CrossClusterDataSource crossCluster) {
				DataSource single = dataSource.getIfUnique();
				if (single != null && single != crossCluster) {
					// the application's primary DataSource is another one: what Spring Boot would do
					return new org.springframework.jdbc.support.JdbcTransactionManager(single);
				}
				return new CrossClusterJdbcTransactionManager(crossCluster);
			}

		}

	}

}
