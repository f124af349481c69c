package dev.tandem.autoconfigure.transaction;

import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The offsets a listener's transaction commits for its records (pure unit test).
 */
class ListenerInvocationTests {

	@Test
	void eachPartitionCommitsTheOffsetAfterItsHighestRecordWhateverTheOrder() {
		List<ConsumerRecord<String, String>> records = List.of(record("a", 0, 5), record("a", 0, 6), record("a", 1, 9),
				record("b", 0, 2), record("a", 0, 4), record("a", 1, 3), record("b", 0, 7), record("a", 0, 8),
				record("a", 0, 7));
		Map<TopicPartition, OffsetAndMetadata> offsets = ListenerInvocation.nextOffsets(records);
		assertThat(offsets).containsOnly(
				Map.entry(new TopicPartition("a", 0), new OffsetAndMetadata(9)),
				Map.entry(new TopicPartition("a", 1), new OffsetAndMetadata(10)),
				Map.entry(new TopicPartition("b", 0), new OffsetAndMetadata(8)));
	}

	@Test
	void aPartitionOfTheSameNumberOnAnotherTopicIsItsOwn() {
		Map<TopicPartition, OffsetAndMetadata> offsets = ListenerInvocation
			.nextOffsets(List.of(record("a", 2, 10), record("b", 2, 1)));
		assertThat(offsets).containsOnly(Map.entry(new TopicPartition("a", 2), new OffsetAndMetadata(11)),
				Map.entry(new TopicPartition("b", 2), new OffsetAndMetadata(2)));
	}

	@Test
	void noRecordsCommitNothing() {
		assertThat(ListenerInvocation.nextOffsets(List.of())).isEmpty();
	}

	private static ConsumerRecord<String, String> record(String topic, int partition, long offset) {
		return new ConsumerRecord<>(topic, partition, offset, "k", "v");
	}

}
