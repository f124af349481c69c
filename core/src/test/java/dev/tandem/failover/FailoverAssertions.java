package dev.tandem.failover;

import java.time.Duration;
import java.util.stream.LongStream;

import org.apache.kafka.common.TopicPartition;

import dev.tandem.test.ReadCommitted;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What every failover test checks once a {@link SteadyProducer} has gone through a leader
 * change: the leader cache followed it, and nothing was lost, doubled or reordered.
 */
final class FailoverAssertions {

	private FailoverAssertions() {
	}

	/**
	 * Wait until the producer has {@code count} acknowledgements, failing at once if a
	 * record failed.
	 */
	static void awaitAcknowledged(SteadyProducer producer, long count, Duration bound) {
		await().atMost(bound).until(() -> producer.acknowledged() >= count || !producer.failures().isEmpty());
		assertThat(producer.failures()).isEmpty();
	}

	/**
	 * The producer's cache shows the new leader with a higher epoch, one more change and a
	 * completed failover no longer than the worst acknowledgement latency, which stayed below
	 * {@code bound}; the registry's listener saw the change and the failover.
	 */
	static void assertFailedOver(SteadyProducer producer, TopicPartition partition, PartitionLeaderDescriptor before,
			int newLeader, RecordingListener events, Duration bound) {
		assertThat(producer.failures()).isEmpty();
		assertThat(producer.maxLatency()).isLessThan(bound);
		PartitionLeaderDescriptor after = producer.cache().partition(partition).orElseThrow();
		assertThat(after.leaderId()).isEqualTo(newLeader);
		assertThat(after.leaderEpoch()).isGreaterThan(before.leaderEpoch());
		assertThat(after.leaderEndpoint()).isNotNull();
		assertThat(after.leaderChanges()).isGreaterThan(before.leaderChanges());
		assertThat(after.lastLeaderChange()).isNotNull();
		assertThat(after.failovers()).isPositive();
		// record timestamps have millisecond precision
		assertThat(after.lastFailoverDuration()).isNotNull().isLessThanOrEqualTo(producer.maxLatency().plusMillis(2));
		assertThat(events.failovers).anySatisfy((event) -> {
			assertThat(event.topic()).isEqualTo(partition.topic());
			assertThat(event.clientId()).isEqualTo(producer.cache().clientId());
			assertThat(event.leaderId()).isEqualTo(newLeader);
		});
		assertThat(events.changes).anySatisfy((event) -> {
			assertThat(event.topic()).isEqualTo(partition.topic());
			assertThat(event.previousLeaderId()).isEqualTo(before.leaderId());
		});
	}

	/**
	 * Every record the producer sent was acknowledged, and a {@code read_committed} read of
	 * the partition's topic returns exactly 0, 1, 2, ... in that order: none lost, none
	 * doubled, none reordered.
	 */
	static void assertEveryAcknowledgedRecordOnceAndInOrder(SteadyProducer producer, String bootstrapServers,
			TopicPartition partition) {
		assertThat(producer.acknowledged()).isEqualTo(producer.sent());
		assertThat(ReadCommitted.values(bootstrapServers, partition.topic()))
			.containsExactlyElementsOf(LongStream.range(0, producer.sent()).mapToObj(Long::toString).toList());
	}

}
