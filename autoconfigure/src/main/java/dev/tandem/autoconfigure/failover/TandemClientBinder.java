package dev.tandem.autoconfigure.failover;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.ProducerFactory;

import dev.tandem.failover.LeaderCacheRegistry;

/**
 * Binds every client created by Tandem's per-cluster Spring Kafka factories
 * ({@code <cluster>KafkaProducerFactory}, {@code <cluster>KafkaConsumerFactory}) to its leader
 * cache, so the cache knows leaders and leader epochs from the client's own metadata.
 *
 * @since 0.1.0
 */
public class TandemClientBinder implements BeanPostProcessor {

	private static final Logger logger = LoggerFactory.getLogger(TandemClientBinder.class);

	private final ObjectProvider<LeaderCacheRegistry> registry;

	/**
	 * Creates the binder.
	 * @param registry the registry, resolved lazily
	 */
	public TandemClientBinder(ObjectProvider<LeaderCacheRegistry> registry) {
		this.registry = registry;
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (bean instanceof DefaultKafkaProducerFactory<?, ?> factory && beanName.endsWith("KafkaProducerFactory")) {
			String cluster = beanName.substring(0, beanName.length() - "KafkaProducerFactory".length());
			factory.addListener(new ProducerFactory.Listener() {
				@Override
				public void producerAdded(String id, Producer producer) {
					bind(cluster, producer, null);
				}
			});
		}
		if (bean instanceof DefaultKafkaConsumerFactory<?, ?> factory && beanName.endsWith("KafkaConsumerFactory")) {
			String cluster = beanName.substring(0, beanName.length() - "KafkaConsumerFactory".length());
			factory.addListener(new ConsumerFactory.Listener() {
				@Override
				public void consumerAdded(String id, Consumer consumer) {
					bind(cluster, null, consumer);
				}
			});
		}
		return bean;
	}

	private void bind(String cluster, Producer<?, ?> producer, Consumer<?, ?> consumer) {
		LeaderCacheRegistry leaders = this.registry.getIfAvailable();
		if (leaders == null) {
			return;
		}
		try {
			if (producer != null) {
				leaders.bind(cluster, producer);
			}
			else {
				leaders.bind(cluster, consumer);
			}
		}
		catch (RuntimeException ex) {
			logger.debug("No leader cache bound for a client of cluster '{}': {}", cluster, ex.getMessage());
		}
	}

}
