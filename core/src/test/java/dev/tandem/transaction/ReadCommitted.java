package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads every record of a topic with {@code read_committed}, up to the last stable offset.
 */
final class ReadCommitted {

	private ReadCommitted() {
	}

	static List<String> values(String bootstrapServers, String topic) {
		Map<String, Object> config = new HashMap<>();
		config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(),
				new StringDeserializer())) {
			List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(10)).stream()
				.map((PartitionInfo info) -> new TopicPartition(topic, info.partition()))
				.collect(Collectors.toList());
			consumer.assign(partitions);
			consumer.seekToBeginning(partitions);
			Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(10));
			List<String> values = new ArrayList<>();
			long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (partitions.stream().anyMatch((tp) -> consumer.position(tp) < end.get(tp))) {
				if (System.nanoTime() > deadline) {
					throw new AssertionError("Could not read " + topic + " to its last stable offset " + end);
				}
				for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
					values.add(record.value());
				}
			}
			return values;
		}
	}

}
