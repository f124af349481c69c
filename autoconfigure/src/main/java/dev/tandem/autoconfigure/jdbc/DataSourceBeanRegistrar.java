package dev.tandem.autoconfigure.jdbc;

import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.transaction.CrossClusterDataSource;

/**
 * Registers one {@link CrossClusterDataSource} bean per {@code tandem.datasources.<name>}, named
 * {@code <name>DataSource} (a bean of that name defined by the application wins), primary when
 * {@code tandem.datasources.<name>.primary=true}. The beans are registered with their type, so the
 * transaction manager's auto-configuration finds them before they are created, and they are
 * ordinary {@code DataSource} beans: Spring Boot's {@code JdbcTemplate}, Spring Data JDBC and
 * health checks use them. A key under {@code tandem.datasources.<name>.*} that is no property
 * fails the start, naming the property it most likely meant ({@link DatasourceKeys}).
 */
class DataSourceBeanRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanClassLoaderAware,
		BeanFactoryAware {

	/** The bean that closes the pools. */
	static final String POOLS = "tandemDataSourcePools";

	/** Bean names end with this after the database's name. */
	static final String SUFFIX = "DataSource";

	private @Nullable Environment environment;

	private @Nullable ClassLoader classLoader;

	private @Nullable BeanFactory beanFactory;

	@Override
	public void setEnvironment(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void setBeanClassLoader(ClassLoader classLoader) {
		this.classLoader = classLoader;
	}

	@Override
	public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
		BeanFactory beanFactory = this.beanFactory;
		if (this.environment == null || beanFactory == null) {
			return;
		}
		Map<String, TandemProperties.Datasource> databases = DatasourceKeys.bind(this.environment);
		if (databases.isEmpty()) {
			return;
		}
		if (!registry.containsBeanDefinition(POOLS)) {
			registry.registerBeanDefinition(POOLS, new RootBeanDefinition(DataSourcePools.class, DataSourcePools::new));
		}
		ClassLoader loader = this.classLoader;
		databases.forEach((name, properties) -> {
			String bean = name + SUFFIX;
			if (registry.containsBeanDefinition(bean)) {
				return;
			}
			RootBeanDefinition definition = new RootBeanDefinition(CrossClusterDataSource.class,
					() -> DataSourceFactory.create(name, properties, beanFactory.getBean(POOLS, DataSourcePools.class),
							loader));
			definition.setPrimary(properties.isPrimary());
			// destroyed after the data sources that use its pools
			definition.setDependsOn(POOLS);
			registry.registerBeanDefinition(bean, definition);
		});
	}

}
