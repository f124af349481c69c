package dev.tandem.autoconfigure.transaction;

import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.function.Function;

import org.apache.kafka.clients.consumer.Consumer;
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
 * with the next poll. Nothing is skipped: the records past the cap were neither processed
 * nor committed. A capped delivery that took under a quarter of the interval raises the cap
 * toward that quarter at the pace it measured (at most doubling). If half the records or fewer
 * took about as long (at least 80 %: a listener whose time is per call, not per record), capping
 * cannot help: the consumer is left uncapped, with a WARN. A listener whose records Tandem cannot cut
 * (a {@code Message<List<..>>} argument, or a batch a record filter shortened) is never capped.
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

	private final Map<Consumer<?, ?>, Cap> caps = Collections.synchronizedMap(new WeakHashMap<>());

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
		Cap cap = this.caps.get(consumer);
		return (cap != null) ? Math.min(size, cap.records) : size;
	}

	/**
	 * A delivery was processed.
	 * @param cluster the listener's cluster
	 * @param consumer its consumer
	 * @param records the records the listener got
	 * @param took the time from the delivery to the listener's return, ns
	 * @param cuttable whether the listener could be given fewer records (see
	 *     {@link #limit(Consumer, int)}); if not, a delivery over half the interval is only reported
	 */
	void processed(String cluster, Consumer<?, ?> consumer, int records, long took, boolean cuttable) {
		if (records < 1) {
			return;
		}
		long interval = intervalNanos(cluster);
		if (!cuttable) {
			if (took > interval / 2 && this.caps.putIfAbsent(consumer, Cap.FIXED_COST) == null) {
				logger.warn("A listener delivery of {} record(s) on cluster '{}' took {} ms, more than half of the consumer's "
						+ "max.poll.interval.ms ({} ms), and Tandem cannot give this listener fewer records (it takes a "
						+ "Message<List<..>> or a batch a record filter shortened). Lower "
						+ "tandem.clusters.{}.consumer.max.poll.records (Tandem's default is 5000) or raise "
						+ "tandem.clusters.{}.consumer.max.poll.interval.ms.", records, cluster, took / 1_000_000,
						interval / 1_000_000, cluster, cluster);
			}
			return;
		}
		Cap cap = this.caps.get(consumer);
		if (cap != null && cap.fixedCost) {
			return;
		}
		if (took > interval / 2) {
			if (cap != null && 2L * records <= cap.measuredRecords && took >= 0.8 * cap.measuredTook) {
				// half the records or fewer took about as long: the time is per call, not per record
				this.caps.put(consumer, Cap.FIXED_COST);
				logger.warn("A listener delivery of {} record(s) on cluster '{}' took {} ms, and one of {} took {} ms: its "
						+ "time does not fall with fewer records, so Tandem no longer caps this consumer's deliveries. "
						+ "If a delivery can take longer than max.poll.interval.ms ({} ms), raise "
						+ "tandem.clusters.{}.consumer.max.poll.interval.ms.", records, cluster, took / 1_000_000,
						cap.measuredRecords, cap.measuredTook / 1_000_000, interval / 1_000_000, cluster);
				return;
			}
			int lower = (int) Math.max(1, Math.min(records - 1L, (long) (records * ((interval / 4.0) / took))));
			if (cap == null || lower < cap.records) {
				this.caps.put(consumer, new Cap(lower, records, took, false));
				logger.warn("A listener delivery of {} record(s) on cluster '{}' took {} ms, more than half of the consumer's "
						+ "max.poll.interval.ms ({} ms): past that interval the group removes the consumer and the "
						+ "delivery's transaction cannot commit. Tandem now gives this listener at most {} record(s) of a "
						+ "delivery and delivers the rest with the next poll. To avoid the extra polls, lower "
						+ "tandem.clusters.{}.consumer.max.poll.records (Tandem's default is 5000) or raise "
						+ "tandem.clusters.{}.consumer.max.poll.interval.ms.", records, cluster, took / 1_000_000,
						interval / 1_000_000, lower, cluster, cluster);
			}
		}
		else if (cap != null && records == cap.records && took < interval / 4) {
			// toward a quarter of the interval at the pace just measured, at most doubling
			long higher = (long) Math.min(2.0 * records, records * ((interval / 4.0) / Math.max(1, took)));
			if (higher >= records * 1.1) {
				int next = (int) Math.min(Integer.MAX_VALUE, higher);
				this.caps.put(consumer, new Cap(next, records, took, false));
				logger.info("Listener deliveries of {} record(s) on cluster '{}' take {} ms; at most {} record(s) of a "
						+ "delivery now", records, cluster, took / 1_000_000, next);
			}
		}
	}

	/**
	 * A consumer's cap, and the delivery it was computed from.
	 * @param records the most records a delivery gives the listener
	 * @param measuredRecords records of the delivery that set it
	 * @param measuredTook that delivery's time, ns
	 * @param fixedCost whether capping was found not to help (the listener's time does not depend
	 *     on its records, or its records cannot be cut): never capped
	 */
	private record Cap(int records, int measuredRecords, long measuredTook, boolean fixedCost) {

		static final Cap FIXED_COST = new Cap(Integer.MAX_VALUE, 0, 0, true);

	}

	private long intervalNanos(String cluster) {
		Duration interval = this.maxPollInterval.apply(cluster);
		return ((interval != null && !interval.isNegative() && !interval.isZero()) ? interval
				: KAFKA_DEFAULT_MAX_POLL_INTERVAL).toNanos();
	}

}
