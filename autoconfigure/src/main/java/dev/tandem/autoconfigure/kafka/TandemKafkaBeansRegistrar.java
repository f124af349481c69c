package dev.tandem.autoconfigure.kafka;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ContainerProperties.AckMode;
import org.springframework.kafka.listener.CommonDelegatingErrorHandler;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.FixedBackOff;

import dev.tandem.autoconfigure.ClusterBeanRegistrar;
import dev.tandem.autoconfigure.TandemClusters;
import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.autoconfigure.transaction.FailedRecordException;
import dev.tandem.autoconfigure.transaction.ListenerPipelines;
import dev.tandem.transaction.CrossClusterTransactionManager;

/**
 * Registers Spring Kafka beans for each configured cluster {@code <c>}:
 * {@code <c>KafkaProducerFactory}, {@code <c>KafkaTemplate} (plain, non-transactional sends),
 * {@code <c>KafkaConsumerFactory} ({@code read_committed}, no auto-commit) and
 * {@code <c>KafkaListenerContainerFactory}. Spring Boot's factory customizers (client metrics
 * among them), {@code spring.kafka.listener.*} and {@code spring.kafka.template.observation-enabled}
 * apply to them as to Spring Boot's own. With cross-cluster transactions enabled, its
 * containers never commit offsets themselves: a {@code @CrossClusterTransactional} listener
 * commits them on {@code <c>} inside its transaction (a listener that is not annotated commits
 * nothing), and they never skip a record. A user bean of the same name wins.
 *
 * @since 0.1.0
 */
public class TandemKafkaBeansRegistrar extends ClusterBeanRegistrar {

	/** Retries of a failed delivery before the error handler gives up on a record. */
	static final FixedBackOff DEFAULT_BACK_OFF = new FixedBackOff(Duration.ofSeconds(1).toMillis(), 9);

	@Override
	@SuppressWarnings({ "rawtypes", "unchecked" })
	protected void register(String cluster, BeanDefinitionRegistry registry) {
		registerIfMissing(registry, cluster + "KafkaProducerFactory", DefaultKafkaProducerFactory.class, cluster,
				with(TandemClusters.class, (clusters) -> {
					DefaultKafkaProducerFactory<Object, Object> factory = new DefaultKafkaProducerFactory<>(
							producerConfig(clusters, cluster));
					BootKafkaSupport.customize(beanFactory(), factory);
					return factory;
				}));
		registerIfMissing(registry, cluster + "KafkaTemplate", KafkaTemplate.class, cluster, () -> {
			KafkaTemplate<Object, Object> template = new KafkaTemplate<>(
					(DefaultKafkaProducerFactory<Object, Object>) beanFactory().getBean(cluster + "KafkaProducerFactory"));
			BootKafkaSupport.customize(beanFactory(), template);
			return template;
		});
		registerIfMissing(registry, cluster + "KafkaConsumerFactory", DefaultKafkaConsumerFactory.class, cluster,
				with(TandemClusters.class, (clusters) -> {
					DefaultKafkaConsumerFactory<Object, Object> factory = new DefaultKafkaConsumerFactory<>(
							consumerConfig(clusters, cluster));
					BootKafkaSupport.customize(beanFactory(), factory);
					return factory;
				}));
		registerIfMissing(registry, cluster + "KafkaListenerContainerFactory", ConcurrentKafkaListenerContainerFactory.class,
				cluster, () -> listenerContainerFactory(cluster));
	}

	private ConcurrentKafkaListenerContainerFactory<Object, Object> listenerContainerFactory(String cluster) {
		ConcurrentKafkaListenerContainerFactory<Object, Object> factory = new ConcurrentKafkaListenerContainerFactory<>();
		@SuppressWarnings("unchecked")
		DefaultKafkaConsumerFactory<Object, Object> consumerFactory = (DefaultKafkaConsumerFactory<Object, Object>) beanFactory()
			.getBean(cluster + "KafkaConsumerFactory");
		BootKafkaSupport.configure(beanFactory(), factory, consumerFactory);
		factory.setConsumerFactory(consumerFactory);
		CrossClusterTransactionManager manager = beanFactory().getBeanProvider(CrossClusterTransactionManager.class)
			.getIfAvailable();
		if (manager != null) {
			// Offsets are committed by the listener's cross-cluster transaction, never by the container.
			factory.getContainerProperties().setAckMode(AckMode.MANUAL);
			// Nor on partition assignment: a group's first position is committed by its first transaction.
			factory.getContainerProperties()
				.setAssignmentCommitOption(org.springframework.kafka.listener.ContainerProperties.AssignmentCommitOption.NEVER);
			// Nor by a Kafka transaction manager of spring.kafka.producer.transaction-id-prefix: one cluster's.
			factory.getContainerProperties().setKafkaAwareTransactionManager(null);
			factory.getContainerProperties().setTransactionManager(null);
			// A pipelined commit that failed while no record comes is noticed at the idle event (ListenerPipelines).
			if (factory.getContainerProperties().getIdleEventInterval() == null) {
				factory.getContainerProperties().setIdleEventInterval(1000L);
			}
			// Pipelined batch listeners' transactions span deliveries: the pipelines see the consumer's
			// polls and rebalances (close a due transaction when no record comes, close or abort it
			// before partitions go).
			ListenerPipelines pipelines = beanFactory().getBeanProvider(ListenerPipelines.class).getIfAvailable();
			if (pipelines != null) {
				consumerFactory.addPostProcessor(pipelines::hook);
			}
			ListenerContainerMonitor monitor = beanFactory().getBeanProvider(ListenerContainerMonitor.class).getIfAvailable();
			TandemListenerInterceptor interceptor = new TandemListenerInterceptor(cluster, manager, monitor);
			factory.setRecordInterceptor(interceptor);
			factory.setBatchInterceptor(interceptor);
			TandemProperties properties = beanFactory().getBean(TandemProperties.class);
			factory.setCommonErrorHandler(
					neverSkippingErrorHandler(properties.getListener().getBackOff(), cluster, monitor));
		}
		else {
			factory.setCommonErrorHandler(new DefaultErrorHandler(DEFAULT_BACK_OFF));
		}
		return factory;
	}

	/**
	 * The error handler of containers whose offsets Tandem's transactions commit. A record that
	 * keeps failing is settled by the listener's transactions ({@code tandem.listener.*}: a
	 * dead-letter topic, or {@link FailedRecordException} which stops the container); what reaches
	 * this handler otherwise (a transaction that could not commit) is delivered again after the
	 * back-off, without end, and never skipped: skipping would commit its offset outside any
	 * transaction with nothing written. A container stopped by a failed record is reported to the
	 * monitor and logged at ERROR in one line.
	 * @param backOff pause before a delivery is retried
	 * @param cluster the cluster the containers consume from
	 * @param monitor the listener containers' monitor, or null
	 * @return the handler
	 */
	static CommonErrorHandler neverSkippingErrorHandler(Duration backOff, String cluster,
			@Nullable ListenerContainerMonitor monitor) {
		DefaultErrorHandler redeliver = new DefaultErrorHandler((record, ex) -> {
			throw new IllegalStateException("Tandem's listener containers never skip a record", ex);
		}, new FixedBackOff(backOff.toMillis(), FixedBackOff.UNLIMITED_ATTEMPTS));
		redeliver.setClassifications(Map.of(), true);
		CommonDelegatingErrorHandler handler = new CommonDelegatingErrorHandler(redeliver);
		handler.setCauseChainTraversing(true);
		handler.addDelegate(FailedRecordException.class, new FailedRecordStoppingErrorHandler(cluster, monitor));
		return handler;
	}

	/**
	 * {@code max.poll.records} of Tandem's listener consumers unless the cluster's
	 * {@code consumer} section or {@code spring.kafka.consumer.max-poll-records} sets it.
	 */
	static final int DEFAULT_MAX_POLL_RECORDS = 5000;

	static Map<String, Object> producerConfig(TandemClusters clusters, String cluster) {
		Map<String, Object> config = new HashMap<>(clusters.producerConfig(cluster));
		config.putIfAbsent(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
		config.putIfAbsent(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
		return config;
	}

	static Map<String, Object> consumerConfig(TandemClusters clusters, String cluster) {
		Map<String, Object> config = new HashMap<>(clusters.consumerConfig(cluster));
		config.putIfAbsent(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
		config.putIfAbsent(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
		// A new group starts at the beginning: with "latest", records written before its first poll are skipped.
		config.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		// A listener call is one cross-cluster transaction: Kafka's 500 records per poll make each
		// pay a decision and a commit per cluster for few records (docs/benchmarks.md, ThroughputBench).
		config.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, DEFAULT_MAX_POLL_RECORDS);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		return config;
	}

}
