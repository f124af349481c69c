package dev.tandem.autoconfigure.diagnostics;

import java.lang.annotation.Annotation;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.UnsatisfiedDependencyException;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

import dev.tandem.autoconfigure.ClusterOrder;

/**
 * Reports a missing per-cluster bean ({@code <cluster>KafkaListenerContainerFactory},
 * {@code <cluster>TandemTemplate}, {@code <cluster>KafkaTemplate}, ...) whose cluster is not
 * configured as an unknown cluster name, naming the property to add. Runs before Spring Boot's
 * generic missing-bean analysis; leaves every other missing bean to it.
 *
 * @since 0.1.0
 */
public class UnknownClusterFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException>
		implements Ordered {

	static final List<String> SUFFIXES = List.of("KafkaListenerContainerFactory", "TandemTemplate", "KafkaTemplate",
			"KafkaProducerFactory", "KafkaConsumerFactory");

	private final Environment environment;

	/**
	 * Creates the analyzer (instantiated by Spring Boot with the failed context's environment).
	 * @param environment the environment
	 */
	public UnknownClusterFailureAnalyzer(Environment environment) {
		this.environment = environment;
	}

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
		String beanName = requestedName(rootFailure, cause);
		if (beanName == null) {
			return null;
		}
		for (String suffix : SUFFIXES) {
			if (beanName.endsWith(suffix) && beanName.length() > suffix.length()) {
				String cluster = beanName.substring(0, beanName.length() - suffix.length());
				List<String> known = ClusterOrder.of(this.environment, Binder.get(this.environment)
					.bind("tandem.clusters", Bindable.mapOf(String.class, Object.class))
					.orElse(Map.of())
					.keySet());
				if (known.contains(cluster)) {
					return null;
				}
				return new FailureAnalysis("Bean '" + beanName + "' refers to Kafka cluster '" + cluster
						+ "', which is not configured (property 'tandem.clusters." + cluster
						+ ".bootstrap-servers' is not set); configured clusters: " + known + ".",
						"Add tandem.clusters." + cluster + ".bootstrap-servers, or use the bean of a configured cluster: "
								+ known.stream().map((name) -> name + suffix).toList() + ".",
						cause);
			}
		}
		return null;
	}

	/**
	 * The missing bean's name: asked for by name, or by {@code @Qualifier} at an injection point.
	 */
	private static @Nullable String requestedName(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
		if (cause.getBeanName() != null) {
			return cause.getBeanName();
		}
		for (Throwable t = rootFailure; t != null; t = t.getCause()) {
			if (t instanceof UnsatisfiedDependencyException unsatisfied && unsatisfied.getInjectionPoint() != null) {
				for (Annotation annotation : unsatisfied.getInjectionPoint().getAnnotations()) {
					if (annotation instanceof Qualifier qualifier && !qualifier.value().isEmpty()) {
						return qualifier.value();
					}
				}
			}
			if (t.getCause() == t) {
				break;
			}
		}
		return null;
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
