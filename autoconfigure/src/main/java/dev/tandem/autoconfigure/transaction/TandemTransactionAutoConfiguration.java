package dev.tandem.autoconfigure.transaction;

import java.time.Duration;
import java.util.List;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.Advisor;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

import dev.tandem.autoconfigure.TandemClusters;
import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.autoconfigure.coordinator.TandemCoordinatorAutoConfiguration;
import dev.tandem.text.DurationText;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.transaction.CrossClusterDataSource;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;
import dev.tandem.transaction.CrossClusterTransactionTemplate;
import dev.tandem.transaction.CrossClusterTransactional;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.TransactionListener;
import dev.tandem.transaction.TransactionSizing;
import dev.tandem.transaction.TransactionStatistics;

/**
 * Cross-cluster transactions: the {@link CrossClusterTransactionManager} (started, with recovery
 * of this instance's in-doubt transactions, before any listener container starts), the
 * {@link CrossClusterTransactionTemplate}, the {@code @CrossClusterTransactional} advisor and a
 * {@link ClusterTransactionalTemplate} per cluster.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = TandemCoordinatorAutoConfiguration.class,
		afterName = { "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration",
				"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnProperty(prefix = "tandem.transaction", name = "enabled", matchIfMissing = true)
@Import({ ClusterTransactionalTemplateRegistrar.class, TandemTransactionAutoConfiguration.AutoProxyRegistrar.class })
public class TandemTransactionAutoConfiguration {

	private static final Logger logger = LoggerFactory.getLogger(TandemTransactionAutoConfiguration.class);

	/**
	 * Spring Kafka's switch for its templates' per-record observations; Tandem's templates follow it.
	 */
	static final String SEND_OBSERVATIONS_PROPERTY = "spring.kafka.template.observation-enabled";


	@Bean
	@ConditionalOnMissingBean
	TransactionStatistics tandemTransactionStatistics() {
		return new TransactionStatistics();
	}

	@Bean(initMethod = "start", destroyMethod = "close")
	@ConditionalOnMissingBean
	CrossClusterTransactionManager crossClusterTransactionManager(TandemProperties properties, TandemClusters clusters,
			DecisionLog decisionLog, ObjectProvider<TransactionListener> listeners, ObjectProvider<ProtocolHook> hook,
			ObjectProvider<dev.tandem.failover.LeaderCacheRegistry> leaderCaches,
			ObjectProvider<CrossClusterDataSource> databases,
			ObjectProvider<dev.tandem.transaction.TransactionThreadBinding> threadBindings, Environment environment) {
		TandemProperties.Transaction transaction = properties.getTransaction();
		String idPrefix = transaction.getIdPrefix();
		if (idPrefix == null || idPrefix.isBlank()) {
			idPrefix = environment.getProperty("spring.application.name");
		}
		if (idPrefix == null || idPrefix.isBlank()) {
			throw new TandemConfigurationException("tandem.transaction.id-prefix",
					"Cross-cluster transactions need a transactional id prefix, and neither tandem.transaction.id-prefix "
							+ "nor spring.application.name is set.",
					"Set tandem.transaction.id-prefix (stable across restarts, for example the application's name), or "
							+ "disable cross-cluster transactions with tandem.transaction.enabled=false.");
		}
		String instanceId = transaction.getInstanceId();
		if (instanceId == null || instanceId.isBlank()) {
			throw new TandemConfigurationException("tandem.transaction.instance-id",
					"Cross-cluster transactions need an instance id that is stable across restarts of this instance, "
							+ "so that a restarted instance recovers its own in-doubt transactions.",
					"Set tandem.transaction.instance-id, unique among running instances and the same after a restart "
							+ "(for example the StatefulSet pod name: tandem.transaction.instance-id=${HOSTNAME}).");
		}
		transaction.validate();
		if (instanceId.contains("${") || idPrefix.contains("${")) {
			throw new TandemConfigurationException(instanceId.contains("${") ? "tandem.transaction.instance-id"
					: "tandem.transaction.id-prefix", "'" + (instanceId.contains("${") ? instanceId : idPrefix)
							+ "' contains an unresolved placeholder: every instance would get the same id.",
					"Define the variable it refers to (for example POD_NAME from the StatefulSet's metadata.name), or give "
							+ "a default: ${POD_NAME:router-0}.");
		}
		if (clusters.names().isEmpty()) {
			throw new TandemConfigurationException("tandem.clusters",
					"Cross-cluster transactions are enabled but no Kafka cluster is configured.",
					"Add tandem.clusters.<name>.bootstrap-servers for each cluster, or set tandem.transaction.enabled=false.");
		}
		CrossClusterTransactionManagerBuilder builder = CrossClusterTransactionManager.builder()
			.idPrefix(idPrefix)
			.instanceId(instanceId)
			.decisionLog(decisionLog)
			.markerTopic(transaction.getMarkerTopic())
			.slots(transaction.getSlots())
			.transactionTimeout(transaction.getTimeout())
			.commitTimeout(transaction.getCommitTimeout())
			.decisionTimeout(transaction.getDecisionTimeout())
			.leaseTimeout(transaction.getLeaseTimeout())
			.staleDecisionAge(transaction.getStaleDecisionAge())
			// With the embedded coordinator every instance has its own log, which says so
			// (DecisionLog.sharedByInstances): the manager then finds duplicates through Kafka by itself.
			.requireAllClustersAtStart(transaction.isRequireAllClustersAtStart());
		for (String cluster : clusters.names()) {
			builder.cluster(cluster, clusters.producerConfig(cluster), clusters.consumerConfig(cluster),
					clusters.adminConfig(cluster));
		}
		listeners.orderedStream().forEach(builder::listener);
		// a JPA entity manager per transaction, bound where Spring's shared EntityManager looks (TandemJpaAutoConfiguration)
		threadBindings.orderedStream().forEach(builder::threadBinding);
		// Database participants: every CrossClusterDataSource bean (declared with that type) joins the transactions.
		java.util.Set<String> databaseNames = new java.util.HashSet<>();
		databases.orderedStream().forEach((database) -> {
			if (!databaseNames.add(database.database())) {
				throw new TandemConfigurationException("tandem.datasources." + database.database(), "Database '"
						+ database.database() + "' is configured twice (tandem.datasources." + database.database()
						+ " or CrossClusterDataSource beans): a transaction's branch must have one XA data source.",
						"Keep one: remove tandem.datasources." + database.database() + " or the CrossClusterDataSource "
								+ "bean of the same database name.");
			}
			builder.database(database.database(), database.xaDataSource());
		});
		// the observation's step events (ObservationTransactionObserver) are one of these hooks
		List<ProtocolHook> hooks = hook.orderedStream().toList();
		if (hooks.size() == 1) {
			builder.protocolHook(hooks.get(0));
		}
		else if (hooks.size() > 1) {
			builder.protocolHook(new CompositeProtocolHook(hooks));
		}
		// The reachability watch knows when a cluster lost all its brokers: a transaction needing it fails at once.
		leaderCaches.ifAvailable((registry) -> builder
			.clusterReachability((cluster) -> !registry.unreachableClients(cluster).isEmpty()));
		leaderCaches.ifAvailable((registry) -> builder.producerCreated((cluster, producer) -> {
			try {
				registry.bind(cluster, producer);
			}
			catch (IllegalArgumentException ex) {
				// the producer's properties were not instrumented (a user customizer replaced them)
				logger.debug("Transactional producer of cluster '{}' has no leader cache: {}", cluster, ex.getMessage());
			}
		}));
		return builder.build();
	}

	@Bean
	@ConditionalOnMissingBean
	CrossClusterTransactionTemplate crossClusterTransactionTemplate(CrossClusterTransactionManager manager) {
		return new CrossClusterTransactionTemplate(manager);
	}

	/**
	 * A Micrometer Observation per cross-cluster transaction when the application has an
	 * {@code ObservationRegistry} (turn it off with Spring Boot's
	 * {@code management.observations.enable.tandem=false}), and per record sent in one only with
	 * {@code spring.kafka.template.observation-enabled=true}, as for Spring Kafka's templates.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "io.micrometer.observation.ObservationRegistry")
	@ConditionalOnBean(type = "io.micrometer.observation.ObservationRegistry")
	static class ObservationConfiguration {

		@Bean
		@ConditionalOnMissingBean(TandemTransactionObserver.class)
		ObservationTransactionObserver tandemTransactionObserver(io.micrometer.observation.ObservationRegistry registry,
				Environment environment) {
			return new ObservationTransactionObserver(registry,
					environment.getProperty(SEND_OBSERVATIONS_PROPERTY, Boolean.class, false));
		}

	}

	@Bean
	@ConditionalOnMissingBean
	ListenerPipelines tandemListenerPipelines(CrossClusterTransactionManager manager, TandemProperties properties,
			TandemClusters clusters) {
		int depth = properties.getListener().getPipelineDepth();
		int slots = properties.getTransaction().getSlots();
		if (depth < 1 || depth > slots) {
			throw new TandemConfigurationException("tandem.listener.pipeline-depth", "tandem.listener.pipeline-depth is "
					+ depth + " but must be between 1 and tandem.transaction.slots (" + slots + "): each transaction in "
					+ "flight holds a slot.", "Set tandem.listener.pipeline-depth to 1 (no pipelining) up to " + slots
							+ " (" + ListenerPipelines.DEFAULT_DEPTH + " by default), or raise tandem.transaction.slots.");
		}
		TandemProperties.Listener listener = properties.getListener();
		if (listener.getMaxRecords() < 1) {
			throw new TandemConfigurationException("tandem.listener.max-records", "tandem.listener.max-records is "
					+ listener.getMaxRecords() + " but must be 1 or more.", "Set tandem.listener.max-records to 1 or more ("
							+ TransactionSizing.DEFAULT.maxRecords() + " by default).");
		}
		if (listener.getGrowth() < 1 || listener.getGrowth() > 1000) {
			throw new TandemConfigurationException("tandem.listener.growth", "tandem.listener.growth is "
					+ listener.getGrowth() + " but must be 1 to 1000.", "Set tandem.listener.growth to 1 (no growth) up to 1000 ("
							+ TransactionSizing.DEFAULT.growth() + " by default).");
		}
		if (listener.getMaxInterval().isNegative() || listener.getMaxInterval().isZero()) {
			throw new TandemConfigurationException("tandem.listener.max-interval", "tandem.listener.max-interval is "
					+ DurationText.of(listener.getMaxInterval()) + " but must be positive.",
					"Set a positive tandem.listener.max-interval (" + DurationText.of(TransactionSizing.DEFAULT.maxInterval())
							+ " by default).");
		}
		TransactionSizing sizing = new TransactionSizing(listener.getMaxRecords(), listener.getGrowth(),
				listener.getMaxInterval());
		if (sizing.maxInterval().compareTo(manager.transactionTimeout()) >= 0) {
			throw new TandemConfigurationException("tandem.listener.max-interval", "tandem.listener.max-interval is "
					+ DurationText.of(sizing.maxInterval()) + " but must be below tandem.transaction.timeout ("
					+ DurationText.of(manager.transactionTimeout()) + "): the brokers abort a transaction left open that long.",
					"Set a shorter tandem.listener.max-interval (" + DurationText.of(TransactionSizing.DEFAULT.maxInterval())
							+ " by default) or a longer tandem.transaction.timeout.");
		}
		return new ListenerPipelines(manager, depth, listener.getBackOff(), (cluster) -> maxPollInterval(clusters, cluster),
				sizing);
	}

	/** The cluster's consumer {@code max.poll.interval.ms}, or Kafka's default where unset or not a number. */
	static Duration maxPollInterval(TandemClusters clusters, String cluster) {
		try {
			Object value = clusters.consumerConfig(cluster).get(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG);
			return (value != null) ? Duration.ofMillis(Long.parseLong(value.toString().trim()))
					: DeliveryBudget.KAFKA_DEFAULT_MAX_POLL_INTERVAL;
		}
		catch (RuntimeException ex) {
			return DeliveryBudget.KAFKA_DEFAULT_MAX_POLL_INTERVAL;
		}
	}

	@Bean
	@ConditionalOnMissingBean
	FailedRecordPolicy tandemFailedRecordPolicy(TandemProperties properties, TandemClusters clusters) {
		TandemProperties.Listener listener = properties.getListener();
		if (listener.getAttempts() < 1) {
			throw new TandemConfigurationException("tandem.listener.attempts", "tandem.listener.attempts is "
					+ listener.getAttempts() + "; a failing record must be processed at least once.",
					"Set tandem.listener.attempts to 1 or more (" + FailedRecordPolicy.DEFAULT.attempts() + " by default).");
		}
		if (listener.getBackOff() == null || listener.getBackOff().isNegative()) {
			throw new TandemConfigurationException("tandem.listener.back-off", "tandem.listener.back-off is "
					+ DurationText.of(listener.getBackOff()) + "; it must not be negative.", "Set tandem.listener.back-off to 0 or more, such as 1s.");
		}
		String cluster = listener.getDeadLetter().getCluster();
		if (cluster != null && !cluster.isBlank() && !clusters.names().contains(cluster)) {
			throw new TandemConfigurationException("tandem.listener.dead-letter.cluster", "tandem.listener.dead-letter.cluster '"
					+ cluster + "' is not a configured cluster; configured clusters: " + clusters.names() + ".",
					"Use one of " + clusters.names() + ", or leave it unset to dead-letter on each listener's own cluster.");
		}
		String suffix = listener.getDeadLetter().getTopicSuffix();
		if (suffix == null || !suffix.matches("[a-zA-Z0-9._-]{1,200}")) {
			throw new TandemConfigurationException("tandem.listener.dead-letter.topic-suffix", "'" + suffix
					+ "' is not a valid topic name suffix.", "Use letters, digits, '.', '_' and '-', such as "
							+ FailedRecordPolicy.DEFAULT.deadLetterSuffix() + " (the default).");
		}
		return new FailedRecordPolicy(listener.getAttempts(), listener.getBackOff(), listener.getFailedRecord(),
				(cluster != null && !cluster.isBlank()) ? cluster : null, suffix);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static Advisor crossClusterTransactionAdvisor(ObjectProvider<CrossClusterTransactionTemplate> template,
			ObjectProvider<FailedRecordPolicy> failedRecords, ObjectProvider<TandemTransactionObserver> observer,
			ObjectProvider<ListenerPipelines> pipelines, org.springframework.beans.factory.BeanFactory beanFactory) {
		ComposablePointcut pointcut = new ComposablePointcut(
				new AnnotationMatchingPointcut(CrossClusterTransactional.class, true))
			.union(AnnotationMatchingPointcut.forMethodAnnotation(CrossClusterTransactional.class));
		DefaultPointcutAdvisor advisor = new DefaultPointcutAdvisor(pointcut,
				new LazyInterceptor(template, failedRecords, observer, pipelines, beanFactory));
		advisor.setOrder(org.springframework.core.Ordered.LOWEST_PRECEDENCE - 100);
		return advisor;
	}

	/**
	 * Resolves the template on first call, so the advisor (an infrastructure bean) does not force
	 * early creation of the manager.
	 */
	static final class LazyInterceptor implements org.aopalliance.intercept.MethodInterceptor {

		private final ObjectProvider<CrossClusterTransactionTemplate> template;

		private final ObjectProvider<FailedRecordPolicy> failedRecords;

		private final ObjectProvider<TandemTransactionObserver> observer;

		private final ObjectProvider<ListenerPipelines> pipelines;

		private final org.springframework.beans.factory.BeanFactory beanFactory;

		private volatile CrossClusterTransactionInterceptor delegate;

		LazyInterceptor(ObjectProvider<CrossClusterTransactionTemplate> template,
				ObjectProvider<FailedRecordPolicy> failedRecords, ObjectProvider<TandemTransactionObserver> observer,
				ObjectProvider<ListenerPipelines> pipelines, org.springframework.beans.factory.BeanFactory beanFactory) {
			this.template = template;
			this.failedRecords = failedRecords;
			this.observer = observer;
			this.pipelines = pipelines;
			this.beanFactory = beanFactory;
		}

		@Override
		public Object invoke(org.aopalliance.intercept.MethodInvocation invocation) throws Throwable {
			CrossClusterTransactionInterceptor interceptor = this.delegate;
			if (interceptor == null) {
				FailedRecordPolicy policy = this.failedRecords.getIfAvailable(() -> FailedRecordPolicy.DEFAULT);
				DeadLetterPublisher deadLetters = (policy.action() == TandemProperties.Listener.FailedRecordAction.DEAD_LETTER)
						? new DeadLetterPublisher(policy, this::template) : null;
				interceptor = new CrossClusterTransactionInterceptor(this.template.getObject(), policy, deadLetters,
						this.observer.getIfAvailable(() -> TandemTransactionObserver.NONE), this.pipelines.getIfAvailable());
				this.delegate = interceptor;
			}
			return interceptor.invoke(invocation);
		}

		@SuppressWarnings("unchecked")
		private ClusterTransactionalTemplate<Object, Object> template(String cluster) {
			return this.beanFactory.getBean(cluster + ClusterTransactionalTemplateRegistrar.SUFFIX,
					ClusterTransactionalTemplate.class);
		}

	}

	/**
	 * Makes sure an auto-proxy creator exists (Spring Boot registers one only with AOP support
	 * enabled); infrastructure advisors are applied by it.
	 */
	static final class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		}

	}

}
