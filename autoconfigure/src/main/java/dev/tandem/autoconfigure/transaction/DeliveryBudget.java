package dev.tandem.autoconfigure.transaction;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.function.Function;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each batch listener delivery within its consumer's {@code max.poll.interval.ms}. A
 * delivery is processed between two polls; if it takes longer than that interval, the group
 * coordinator removes the consumer, the delivery's transaction cannot commit its offsets (Kafka's
 * {@code CommitFailedException}, "not aware of this member"), aborts, and the same records come
 * again and take as long again: a listener that never progresses. So each delivery is timed, and
 * once one took more than half the interval, the consumer's deliveries are capped to the number
 * of records that, at the measured time per record, take a quarter of it: the listener gets the
 * first records of each delivery, the others' partitions are sought back to them, and they come
 * with the next poll. The cap doubles again after each capped delivery that took less than an
 * eighth of the interval. Nothing is skipped: the records past the cap were neither processed
 * nor committed.
 * <p>
 * Thread-safety: thread-safe; a consumer's cap is used only on its own thread.
 *
 * @since 0.1.0
 */
final class DeliveryBudget {

	private static final Logger logger = LoggerFactory.getLogger(DeliveryBudget.class);

	/** Kafka's default {@code max.poll.interval.ms}. */
	static final Duration KAFKA_DEFAULT_MAX_POLL_INTERVAL = Duration.ofMinutes(5);

	private final Function<String, Duration> maxPollInterval;

	private final Map<Consumer<?, ?>, Integer> caps = Collections.synchronizedMap(new WeakHashMap<>());

	/**
	 * Creates the budget.
	 * @param maxPollInterval the {@code max.poll.interval.ms} of a cluster's listener consumers
	 */
	DeliveryBudget(Function<String, Duration> maxPollInterval) {
		this.maxPollInterval = maxPollInterval;
	}

	/**
	 * How many of a delivery's records the listener gets now.
	 * @param consumer the delivery's consumer
	 * @param size the records delivered
	 * @return {@code size}, or less for a consumer whose deliveries took too long
	 */
	int limit(Consumer<?, ?> consumer, int size) {
		Integer cap = this.caps.get(consumer);
		return (cap != null) ? Math.min(size, cap) : size;
	}

	/**
	 * Seeks each partition of the records from {@code from} on back to its first of them, so that
	 * the next poll delivers them again.
	 * @param consumer the delivery's consumer, on its own thread
	 * @param records the delivery
	 * @param from the first record not processed
	 */
	static void seekBack(Consumer<?, ?> consumer, List<ConsumerRecord<?, ?>> records, int from) {
		Map<TopicPartition, Long> first = new LinkedHashMap<>();
		for (ConsumerRecord<?, ?> record : records.subList(from, records.size())) {
			first.merge(new TopicPartition(record.topic(), record.partition()), record.offset(), Math::min);
		}
		Set<TopicPartition> assigned = consumer.assignment();
		first.forEach((partition, offset) -> {
			if (assigned.contains(partition)) {
				consumer.seek(partition, offset);
			}
		});
	}

	/**
	 * A delivery was processed.
	 * @param cluster the listener's cluster
	 * @param consumer its consumer
	 * @param records the records the listener got
	 * @param took the time from the delivery to the listener's return, ns
	 */
	void processed(String cluster, Consumer<?, ?> consumer, int records, long took) {
		if (records < 1) {
			return;
		}
		long interval = intervalNanos(cluster);
		Integer cap = this.caps.get(consumer);
		if (took > interval / 2) {
			int lower = (int) Math.max(1, Math.min(records - 1L, (long) (records * ((interval / 4.0) / took))));
			if (cap == null || lower < cap) {
				this.caps.put(consumer, lower);
				logger.warn("A listener delivery of {} record(s) on cluster '{}' took {} ms, more than half of the consumer's "
						+ "max.poll.interval.ms ({} ms): past that interval the group removes the consumer and the "
						+ "delivery's transaction cannot commit. Tandem now gives this listener at most {} record(s) of a "
						+ "delivery and delivers the rest with the next poll. To avoid the extra polls, lower "
						+ "tandem.clusters.{}.consumer.max.poll.records (Tandem's default is 5000) or raise "
						+ "tandem.clusters.{}.consumer.max.poll.interval.ms.", records, cluster, took / 1_000_000,
						interval / 1_000_000, lower, cluster, cluster);
			}
		}
		else if (cap != null && records == cap && took < interval / 8) {
			int higher = (int) Math.min(Integer.MAX_VALUE, 2L * cap);
			this.caps.put(consumer, higher);
			logger.info("Listener deliveries of {} record(s) on cluster '{}' take {} ms; at most {} record(s) of a delivery "
					+ "now", records, cluster, took / 1_000_000, higher);
		}
	}

	private long intervalNanos(String cluster) {
		Duration interval = this.maxPollInterval.apply(cluster);
		return ((interval != null && !interval.isNegative() && !interval.isZero()) ? interval
				: KAFKA_DEFAULT_MAX_POLL_INTERVAL).toNanos();
	}

}
