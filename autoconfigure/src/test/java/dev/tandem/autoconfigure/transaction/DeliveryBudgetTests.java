package dev.tandem.autoconfigure.transaction;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How many records of a delivery a slow listener gets (pure unit test; Kafka's own
 * {@link MockConsumer} only as the consumer whose position is sought).
 */
class DeliveryBudgetTests {

	private final DeliveryBudget budget = new DeliveryBudget((cluster) -> Duration.ofSeconds(6));

	private final MockConsumer<String, String> consumer = new MockConsumer<>("earliest");

	@Test
	void aDeliveryWithinHalfTheIntervalKeepsEveryRecord() {
		this.budget.processed("east", this.consumer, 5000, TimeUnit.SECONDS.toNanos(3));
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(5000);
	}

	@Test
	void aDeliveryOverHalfTheIntervalCapsTheNextToAQuarterOfItAtTheMeasuredPace() {
		this.budget.processed("east", this.consumer, 5000, TimeUnit.SECONDS.toNanos(10));
		// 1.5 s (a quarter of 6 s) at 2 ms per record
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(750);
		assertThat(this.budget.limit(this.consumer, 300)).isEqualTo(300);
		assertThat(this.budget.limit(new MockConsumer<>("earliest"), 5000))
			.as("another consumer").isEqualTo(5000);
	}

	@Test
	void theCapDoublesAfterAFastCappedDeliveryAndShrinksAgainAfterASlowOne() {
		this.budget.processed("east", this.consumer, 5000, TimeUnit.SECONDS.toNanos(10));
		this.budget.processed("east", this.consumer, 750, TimeUnit.MILLISECONDS.toNanos(500));
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(1500);
		this.budget.processed("east", this.consumer, 1000, TimeUnit.MILLISECONDS.toNanos(100));
		assertThat(this.budget.limit(this.consumer, 5000)).as("a delivery below the cap says nothing of it")
			.isEqualTo(1500);
		this.budget.processed("east", this.consumer, 1500, TimeUnit.SECONDS.toNanos(4));
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(562);
	}

	@Test
	void theRecordsPastTheLimitAreSoughtBackPerPartitionToTheFirstOfThem() {
		TopicPartition p0 = new TopicPartition("t", 0);
		TopicPartition p1 = new TopicPartition("t", 1);
		this.consumer.assign(Set.of(p0, p1));
		this.consumer.updateBeginningOffsets(Map.of(p0, 0L, p1, 0L));
		this.consumer.seek(p0, 13);
		this.consumer.seek(p1, 22);
		List<ConsumerRecord<?, ?>> delivery = List.of(record(p0, 10), record(p0, 11), record(p0, 12), record(p1, 20),
				record(p1, 21));
		DeliveryBudget.seekBack(this.consumer, delivery, 2);
		assertThat(this.consumer.position(p0)).isEqualTo(12);
		assertThat(this.consumer.position(p1)).isEqualTo(20);
	}

	private static ConsumerRecord<String, String> record(TopicPartition partition, long offset) {
		return new ConsumerRecord<>(partition.topic(), partition.partition(), offset, "k", "v");
	}

}
