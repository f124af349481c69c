package dev.tandem.autoconfigure.transaction;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The offsets a listener's transaction commits for its records, and where its consumer is sought
 * back (pure unit test; Kafka's own {@link MockConsumer} only as the consumer sought).
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

	@Test
	void eachPartitionGoesBackToItsLowestRecordInTheOrderPartitionsFirstAppear() {
		List<ConsumerRecord<String, String>> records = List.of(record("a", 1, 9), record("a", 1, 10), record("a", 0, 5),
				record("b", 1, 2), record("a", 0, 4), record("a", 1, 3), record("b", 1, 7), record("a", 0, 8));
		Map<TopicPartition, Long> first = ListenerInvocation.firstOffsets(records);
		assertThat(first).containsExactly(Map.entry(new TopicPartition("a", 1), 3L),
				Map.entry(new TopicPartition("a", 0), 4L), Map.entry(new TopicPartition("b", 1), 2L));
		assertThat(ListenerInvocation.firstOffsets(List.of())).isEmpty();
	}

	@Test
	void theRecordsPastTheLimitAreSoughtBackPerPartitionToTheFirstOfThem() {
		MockConsumer<String, String> consumer = new MockConsumer<>("earliest");
		TopicPartition p0 = new TopicPartition("t", 0);
		TopicPartition p1 = new TopicPartition("t", 1);
		consumer.assign(Set.of(p0, p1));
		consumer.updateBeginningOffsets(Map.of(p0, 0L, p1, 0L));
		consumer.seek(p0, 13);
		consumer.seek(p1, 22);
		List<ConsumerRecord<?, ?>> delivery = List.of(record("t", 0, 10), record("t", 0, 11), record("t", 0, 12),
				record("t", 1, 20), record("t", 1, 21));
		ListenerInvocation.seek(consumer, ListenerInvocation.firstOffsets(delivery.subList(2, delivery.size())));
		assertThat(consumer.position(p0)).isEqualTo(12);
		assertThat(consumer.position(p1)).isEqualTo(20);
	}

	private static ConsumerRecord<String, String> record(String topic, int partition, long offset) {
		return new ConsumerRecord<>(topic, partition, offset, "k", "v");
	}

}
