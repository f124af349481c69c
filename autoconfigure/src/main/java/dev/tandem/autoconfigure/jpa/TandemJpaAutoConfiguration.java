package dev.tandem.autoconfigure.jpa;

import java.util.Arrays;

import javax.sql.DataSource;

import jakarta.persistence.EntityManagerFactory;
import org.hibernate.SessionFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.orm.jpa.EntityManagerFactoryInfo;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionManager;

import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.autoconfigure.jdbc.CrossClusterJdbcTransactionManager;
import dev.tandem.autoconfigure.jdbc.TandemDataSourceAutoConfiguration;
import dev.tandem.autoconfigure.jdbc.TandemJdbcTransactionManagerAutoConfiguration;
import dev.tandem.transaction.CrossClusterDataSource;
import dev.tandem.transaction.TransactionThreadBinding;

/**
 * JPA in cross-cluster transactions, when Hibernate and Spring's JPA support are on the class path
 * (an application with {@code spring-boot-starter-data-jpa}) and the application's one
 * {@code DataSource} is a {@link CrossClusterDataSource} (a {@code tandem.datasources.<name>}
 * entry, primary when there are several): Spring Boot's own JPA auto-configuration builds the
 * entity manager factory on it, and this adds a {@link CrossClusterEntityManagerBinding} (every
 * cross-cluster transaction gets one entity manager on its branch, which the shared
 * {@code EntityManager} and Spring Data JPA repositories use) and, unless the application defines
 * one, a {@link CrossClusterJpaTransactionManager} named {@code transactionManager}. Before Spring
 * Boot's {@code HibernateJpaAutoConfiguration} (whose {@code JpaTransactionManager} then backs off)
 * and before {@link TandemJdbcTransactionManagerAutoConfiguration} (JDBC code works with this
 * manager too). Without an entity manager factory bean the transaction manager is the JDBC one.
 * <p>
 * Start-up fails, naming {@code tandem.datasources.<name>.primary}, when JPA is on the class path,
 * several {@code tandem.datasources} are configured, none is primary and so Spring Boot built no
 * entity manager factory.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = TandemDataSourceAutoConfiguration.class,
		before = TandemJdbcTransactionManagerAutoConfiguration.class,
		beforeName = { "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration" })
@ConditionalOnProperty(prefix = "tandem.transaction", name = "enabled", matchIfMissing = true)
@ConditionalOnClass({ EntityManagerFactory.class, SessionFactory.class, JpaTransactionManager.class,
		JdbcTransactionManager.class })
public class TandemJpaAutoConfiguration {

	private static final Logger logger = LoggerFactory.getLogger(TandemJpaAutoConfiguration.class);

	private static final TransactionThreadBinding NONE = (transaction) -> () -> {
	};

	/**
	 * Fails the start before any bean is created (before Spring Data JPA's repositories fail for want
	 * of an entity manager factory) when several {@code tandem.datasources} and none primary left
	 * Spring Boot without a single {@code DataSource} for JPA.
	 */
	@Bean
	static BeanFactoryPostProcessor tandemJpaDataSourceCheck() {
		return (beanFactory) -> {
			String[] databases = beanFactory.getBeanNamesForType(CrossClusterDataSource.class, false, false);
			if (databases.length < 2 || beanFactory.containsBean("entityManagerFactory")
					|| beanFactory.getBeanNamesForType(EntityManagerFactory.class, true, false).length > 0
					|| beanFactory.getBeanNamesForType(DataSource.class, false, false).length > databases.length) {
				return;
			}
			String name = databases[0].endsWith("DataSource")
					? databases[0].substring(0, databases[0].length() - "DataSource".length()) : databases[0];
			throw new TandemConfigurationException("tandem.datasources." + name + ".primary",
					"JPA is on the class path but Spring Boot built no EntityManagerFactory: the databases "
							+ Arrays.toString(databases) + " are all tandem.datasources entries and none is primary, "
							+ "so JPA has no single DataSource.",
					"Set tandem.datasources.<name>.primary=true on the database JPA writes to (for example "
							+ "tandem.datasources." + name + ".primary=true), or exclude Spring Boot's "
							+ "HibernateJpaAutoConfiguration if the application does not use JPA.");
		};
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnSingleCandidate(DataSource.class)
	static class SingleDataSourceConfiguration {

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnSingleCandidate(CrossClusterDataSource.class)
		static class EntityManagerConfiguration {

			@Bean
			@ConditionalOnMissingBean(TransactionManager.class)
			PlatformTransactionManager transactionManager(ObjectProvider<DataSource> dataSource,
					CrossClusterDataSource crossCluster, ObjectProvider<EntityManagerFactory> entityManagerFactory) {
				EntityManagerFactory factory = entityManagerFactory.getIfUnique();
				DataSource single = dataSource.getIfUnique();
				if (single != null && single != crossCluster) {
					// the application's primary DataSource is another one: what Spring Boot would do
					return (factory != null) ? new JpaTransactionManager(factory) : new JdbcTransactionManager(single);
				}
				if (factory == null) {
					return new CrossClusterJdbcTransactionManager(crossCluster);
				}
				if (!usesDataSource(factory, crossCluster)) {
					return new JpaTransactionManager(factory);
				}
				return new CrossClusterJpaTransactionManager(factory, crossCluster);
			}

			@Bean
			@ConditionalOnMissingBean(CrossClusterEntityManagerBinding.class)
			TransactionThreadBinding tandemEntityManagerBinding(CrossClusterDataSource crossCluster,
					ObjectProvider<EntityManagerFactory> entityManagerFactory) {
				EntityManagerFactory factory = entityManagerFactory.getIfUnique();
				if (factory == null) {
					return NONE;
				}
				if (!usesDataSource(factory, crossCluster)) {
					logger.info("The EntityManagerFactory does not use database '{}' (tandem.datasources.{}): its JPA writes "
							+ "do not join cross-cluster transactions", crossCluster.database(), crossCluster.database());
					return NONE;
				}
				return new CrossClusterEntityManagerBinding(factory, crossCluster);
			}

			private static boolean usesDataSource(EntityManagerFactory factory, CrossClusterDataSource crossCluster) {
				return factory instanceof EntityManagerFactoryInfo info && info.getDataSource() == crossCluster;
			}

		}

	}

}
