package dev.tandem.autoconfigure.kafka;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.boot.kafka.autoconfigure.SslBundleSslEngineFactory;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.util.StringUtils;

import dev.tandem.autoconfigure.TandemClientDefaults;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;

/**
 * {@code spring.kafka.*} as the base of every cluster under {@code tandem.clusters}: the
 * properties Spring Boot builds for its own clients ({@link KafkaProperties#buildProducerProperties()}
 * and its siblings: {@code spring.kafka.properties.*}, security, SSL, JAAS-free client
 * settings and the producer, consumer and admin sections) without {@code bootstrap.servers},
 * plus {@code spring.kafka.ssl.bundle} (or a section's own {@code ssl.bundle}) adapted to Kafka
 * the way Spring Boot does it. Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class SpringKafkaClientDefaults implements TandemClientDefaults {

	private final Map<String, Object> common;

	private final Map<String, Object> producer;

	private final Map<String, Object> consumer;

	private final Map<String, Object> admin;

	/**
	 * Builds the defaults once.
	 * @param properties Spring Boot's bound {@code spring.kafka.*}
	 * @param sslBundles the application's SSL bundles, or null if there are none
	 * @throws TandemConfigurationException if {@code spring.kafka.*} names an SSL bundle that
	 *     does not exist
	 */
	public SpringKafkaClientDefaults(KafkaProperties properties, @Nullable SslBundles sslBundles) {
		String bundle = properties.getSsl().getBundle();
		Map<String, Object> common = new HashMap<>(properties.getProperties());
		common.putAll(properties.getSsl().buildProperties());
		String protocol = properties.getSecurity().getProtocol();
		if (StringUtils.hasText(protocol)) {
			common.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, protocol);
		}
		this.common = finish(common, bundle, "spring.kafka.ssl.bundle", sslBundles);
		this.producer = finish(properties.buildProducerProperties(),
				either(properties.getProducer().getSsl().getBundle(), bundle), "spring.kafka.producer.ssl.bundle",
				sslBundles);
		this.consumer = finish(properties.buildConsumerProperties(),
				either(properties.getConsumer().getSsl().getBundle(), bundle), "spring.kafka.consumer.ssl.bundle",
				sslBundles);
		this.admin = finish(properties.buildAdminProperties(), either(properties.getAdmin().getSsl().getBundle(), bundle),
				"spring.kafka.admin.ssl.bundle", sslBundles);
	}

	private static @Nullable String either(@Nullable String specific, @Nullable String common) {
		return StringUtils.hasText(specific) ? specific : common;
	}

	private static Map<String, Object> finish(Map<String, Object> built, @Nullable String bundle, String property,
			@Nullable SslBundles sslBundles) {
		Map<String, Object> config = new HashMap<>(built);
		config.remove(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
		config.values().removeIf(java.util.Objects::isNull);
		if (StringUtils.hasText(bundle)) {
			if (sslBundles == null) {
				throw new TandemConfigurationException(property, "spring.kafka.* names SSL bundle '" + bundle
						+ "' but no SSL bundles are configured.", "Define it under spring.ssl.bundle.jks." + bundle
								+ " or spring.ssl.bundle.pem." + bundle + ".");
			}
			SslBundle resolved;
			try {
				resolved = sslBundles.getBundle(bundle);
			}
			catch (org.springframework.boot.ssl.NoSuchSslBundleException ex) {
				throw new TandemConfigurationException(property, "SSL bundle '" + bundle + "' is not defined: "
						+ ex.getMessage(), "Define it under spring.ssl.bundle.jks." + bundle + " or spring.ssl.bundle.pem."
								+ bundle + ", or fix the name.");
			}
			config.put(SslConfigs.SSL_ENGINE_FACTORY_CLASS_CONFIG, SslBundleSslEngineFactory.class.getName());
			config.put(SslBundle.class.getName(), resolved);
		}
		return Map.copyOf(config);
	}

	@Override
	public Map<String, Object> common() {
		return this.common;
	}

	@Override
	public Map<String, Object> producer() {
		return this.producer;
	}

	@Override
	public Map<String, Object> consumer() {
		return this.consumer;
	}

	@Override
	public Map<String, Object> admin() {
		return this.admin;
	}

}
