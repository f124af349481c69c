package dev.tandem.bench.throughput;

import java.util.Collection;
import java.util.Map;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

/**
 * Time totals of transactional producers, from kafka-clients' own {@code producer-metrics}
 * ({@code txn-begin-time-ns-total}, {@code txn-send-offsets-time-ns-total},
 * {@code flush-time-ns-total}, {@code txn-commit-time-ns-total}, {@code txn-abort-time-ns-total}),
 * summed over the producers of one cluster.
 *
 * @param producers how many producers were summed
 * @param beginNanos time in {@code beginTransaction()}
 * @param sendOffsetsNanos time in {@code sendOffsetsToTransaction()}
 * @param flushNanos time in {@code flush()}
 * @param commitNanos time in {@code commitTransaction()}
 * @param abortNanos time in {@code abortTransaction()}
 * @since 0.1.0
 */
record TransactionTimes(int producers, double beginNanos, double sendOffsetsNanos, double flushNanos,
		double commitNanos, double abortNanos) {

	static final TransactionTimes NONE = new TransactionTimes(0, 0, 0, 0, 0, 0);

	/**
	 * Reads and sums the totals of producers; a producer whose metrics cannot be read (closed)
	 * is skipped.
	 * @param producers the producers
	 * @return the totals
	 */
	static TransactionTimes of(Collection<? extends Producer<?, ?>> producers) {
		TransactionTimes sum = NONE;
		for (Producer<?, ?> producer : producers) {
			try {
				sum = sum.plus(of(producer.metrics()));
			}
			catch (RuntimeException ex) {
				// closed producer: nothing to add
			}
		}
		return sum;
	}

	private static TransactionTimes of(Map<MetricName, ? extends Metric> metrics) {
		return new TransactionTimes(1, total(metrics, "txn-begin"), total(metrics, "txn-send-offsets"),
				total(metrics, "flush"), total(metrics, "txn-commit"), total(metrics, "txn-abort"));
	}

	private static double total(Map<MetricName, ? extends Metric> metrics, String name) {
		for (Map.Entry<MetricName, ? extends Metric> entry : metrics.entrySet()) {
			if (entry.getKey().group().equals("producer-metrics")
					&& entry.getKey().name().equals(name + "-time-ns-total")) {
				Object value = entry.getValue().metricValue();
				return (value instanceof Number number) ? number.doubleValue() : 0;
			}
		}
		return 0;
	}

	TransactionTimes plus(TransactionTimes other) {
		return new TransactionTimes(this.producers + other.producers, this.beginNanos + other.beginNanos,
				this.sendOffsetsNanos + other.sendOffsetsNanos, this.flushNanos + other.flushNanos,
				this.commitNanos + other.commitNanos, this.abortNanos + other.abortNanos);
	}

}
