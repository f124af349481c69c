package dev.tandem.autoconfigure.transaction;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.MockConsumer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How many records of a delivery a slow listener gets (pure unit test; Kafka's own
 * {@link MockConsumer} only as the consumers the caps are kept for).
 */
class DeliveryBudgetTests {

	private final DeliveryBudget budget = new DeliveryBudget((cluster) -> Duration.ofSeconds(6));

	private final MockConsumer<String, String> consumer = new MockConsumer<>("earliest");

	@Test
	void aDeliveryWithinHalfTheIntervalKeepsEveryRecord() {
		this.budget.processed("east", this.consumer, 5000, TimeUnit.SECONDS.toNanos(3), true);
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(5000);
	}

	@Test
	void aDeliveryOverHalfTheIntervalCapsTheNextToAQuarterOfItAtTheMeasuredPace() {
		this.budget.processed("east", this.consumer, 5000, TimeUnit.SECONDS.toNanos(10), true);
		// 1.5 s (a quarter of 6 s) at 2 ms per record
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(750);
		assertThat(this.budget.limit(this.consumer, 300)).isEqualTo(300);
		assertThat(this.budget.limit(new MockConsumer<>("earliest"), 5000))
			.as("another consumer").isEqualTo(5000);
	}

	@Test
	void theCapGrowsTowardAQuarterOfTheIntervalAfterFastCappedDeliveriesAndShrinksAgainAfterASlowOne() {
		this.budget.processed("east", this.consumer, 5000, TimeUnit.SECONDS.toNanos(10), true);
		// 750 in 0.5 s: the pace allows 2,250 in 1.5 s, but at most twice the cap
		this.budget.processed("east", this.consumer, 750, TimeUnit.MILLISECONDS.toNanos(500), true);
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(1500);
		this.budget.processed("east", this.consumer, 1000, TimeUnit.MILLISECONDS.toNanos(100), true);
		assertThat(this.budget.limit(this.consumer, 5000)).as("a delivery below the cap says nothing of it")
			.isEqualTo(1500);
		// 1500 in 1.2 s: 1,875 take 1.5 s
		this.budget.processed("east", this.consumer, 1500, TimeUnit.MILLISECONDS.toNanos(1200), true);
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(1875);
		// 1875 in 1.45 s: within 10 % of the target, no change
		this.budget.processed("east", this.consumer, 1875, TimeUnit.MILLISECONDS.toNanos(1450), true);
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(1875);
		// slower per record now (4 s, proportional to the first measure would be 3.75 s)
		this.budget.processed("east", this.consumer, 1875, TimeUnit.SECONDS.toNanos(4), true);
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(703);
	}

	@Test
	void aListenerWhoseTimeIsPerCallNotPerRecordIsLeftUncapped() {
		this.budget.processed("east", this.consumer, 5000, TimeUnit.MILLISECONDS.toNanos(3500), true);
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(2142);
		// 2,142 records took as long as 5,000: fewer records do not help
		this.budget.processed("east", this.consumer, 2142, TimeUnit.MILLISECONDS.toNanos(3500), true);
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(5000);
		this.budget.processed("east", this.consumer, 5000, TimeUnit.MILLISECONDS.toNanos(3500), true);
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(5000);
	}

	@Test
	void aListenerWhoseRecordsCannotBeCutIsNeverCapped() {
		this.budget.processed("east", this.consumer, 5000, TimeUnit.SECONDS.toNanos(10), false);
		assertThat(this.budget.limit(this.consumer, 5000)).isEqualTo(5000);
	}

}
