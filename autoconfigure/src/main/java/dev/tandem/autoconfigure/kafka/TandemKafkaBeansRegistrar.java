package dev.tandem.autoconfigure.kafka;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.listener.ContainerProperties.AckMode;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.backoff.FixedBackOff;

import dev.tandem.autoconfigure.ClusterBeanRegistrar;
import dev.tandem.autoconfigure.TandemClusters;
import dev.tandem.transaction.CrossClusterTransactionManager;

/**
 * Registers Spring Kafka beans for each configured cluster {@code <c>}:
 * {@code <c>KafkaProducerFactory}, {@code <c>KafkaTemplate} (plain, non-transactional sends),
 * {@code <c>KafkaConsumerFactory} ({@code read_committed}, no auto-commit) and
 * {@code <c>KafkaListenerContainerFactory}. With cross-cluster transactions enabled, its
 * containers never commit offsets themselves: a {@code @CrossClusterTransactional} listener
 * commits them on {@code <c>} inside its transaction (a listener that is not annotated commits
 * nothing). A user bean of the same name wins.
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
				with(TandemClusters.class, (clusters) -> new DefaultKafkaProducerFactory<>(producerConfig(clusters, cluster))));
		registerIfMissing(registry, cluster + "KafkaTemplate", KafkaTemplate.class, cluster,
				() -> new KafkaTemplate<>((DefaultKafkaProducerFactory<Object, Object>) beanFactory()
					.getBean(cluster + "KafkaProducerFactory")));
		registerIfMissing(registry, cluster + "KafkaConsumerFactory", DefaultKafkaConsumerFactory.class, cluster,
				with(TandemClusters.class, (clusters) -> new DefaultKafkaConsumerFactory<>(consumerConfig(clusters, cluster))));
		registerIfMissing(registry, cluster + "KafkaListenerContainerFactory", ConcurrentKafkaListenerContainerFactory.class,
				cluster, () -> listenerContainerFactory(cluster));
	}

	private ConcurrentKafkaListenerContainerFactory<Object, Object> listenerContainerFactory(String cluster) {
		ConcurrentKafkaListenerContainerFactory<Object, Object> factory = new ConcurrentKafkaListenerContainerFactory<>();
		@SuppressWarnings("unchecked")
		DefaultKafkaConsumerFactory<Object, Object> consumerFactory = (DefaultKafkaConsumerFactory<Object, Object>) beanFactory()
			.getBean(cluster + "KafkaConsumerFactory");
		factory.setConsumerFactory(consumerFactory);
		CrossClusterTransactionManager manager = beanFactory().getBeanProvider(CrossClusterTransactionManager.class)
			.getIfAvailable();
		if (manager != null) {
			// Offsets are committed by the listener's cross-cluster transaction, never by the container.
			factory.getContainerProperties().setAckMode(AckMode.MANUAL);
			// Nor on partition assignment: a group's first position is committed by its first transaction.
			factory.getContainerProperties()
				.setAssignmentCommitOption(org.springframework.kafka.listener.ContainerProperties.AssignmentCommitOption.NEVER);
			TandemListenerInterceptor interceptor = new TandemListenerInterceptor(cluster, manager);
			factory.setRecordInterceptor(interceptor);
			factory.setBatchInterceptor(interceptor);
		}
		factory.setCommonErrorHandler(new DefaultErrorHandler(DEFAULT_BACK_OFF));
		return factory;
	}

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
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		return config;
	}

}
