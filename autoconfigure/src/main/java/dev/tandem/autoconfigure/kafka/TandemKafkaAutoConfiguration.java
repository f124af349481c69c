package dev.tandem.autoconfigure.kafka;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Import;
import org.springframework.kafka.core.KafkaTemplate;

import dev.tandem.autoconfigure.transaction.TandemTransactionAutoConfiguration;

/**
 * Spring Kafka beans per configured cluster (see {@link TandemKafkaBeansRegistrar}); needs
 * spring-kafka on the class path.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = TandemTransactionAutoConfiguration.class,
		afterName = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration")
@ConditionalOnClass(KafkaTemplate.class)
@Import(TandemKafkaBeansRegistrar.class)
public class TandemKafkaAutoConfiguration {

}
