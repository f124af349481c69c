package dev.tandem.autoconfigure.kafka;

import java.time.Duration;
import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.core.KafkaTemplate;

import dev.tandem.autoconfigure.TandemClusters;
import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.text.DurationText;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.autoconfigure.transaction.FailedRecordPolicy;
import dev.tandem.autoconfigure.transaction.TandemTransactionAutoConfiguration;
import dev.tandem.transaction.CrossClusterTransactionManager;

/**
 * Spring Kafka beans per configured cluster (see {@link TandemKafkaBeansRegistrar}); needs
 * spring-kafka on the class path. With cross-cluster transactions, a
 * {@link ListenerContainerMonitor} watches Tandem's listener containers for failed records and
 * stalls ({@code tandem.listener.stall-threshold}), and {@link DeadLetterTopics} checks the
 * dead-letter topics before the containers start.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = TandemTransactionAutoConfiguration.class,
		afterName = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration")
@ConditionalOnClass(KafkaTemplate.class)
@Import(TandemKafkaBeansRegistrar.class)
public class TandemKafkaAutoConfiguration {

	/** Longest wait of a start-up dead-letter topic check on one cluster (the commit timeout if shorter). */
	static final Duration DEAD_LETTER_CHECK_TIMEOUT = Duration.ofSeconds(10);

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(CrossClusterTransactionManager.class)
	ListenerContainerMonitor tandemListenerContainerMonitor(TandemClusters clusters, TandemProperties properties,
			ObjectProvider<KafkaListenerEndpointRegistry> registry) {
		Duration threshold = properties.getListener().getStallThreshold();
		if (threshold == null || threshold.isNegative()) {
			throw new TandemConfigurationException("tandem.listener.stall-threshold", "tandem.listener.stall-threshold is "
					+ DurationText.of(threshold) + "; it must not be negative.",
					"Set tandem.listener.stall-threshold to a duration such as 2m, or 0 to turn the stall check off.");
		}
		return new ListenerContainerMonitor(() -> {
			KafkaListenerEndpointRegistry endpoints = registry.getIfAvailable();
			return (endpoints != null) ? endpoints.getListenerContainers() : List.of();
		}, clusters::adminConfig, threshold);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(CrossClusterTransactionManager.class)
	DeadLetterTopics tandemDeadLetterTopics(TandemClusters clusters, TandemProperties properties,
			ObjectProvider<FailedRecordPolicy> policy, ObjectProvider<KafkaListenerEndpointRegistry> registry) {
		Duration commitTimeout = properties.getTransaction().getCommitTimeout();
		Duration timeout = (commitTimeout.compareTo(DEAD_LETTER_CHECK_TIMEOUT) < 0) ? commitTimeout
				: DEAD_LETTER_CHECK_TIMEOUT;
		return new DeadLetterTopics(() -> {
			KafkaListenerEndpointRegistry endpoints = registry.getIfAvailable();
			return (endpoints != null) ? endpoints.getListenerContainers() : List.of();
		}, clusters::adminConfig, policy.getIfAvailable(() -> FailedRecordPolicy.DEFAULT),
				properties.getListener().getDeadLetter().isCreateTopics(), timeout);
	}

}
