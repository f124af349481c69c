package dev.tandem.autoconfigure.kafka;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.kafka.autoconfigure.ConcurrentKafkaListenerContainerFactoryConfigurer;
import org.springframework.boot.kafka.autoconfigure.DefaultKafkaConsumerFactoryCustomizer;
import org.springframework.boot.kafka.autoconfigure.DefaultKafkaProducerFactoryCustomizer;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.kafka.config.ConcurrentKafkaListenerContainerFactory;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.util.ClassUtils;

/**
 * What Spring Boot's Kafka module contributes to Tandem's per-cluster Spring Kafka beans: its
 * factory customizers (client metrics among them), {@code spring.kafka.listener.*} through its
 * container factory configurer, and {@code spring.kafka.template.observation-enabled}. Used only
 * when that module is on the class path.
 */
final class BootKafkaSupport {

	private static final boolean PRESENT = ClassUtils.isPresent(
			"org.springframework.boot.kafka.autoconfigure.KafkaProperties", BootKafkaSupport.class.getClassLoader());

	private BootKafkaSupport() {
	}

	static void customize(BeanFactory beanFactory, DefaultKafkaProducerFactory<?, ?> factory) {
		if (PRESENT) {
			beanFactory.getBeanProvider(DefaultKafkaProducerFactoryCustomizer.class)
				.orderedStream()
				.forEach((customizer) -> customizer.customize(factory));
		}
	}

	static void customize(BeanFactory beanFactory, DefaultKafkaConsumerFactory<?, ?> factory) {
		if (PRESENT) {
			beanFactory.getBeanProvider(DefaultKafkaConsumerFactoryCustomizer.class)
				.orderedStream()
				.forEach((customizer) -> customizer.customize(factory));
		}
	}

	static void customize(BeanFactory beanFactory, KafkaTemplate<?, ?> template) {
		if (PRESENT) {
			KafkaProperties properties = beanFactory.getBeanProvider(KafkaProperties.class).getIfAvailable();
			if (properties != null) {
				template.setObservationEnabled(properties.getTemplate().isObservationEnabled());
			}
		}
	}

	/**
	 * Applies {@code spring.kafka.listener.*} and the listener beans Spring Boot applies to its
	 * own container factory.
	 * @return whether Spring Boot's configurer was there
	 */
	static boolean configure(BeanFactory beanFactory, ConcurrentKafkaListenerContainerFactory<Object, Object> factory,
			DefaultKafkaConsumerFactory<Object, Object> consumerFactory) {
		if (!PRESENT) {
			return false;
		}
		ConcurrentKafkaListenerContainerFactoryConfigurer configurer = beanFactory
			.getBeanProvider(ConcurrentKafkaListenerContainerFactoryConfigurer.class)
			.getIfAvailable();
		if (configurer == null) {
			return false;
		}
		configurer.configure(factory, consumerFactory);
		return true;
	}

}
