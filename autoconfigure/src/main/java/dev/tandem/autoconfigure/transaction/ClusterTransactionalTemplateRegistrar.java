package dev.tandem.autoconfigure.transaction;

import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.Utils;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;

import dev.tandem.autoconfigure.ClusterBeanRegistrar;
import dev.tandem.autoconfigure.TandemClusters;

/**
 * Registers a {@link ClusterTransactionalTemplate} named {@code <cluster>TandemTemplate} for each
 * configured cluster, with the cluster's configured serializers ({@link StringSerializer} by
 * default).
 *
 * @since 0.1.0
 */
public class ClusterTransactionalTemplateRegistrar extends ClusterBeanRegistrar {

	/** Bean name suffix. */
	public static final String SUFFIX = "TandemTemplate";

	@Override
	@SuppressWarnings({ "rawtypes", "unchecked" })
	protected void register(String cluster, BeanDefinitionRegistry registry) {
		registerIfMissing(registry, cluster + SUFFIX, ClusterTransactionalTemplate.class, cluster,
				with(TandemClusters.class, (clusters) -> {
					Map<String, Object> config = clusters.producerConfig(cluster);
					return new ClusterTransactionalTemplate(cluster,
							serializer(config, ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, true),
							serializer(config, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, false),
							beanFactory().getBeanProvider(TandemTransactionObserver.class)
								.getIfAvailable(() -> TandemTransactionObserver.NONE));
				}));
	}

	static Serializer<?> serializer(Map<String, Object> config, String key, boolean isKey) {
		Object configured = config.get(key);
		Serializer<?> serializer;
		try {
			if (configured instanceof Class<?> type) {
				serializer = (Serializer<?>) Utils.newInstance(type);
			}
			else if (configured instanceof String name && !name.isBlank()) {
				serializer = Utils.newInstance(name.trim(), Serializer.class);
			}
			else {
				serializer = new StringSerializer();
			}
		}
		catch (ClassNotFoundException ex) {
			throw new IllegalArgumentException("Serializer class " + configured + " not found", ex);
		}
		serializer.configure(config, isKey);
		return serializer;
	}

}
