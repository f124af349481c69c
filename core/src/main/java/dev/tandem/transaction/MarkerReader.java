package dev.tandem.transaction;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import dev.tandem.transaction.Decision.ParticipantRecord;

/**
 * Tells whether a participant committed by one {@code read_committed} fetch at its marker
 * record's offset: the record comes back (committed), is skipped (aborted), or the last stable
 * offset has not passed it yet (still open). No topic scan.
 *
 * @since 0.1.0
 */
public final class MarkerReader {

	private MarkerReader() {
	}

	/**
	 * Outcome of one participant as its marker shows it.
	 *
	 * @since 0.1.0
	 */
	public enum MarkerOutcome {

		/** The marker is visible to {@code read_committed}: the participant committed. */
		COMMITTED,

		/** The marker was aborted: the participant's transaction is aborted. */
		ABORTED,

		/** The last stable offset has not passed the marker: the transaction is still open. */
		OPEN

	}

	/**
	 * Reads the outcome of one participant.
	 * @param participant the participant, with its marker's topic, partition and offset
	 * @param clientConfig client configuration of its cluster (bootstrap servers, security)
	 * @param timeout how long to try
	 * @return the outcome; {@link MarkerOutcome#OPEN} also when the timeout passed undecided
	 * @throws org.apache.kafka.common.KafkaException if the cluster cannot be read
	 */
	public static MarkerOutcome read(ParticipantRecord participant, Map<String, Object> clientConfig,
			Duration timeout) {
		Map<String, Object> config = new HashMap<>(clientConfig);
		ClientConfigs.retain(config, ConsumerConfig.configNames());
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		config.remove(ConsumerConfig.GROUP_ID_CONFIG);
		config.remove(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG);
		TopicPartition partition = new TopicPartition(participant.markerTopic(), participant.markerPartition());
		long offset = participant.markerOffset();
		long deadline = System.nanoTime() + timeout.toNanos();
		try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(),
				new ByteArrayDeserializer())) {
			consumer.assign(List.of(partition));
			Long lastStableOffset = consumer.endOffsets(List.of(partition), timeout).get(partition);
			if (lastStableOffset == null || lastStableOffset <= offset) {
				return MarkerOutcome.OPEN;
			}
			consumer.seek(partition, offset);
			while (System.nanoTime() < deadline) {
				for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
					return (record.offset() == offset) ? MarkerOutcome.COMMITTED : MarkerOutcome.ABORTED;
				}
				if (consumer.position(partition, timeout) > offset) {
					return MarkerOutcome.ABORTED;
				}
			}
			return MarkerOutcome.OPEN;
		}
	}

}
