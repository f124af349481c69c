package dev.tandem.test.spring;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

import dev.tandem.test.EmbeddedKafkaClusters;
import dev.tandem.test.EnableEmbeddedKafkaClusters.KafkaCluster;

/**
 * Applies {@link EmbeddedTandemClusters} to Spring test contexts; registered in
 * {@code META-INF/spring.factories}.
 *
 * @since 0.1.0
 */
public class EmbeddedTandemClustersContextCustomizerFactory implements ContextCustomizerFactory {

	/** Name of the {@link EmbeddedKafkaClusters} bean and of the property source. */
	public static final String BEAN_NAME = "embeddedTandemClusters";

	@Override
	public @Nullable ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		EmbeddedTandemClusters annotation = TestContextAnnotationUtils.findMergedAnnotation(testClass,
				EmbeddedTandemClusters.class);
		return (annotation != null) ? new Customizer(Declaration.of(annotation)) : null;
	}

	/** What the annotation declares; the context cache key. */
	record Declaration(List<String> clusters, List<String> brokerProperties, Set<String> saslPlain) {

		static Declaration of(EmbeddedTandemClusters annotation) {
			return new Declaration(Arrays.stream(annotation.clusters())
				.map((cluster) -> cluster.name() + ":" + cluster.brokers() + ":" + String.join(",", cluster.brokerProperties()))
				.toList(), List.of(annotation.brokerProperties()), Set.of(annotation.saslPlain()));
		}

		EmbeddedKafkaClusters.Builder builder(KafkaCluster[] declared) {
			EmbeddedKafkaClusters.Builder builder = EmbeddedKafkaClusters.builder();
			for (String property : this.brokerProperties) {
				String[] keyValue = keyValue(property);
				builder.brokerProperty(keyValue[0], keyValue[1]);
			}
			for (KafkaCluster cluster : declared) {
				if (this.saslPlain.contains(cluster.name())) {
					builder.saslPlainCluster(cluster.name(), cluster.brokers());
					continue;
				}
				Map<String, String> properties = new LinkedHashMap<>();
				for (String property : cluster.brokerProperties()) {
					String[] keyValue = keyValue(property);
					properties.put(keyValue[0], keyValue[1]);
				}
				builder.cluster(cluster.name(), cluster.brokers(), properties);
			}
			return builder;
		}

		private static String[] keyValue(String property) {
			int separator = property.indexOf('=');
			if (separator <= 0) {
				throw new IllegalStateException("Broker property '" + property + "' of @EmbeddedTandemClusters is not "
						+ "of the form key=value");
			}
			return new String[] { property.substring(0, separator).trim(), property.substring(separator + 1).trim() };
		}

	}

	private static final class Customizer implements ContextCustomizer {

		private final Declaration declaration;

		Customizer(Declaration declaration) {
			this.declaration = declaration;
		}

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
			EmbeddedTandemClusters annotation = TestContextAnnotationUtils.findMergedAnnotation(mergedConfig.getTestClass(),
					EmbeddedTandemClusters.class);
			if (annotation == null) {
				return;
			}
			EmbeddedKafkaClusters clusters = this.declaration.builder(annotation.clusters()).build().start();
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource(BEAN_NAME, clusters.tandemProperties()));
			DefaultListableBeanFactory beanFactory = (DefaultListableBeanFactory) context.getBeanFactory();
			beanFactory.registerSingleton(BEAN_NAME, clusters);
			// registered before every bean of the context, so destroyed after all of them: the
			// app's clients close while their brokers still run
			beanFactory.registerDisposableBean(BEAN_NAME, clusters::close);
		}

		@Override
		public boolean equals(@Nullable Object other) {
			return other instanceof Customizer customizer && customizer.declaration.equals(this.declaration);
		}

		@Override
		public int hashCode() {
			return this.declaration.hashCode();
		}

	}

}
