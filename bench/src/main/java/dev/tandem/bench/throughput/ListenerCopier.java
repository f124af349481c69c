package dev.tandem.bench.throughput;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.annotation.EnableKafka;
import org.springframework.kafka.annotation.KafkaListener;

import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.transaction.CrossClusterTransactional;

/**
 * Contender (e), the starter's path as an app uses it: a Spring Boot application context in this
 * JVM (no web server) on {@code tandem-spring-boot-starter}, configured only with {@code tandem.*}
 * properties, whose batch {@code @KafkaListener} on east is {@code @CrossClusterTransactional}
 * and sends every record through {@code westTandemTemplate}; the starter commits the listener's
 * offsets on east in the same cross-cluster transaction. Each round starts a fresh context with
 * its own embedded coordinator directory, group and instance id; start-up is not measured (the
 * copy's clock starts at the first listener call).
 *
 * @since 0.1.0
 */
final class ListenerCopier implements Copier {

	private final Copier.Route route;

	private final ClientSettings settings;

	private final Map<String, String> springProperties;

	private final Map<String, String> bootstrapServers;

	private final Path dataDir;

	private @Nullable ConfigurableApplicationContext context;

	ListenerCopier(Copier.Route route, ClientSettings settings, Map<String, String> springProperties,
			Map<String, String> bootstrapServers, Path dataDir) {
		this.route = route;
		this.settings = settings;
		this.springProperties = springProperties;
		this.bootstrapServers = bootstrapServers;
		this.dataDir = dataDir;
	}

	@Override
	public void start(CopyProbe probe) {
		List<String> properties = new ArrayList<>();
		this.bootstrapServers.forEach((cluster, servers) -> {
			properties.add("tandem.clusters." + cluster + ".bootstrap-servers=" + servers);
			this.settings.settings().forEach((key, value) -> {
				if (ProducerConfig.configNames().contains(key)) {
					properties.add("tandem.clusters." + cluster + ".producer." + key + "=" + value);
				}
			});
		});
		properties.add("tandem.clusters." + TandemCopier.SOURCE + ".consumer.auto.offset.reset=earliest");
		this.settings.settings().forEach((key, value) -> {
			if (ConsumerConfig.configNames().contains(key)) {
				properties.add("tandem.clusters." + TandemCopier.SOURCE + ".consumer." + key + "=" + value);
			}
		});
		properties.add("tandem.transaction.id-prefix=tbench-listener");
		properties.add("tandem.transaction.instance-id=" + this.route.groupId());
		properties.add("tandem.coordinator.data-dir=" + this.dataDir);
		properties.add("spring.kafka.bootstrap-servers=" + this.bootstrapServers.get(TandemCopier.SOURCE));
		properties.add("spring.main.banner-mode=off");
		properties.add("bench.topics=" + String.join(",", this.route.sourceTopics()));
		properties.add("bench.group=" + this.route.groupId());
		properties.add("bench.target-topic=" + this.route.targetTopic());
		this.springProperties.forEach((key, value) -> properties.add(key + "=" + value));
		this.context = new SpringApplicationBuilder(ListenerApp.class).web(WebApplicationType.NONE)
			.registerShutdownHook(false)
			.initializers((context) -> context.getBeanFactory().registerSingleton("throughputProbe", probe))
			.properties(properties.toArray(String[]::new))
			.run();
	}

	@Override
	public void close() {
		if (this.context != null) {
			this.context.close();
		}
	}

	/** The app: auto-configuration (the starter's), Spring Kafka listeners, the copying listener. */
	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableKafka
	@Import(CopyingListener.class)
	static class ListenerApp {

	}

	/** Copies each polled batch from east to west in one cross-cluster transaction. */
	static class CopyingListener {

		private final ClusterTransactionalTemplate<String, String> west;

		private final CopyProbe probe;

		private final String targetTopic;

		CopyingListener(@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west,
				@Qualifier("throughputProbe") CopyProbe probe, @Value("${bench.target-topic}") String targetTopic) {
			this.west = west;
			this.probe = probe;
			this.targetTopic = targetTopic;
		}

		@KafkaListener(id = "throughput-bench", topics = "#{'${bench.topics}'.split(',')}", groupId = "${bench.group}",
				batch = "true", containerFactory = "eastKafkaListenerContainerFactory")
		@CrossClusterTransactional
		public void copy(List<ConsumerRecord<String, String>> records) {
			this.probe.polled();
			for (ConsumerRecord<String, String> record : records) {
				this.west.send(new ProducerRecord<>(this.targetTopic, record.partition(), record.timestamp(),
						record.key(), record.value()));
			}
			this.probe.completed();
		}

	}

}
