package dev.tandem.autoconfigure.jdbc;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Import;

import dev.tandem.autoconfigure.transaction.TandemTransactionAutoConfiguration;
import dev.tandem.transaction.CrossClusterDataSource;

/**
 * Database participants from {@code tandem.datasources.<name>.*}: one {@link CrossClusterDataSource}
 * bean per name ({@code <name>DataSource}), registered with the cross-cluster transaction manager
 * like every bean of that type. Runs before Spring Boot's DataSource auto-configuration, which then
 * backs off; {@link TandemJdbcTransactionManagerAutoConfiguration} adds the Spring transaction
 * manager.
 *
 * @since 0.1.0
 */
@AutoConfiguration(before = TandemTransactionAutoConfiguration.class,
		beforeName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnProperty(prefix = "tandem.transaction", name = "enabled", matchIfMissing = true)
@Import(DataSourceBeanRegistrar.class)
public class TandemDataSourceAutoConfiguration {

}
