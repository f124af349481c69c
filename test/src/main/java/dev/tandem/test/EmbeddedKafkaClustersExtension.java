package dev.tandem.test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

import dev.tandem.test.EnableEmbeddedKafkaClusters.KafkaCluster;

/**
 * JUnit Jupiter extension that provides {@link EmbeddedKafkaClusters} to a test class and
 * injects them, or one of their clusters, into constructor and method parameters.
 * <p>
 * Use it through {@link EnableEmbeddedKafkaClusters @EnableEmbeddedKafkaClusters}, or
 * programmatically as a {@code static} {@code @RegisterExtension} field:
 * <pre class="code">
 * &#064;RegisterExtension
 * static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);
 * </pre>
 * or, for clusters or broker settings no {@link ClusterPreset} offers, with a builder
 * ({@code new EmbeddedKafkaClustersExtension(ClusterPreset.EAST3_WEST3.builder().brokerProperty(...))}).
 * The field form lets static helpers reach the clusters through {@link #cluster(String)}.
 * <p>
 * <strong>Shared clusters.</strong> The clusters of a plain {@link ClusterPreset} (the
 * {@link #EmbeddedKafkaClustersExtension(ClusterPreset) preset constructor}, or an annotation
 * naming only a preset) are started once per JVM, by the first test class that needs them,
 * kept in the root {@link ExtensionContext.Store store} and closed when the JVM's test run
 * ends; every later class of the same JVM that names the preset gets the same clusters. Such
 * classes must use topic, group and transactional id names no other class uses, must not
 * assert on cluster-wide state (all topics, all groups, all transactions), and cannot stop or
 * restart brokers: {@link EmbeddedKafkaCluster#stopBroker(int)} and
 * {@link EmbeddedKafkaCluster#restartBroker(int)} throw {@link IllegalStateException} on a
 * shared cluster. A class that needs clusters of its own opts out with
 * {@link #perClass(ClusterPreset)}, {@code @EnableEmbeddedKafkaClusters(shared = false)}, or a
 * builder.
 * <p>
 * Clusters of a class's own (a builder, declared clusters or broker properties, or an opt-out)
 * are started before the class's first {@code @BeforeAll} method (or, for a non-static field,
 * when first needed) and kept in the class-level store, which closes them after the class's
 * last test. A {@code @Nested} class reuses its enclosing class's clusters. Use one
 * registration per test class: two would compete to resolve the same parameters.
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

	/** The preset whose clusters this registration shares with other classes, or null. */
	private final @Nullable ClusterPreset sharedPreset;

	private volatile @Nullable EmbeddedKafkaClusters clusters;

	/**
	 * Create an extension configured by the test class's
	 * {@link EnableEmbeddedKafkaClusters @EnableEmbeddedKafkaClusters} annotation.
	 * @since 0.1.0
	 */
	public EmbeddedKafkaClustersExtension() {
		this.builder = null;
		this.sharedPreset = null;
	}

	/**
	 * Create an extension that provides the clusters of a preset, shared with every other test
	 * class of the JVM that names the same preset (see the class description); for
	 * {@code @RegisterExtension} fields.
	 * @param preset the clusters to provide
	 * @since 0.1.0
	 * @see #perClass(ClusterPreset)
	 */
	public EmbeddedKafkaClustersExtension(ClusterPreset preset) {
		this.builder = preset.builder();
		this.sharedPreset = preset;
	}

	/**
	 * Create an extension that starts the clusters the given builder declares; for
	 * {@code @RegisterExtension} fields.
	 * @param builder the builder with at least one cluster declared
	 * @since 0.1.0
	 */
	public EmbeddedKafkaClustersExtension(EmbeddedKafkaClusters.Builder builder) {
		this.builder = builder;
		this.sharedPreset = null;
	}

	/**
	 * Create an extension that starts the clusters of a preset for the test class alone and
	 * closes them after its last test; for classes that stop or restart brokers or assert on
	 * cluster-wide state.
	 * @param preset the clusters to start
	 * @return a new extension, for a {@code @RegisterExtension} field
	 * @since 0.1.0
	 */
	public static EmbeddedKafkaClustersExtension perClass(ClusterPreset preset) {
		return new EmbeddedKafkaClustersExtension(preset.builder());
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
		ClusterPreset shared = sharedPreset(classContext);
		EmbeddedKafkaClusters clusters;
		if (shared != null) {
			// The root store is closed when the engine has run every test class of the JVM.
			clusters = context.getRoot()
				.getStore(NAMESPACE)
				.computeIfAbsent(shared, (key) -> startShared(shared), EmbeddedKafkaClusters.class);
		}
		else {
			clusters = classContext.getStore(NAMESPACE).computeIfAbsent(EmbeddedKafkaClusters.class,
					(key) -> createBuilder(classContext).build().start(), EmbeddedKafkaClusters.class);
		}
		this.clusters = clusters;
		return clusters;
	}

	private static EmbeddedKafkaClusters startShared(ClusterPreset preset) {
		EmbeddedKafkaClusters clusters = preset.builder().build().start();
		clusters.refuseBrokerChanges("the test classes that use ClusterPreset." + preset.name()
				+ " share it; give the class its own clusters with EmbeddedKafkaClustersExtension.perClass(ClusterPreset."
				+ preset.name() + ") or @EnableEmbeddedKafkaClusters(preset = ClusterPreset." + preset.name()
				+ ", shared = false)");
		return clusters;
	}

	/**
	 * The preset whose shared clusters the class gets, or null when it gets clusters of its own.
	 */
	private @Nullable ClusterPreset sharedPreset(ExtensionContext classContext) {
		if (this.builder != null) {
			return this.sharedPreset;
		}
		EnableEmbeddedKafkaClusters annotation = annotation(classContext);
		if (annotation.shared() && annotation.preset().length == 1 && annotation.clusters().length == 0
				&& annotation.brokerProperties().length == 0) {
			return annotation.preset()[0];
		}
		return null;
	}

	private static EnableEmbeddedKafkaClusters annotation(ExtensionContext classContext) {
		Class<?> testClass = classContext.getRequiredTestClass();
		return AnnotationSupport
			.findAnnotation(testClass, EnableEmbeddedKafkaClusters.class, classContext.getEnclosingTestClasses())
			.orElseThrow(() -> new IllegalStateException("Test class " + testClass.getName()
					+ " registers EmbeddedKafkaClustersExtension without @EnableEmbeddedKafkaClusters; annotate it or "
					+ "register the extension with a builder"));
	}

	private EmbeddedKafkaClusters.Builder createBuilder(ExtensionContext classContext) {
		if (this.builder != null) {
			return this.builder;
		}
		Class<?> testClass = classContext.getRequiredTestClass();
		EnableEmbeddedKafkaClusters annotation = annotation(classContext);
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
