package dev.tandem.test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ExtensionContext.Store;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

import dev.tandem.test.EnableEmbeddedKafkaClusters.KafkaCluster;

/**
 * JUnit Jupiter extension that starts {@link EmbeddedKafkaClusters} once per test class and
 * injects them, or one of their clusters, into constructor and method parameters.
 * <p>
 * Use it through {@link EnableEmbeddedKafkaClusters @EnableEmbeddedKafkaClusters}, or
 * programmatically as a {@code static} {@code @RegisterExtension} field:
 * <pre class="code">
 * &#064;RegisterExtension
 * static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST3_WEST3);
 * </pre>
 * or, for clusters or broker settings no {@link ClusterPreset} offers, with a builder
 * ({@code new EmbeddedKafkaClustersExtension(ClusterPreset.EAST3_WEST3.builder().brokerProperty(...))}).
 * The field form lets static helpers reach the clusters through {@link #cluster(String)}.
 * The clusters are started before the class's first {@code @BeforeAll} method (or, for a
 * non-static field, when first needed) and kept in the class-level
 * {@link ExtensionContext.Store store}, which closes them after the class's last test; a
 * {@code @Nested} class reuses its enclosing class's clusters. Use one registration per test
 * class: two would compete to resolve the same parameters.
 * <p>
 * Parameters of type {@link EmbeddedKafkaClusters} receive all clusters. Parameters of type
 * {@link EmbeddedKafkaCluster} receive the cluster named by {@link ClusterName @ClusterName},
 * or the only cluster when just one is declared.
 *
 * @author Tandem
 * @since 0.1.0
 */
public class EmbeddedKafkaClustersExtension implements BeforeAllCallback, ParameterResolver {

	private static final Namespace NAMESPACE = Namespace.create(EmbeddedKafkaClustersExtension.class);

	private final EmbeddedKafkaClusters.@Nullable Builder builder;

	private volatile @Nullable EmbeddedKafkaClusters clusters;

	/**
	 * Create an extension configured by the test class's
	 * {@link EnableEmbeddedKafkaClusters @EnableEmbeddedKafkaClusters} annotation.
	 * @since 0.1.0
	 */
	public EmbeddedKafkaClustersExtension() {
		this.builder = null;
	}

	/**
	 * Create an extension that starts the clusters of a preset; for {@code @RegisterExtension}
	 * fields.
	 * @param preset the clusters to start
	 * @since 0.1.0
	 */
	public EmbeddedKafkaClustersExtension(ClusterPreset preset) {
		this(preset.builder());
	}

	/**
	 * Create an extension that starts the clusters the given builder declares; for
	 * {@code @RegisterExtension} fields.
	 * @param builder the builder with at least one cluster declared
	 * @since 0.1.0
	 */
	public EmbeddedKafkaClustersExtension(EmbeddedKafkaClusters.Builder builder) {
		this.builder = builder;
	}

	/**
	 * Return the running clusters, for tests that hold this extension in a field.
	 * @return the clusters
	 * @throws IllegalStateException if the clusters have not been started yet (before the
	 * test class's {@code @BeforeAll} phase)
	 * @since 0.1.0
	 */
	public EmbeddedKafkaClusters clusters() {
		EmbeddedKafkaClusters clusters = this.clusters;
		if (clusters == null) {
			throw new IllegalStateException("Embedded Kafka clusters are not started yet; "
					+ "register the extension on a static field or use it from a test method");
		}
		return clusters;
	}

	/**
	 * Return one running cluster, for tests that hold this extension in a field.
	 * @param name the cluster name
	 * @return the cluster
	 * @throws IllegalArgumentException if no cluster has that name
	 * @throws IllegalStateException if the clusters have not been started yet
	 * @since 0.1.0
	 */
	public EmbeddedKafkaCluster cluster(String name) {
		return clusters().cluster(name);
	}

	@Override
	public void beforeAll(ExtensionContext context) {
		clusters(context);
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Class<?> type = parameterContext.getParameter().getType();
		return type == EmbeddedKafkaClusters.class || type == EmbeddedKafkaCluster.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		EmbeddedKafkaClusters clusters = clusters(extensionContext);
		if (parameterContext.getParameter().getType() == EmbeddedKafkaClusters.class) {
			return clusters;
		}
		Optional<ClusterName> clusterName = parameterContext.findAnnotation(ClusterName.class);
		if (clusterName.isPresent()) {
			try {
				return clusters.cluster(clusterName.get().value());
			}
			catch (IllegalArgumentException ex) {
				throw new ParameterResolutionException(ex.getMessage(), ex);
			}
		}
		List<EmbeddedKafkaCluster> all = clusters.clusters();
		if (all.size() != 1) {
			throw new ParameterResolutionException("Annotate parameter '" + parameterContext.getParameter().getName()
					+ "' with @ClusterName to choose one of the embedded Kafka clusters " + clusters.names());
		}
		return all.get(0);
	}

	private EmbeddedKafkaClusters clusters(ExtensionContext context) {
		ExtensionContext classContext = classContext(context);
		Store store = classContext.getStore(NAMESPACE);
		EmbeddedKafkaClusters clusters = store.computeIfAbsent(EmbeddedKafkaClusters.class,
				(key) -> createBuilder(classContext).build().start(), EmbeddedKafkaClusters.class);
		this.clusters = clusters;
		return clusters;
	}

	private EmbeddedKafkaClusters.Builder createBuilder(ExtensionContext classContext) {
		if (this.builder != null) {
			return this.builder;
		}
		Class<?> testClass = classContext.getRequiredTestClass();
		EnableEmbeddedKafkaClusters annotation = AnnotationSupport
			.findAnnotation(testClass, EnableEmbeddedKafkaClusters.class, classContext.getEnclosingTestClasses())
			.orElseThrow(() -> new IllegalStateException("Test class " + testClass.getName()
					+ " registers EmbeddedKafkaClustersExtension without @EnableEmbeddedKafkaClusters; annotate it or "
					+ "register the extension with a builder"));
		if (annotation.preset().length + annotation.clusters().length == 0) {
			throw new IllegalStateException("@EnableEmbeddedKafkaClusters on " + testClass.getName()
					+ " declares no cluster; name a preset or declare clusters");
		}
		if (annotation.preset().length > 1) {
			throw new IllegalStateException("@EnableEmbeddedKafkaClusters on " + testClass.getName()
					+ " names more than one preset: " + List.of(annotation.preset()));
		}
		EmbeddedKafkaClusters.Builder builder = EmbeddedKafkaClusters.builder();
		for (ClusterPreset preset : annotation.preset()) {
			preset.declareOn(builder);
		}
		for (String property : annotation.brokerProperties()) {
			String[] keyValue = keyValue(property, testClass);
			builder.brokerProperty(keyValue[0], keyValue[1]);
		}
		for (KafkaCluster cluster : annotation.clusters()) {
			Map<String, String> properties = new LinkedHashMap<>();
			for (String property : cluster.brokerProperties()) {
				String[] keyValue = keyValue(property, testClass);
				properties.put(keyValue[0], keyValue[1]);
			}
			builder.cluster(cluster.name(), cluster.brokers(), properties);
		}
		return builder;
	}

	private static String[] keyValue(String property, Class<?> testClass) {
		int separator = property.indexOf('=');
		if (separator <= 0) {
			throw new IllegalStateException("Broker property '" + property + "' on " + testClass.getName()
					+ " is not of the form key=value");
		}
		return new String[] { property.substring(0, separator).trim(), property.substring(separator + 1).trim() };
	}

	/**
	 * The nearest enclosing class-level context, whose store is closed after the class.
	 */
	private static ExtensionContext classContext(ExtensionContext context) {
		ExtensionContext current = context;
		while (current.getTestMethod().isPresent() && current.getParent().isPresent()) {
			current = current.getParent().get();
		}
		return current;
	}

}
