package dev.tandem.failover.internals;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Guards the reflection behind the failover leader cache: if a kafka-clients upgrade moves the
 * producer's or consumer's {@code Metadata} or the methods read on it, these tests fail (the
 * leader cache would otherwise silently lose leader epochs and its "no broker answers" state).
 * No broker needed.
 */
class LeaderSourceTests {

	@Test
	void producerMetadataIsReachableWithoutABroker() {
		Map<String, Object> properties = new HashMap<>();
		properties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "localhost:1");
		try (KafkaProducer<String, String> producer = new KafkaProducer<>(properties, new StringSerializer(),
				new StringSerializer())) {
			LeaderSource source = LeaderSource.forProducer(producer);
			assertThat(source).isInstanceOf(MetadataLeaderSource.class);
			assertThat(source.epochs()).isTrue();
			Object version = source.version();
			assertThat(source.version()).isSameAs(version);
			assertThat(source.leader(version, new TopicPartition("unknown", 0))).isNull();
			assertThat(source.partitions(version, "unknown")).isEmpty();
			// a client that has not reached any broker: no update yet, the bootstrap one pending
			assertThat(source.lastMetadataUpdateMs()).isEqualTo(LeaderSource.LeaderTerm.UNKNOWN);
			assertThat(source.metadataUpdatePending()).isTrue();
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "classic", "consumer" })
	void consumerMetadataIsReachableForBothGroupProtocols(String groupProtocol) {
		Map<String, Object> properties = new HashMap<>();
		properties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "localhost:1");
		properties.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, groupProtocol);
		properties.put(ConsumerConfig.GROUP_ID_CONFIG, "g");
		KafkaConsumer<String, String> consumer = new KafkaConsumer<>(properties, new StringDeserializer(),
				new StringDeserializer());
		try {
			LeaderSource source = LeaderSource.forConsumer(consumer);
			assertThat(source).isInstanceOf(MetadataLeaderSource.class);
			assertThat(source.version()).isNotNull();
			assertThat(source.lastMetadataUpdateMs()).isEqualTo(LeaderSource.LeaderTerm.UNKNOWN);
		}
		finally {
			consumer.close(CloseOptions.timeout(Duration.ZERO));
		}
	}

}
