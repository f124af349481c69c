package dev.tandem.autoconfigure;

import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Base of the registrars that add one bean per configured cluster, named
 * {@code <cluster><Suffix>}; a bean of that name defined by the user wins. The beans are not
 * default autowire candidates: inject them with {@code @Qualifier("<cluster><Suffix>")}.
 *
 * @since 0.1.0
 */
public abstract class ClusterBeanRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {

	private @org.jspecify.annotations.Nullable Environment environment;

	private @org.jspecify.annotations.Nullable BeanFactory beanFactory;

	@Override
	public void setEnvironment(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void setBeanFactory(BeanFactory beanFactory) throws BeansException {
		this.beanFactory = beanFactory;
	}

	/**
	 * Returns the bean factory, for suppliers that resolve other beans lazily.
	 * @return the bean factory
	 */
	protected BeanFactory beanFactory() {
		if (this.beanFactory == null) {
			throw new IllegalStateException("BeanFactory not set");
		}
		return this.beanFactory;
	}

	@Override
	public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
		if (this.environment == null) {
			return;
		}
		List<String> names = Binder.get(this.environment)
			.bind("tandem.clusters", Bindable.mapOf(String.class, Object.class))
			.map((map) -> ClusterOrder.of(this.environment, map.keySet()))
			.orElse(List.of());
		for (String cluster : names) {
			register(cluster, registry);
		}
	}

	/**
	 * Registers the beans of one cluster.
	 * @param cluster the cluster name
	 * @param registry the registry
	 */
	protected abstract void register(String cluster, BeanDefinitionRegistry registry);

	/**
	 * Registers a bean unless one of that name exists.
	 * @param <T> bean type
	 * @param registry the registry
	 * @param name the bean name
	 * @param type the bean type
	 * @param cluster the cluster
	 * @param supplier creates the bean
	 */
	protected <T> void registerIfMissing(BeanDefinitionRegistry registry, String name, Class<T> type, String cluster,
			Supplier<T> supplier) {
		if (registry.containsBeanDefinition(name)) {
			return;
		}
		RootBeanDefinition definition = new RootBeanDefinition(type, supplier);
		// Injected only where asked for by name, @Qualifier("<cluster><Suffix>"), so that beans that
		// inject one ProducerFactory, ConsumerFactory or KafkaTemplate by type (Spring Boot's own
		// Kafka auto-configuration among them) are not confused by one bean per cluster.
		definition.setDefaultCandidate(false);
		registry.registerBeanDefinition(name, definition);
	}

	/**
	 * Resolves a bean lazily.
	 * @param <T> type
	 * @param type the type
	 * @param use what to do with it
	 * @param <R> result type
	 * @return a supplier
	 */
	protected <T, R> Supplier<R> with(Class<T> type, Function<T, R> use) {
		return () -> use.apply(beanFactory().getBean(type));
	}

}
