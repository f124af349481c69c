package dev.tandem.transaction;

import java.time.Duration;
import java.util.Objects;

/**
 * When a pipelined transaction that spans polls is closed and handed to its
 * {@link TransactionPipeline}: once it holds {@code maxRecords} records and the previous
 * transaction has finished preparing (its offset commit, a round trip to the source), or once it
 * holds {@code growth × maxRecords} records, or once it is {@code maxInterval} old. While the
 * previous transaction still prepares, a transaction closed now would only wait behind it, so it
 * keeps taking records instead: transactions grow with the round trip, and the rate follows the
 * poll loop rather than the round trip (issue 25). It stops growing once the sends it holds in
 * memory behind the previous transaction's reach {@link #MAX_HELD_BYTES_TO_GROW}
 * ({@link #due(long, long, TransactionPipeline)}). The one copy of this rule, used by
 * {@link CrossClusterProcessor} and the Spring listener pipelines.
 * <p>
 * Immutable and thread-safe.
 *
 * @param maxRecords records at which a transaction closes unless the previous one still prepares,
 *     1 or more
 * @param growth how many times {@code maxRecords} a transaction may hold while the previous one
 *     prepares, 1 (no growth) to 1,000
 * @param maxInterval age at which a transaction closes whatever its size, positive
 * @since 0.1.0
 */
public record TransactionSizing(int maxRecords, int growth, Duration maxInterval) {

	/**
	 * Bytes of held sends (keys, values, headers) past which a transaction no longer grows
	 * ({@link #due(long, long, TransactionPipeline)}): 8 MiB, a quarter of a producer's default
	 * {@code buffer.memory}, about 49,000 records of 170 bytes.
	 */
	public static final long MAX_HELD_BYTES_TO_GROW = 8L * 1024 * 1024;

	/** The processor's defaults: {@link CrossClusterProcessor#DEFAULT_MAX_RECORDS} and the others. */
	public static final TransactionSizing DEFAULT = new TransactionSizing(CrossClusterProcessor.DEFAULT_MAX_RECORDS,
			CrossClusterProcessor.DEFAULT_GROWTH, CrossClusterProcessor.DEFAULT_MAX_INTERVAL);

	/**
	 * Checks the ranges.
	 * @throws IllegalArgumentException if a value is out of its range
	 */
	public TransactionSizing {
		Objects.requireNonNull(maxInterval, "maxInterval");
		if (maxRecords < 1) {
			throw new IllegalArgumentException("maxRecords must be 1 or more, not " + maxRecords);
		}
		if (growth < 1 || growth > 1000) {
			throw new IllegalArgumentException("growth must be 1 to 1000, not " + growth);
		}
		if (maxInterval.isNegative() || maxInterval.isZero()) {
			throw new IllegalArgumentException("maxInterval must be positive, not " + maxInterval);
		}
	}

	/**
	 * Returns whether an open transaction is due to close.
	 * @param records records it holds, 0 or more
	 * @param ageNanos nanoseconds since it began
	 * @param preparing transactions of its pipeline still preparing ({@link TransactionPipeline#preparing()})
	 * @return true to close it now
	 */
	public boolean due(long records, long ageNanos, int preparing) {
		return (records >= this.maxRecords && (preparing == 0 || records >= this.growth * (long) this.maxRecords))
				|| ageNanos >= this.maxInterval.toNanos();
	}

	/**
	 * Returns whether an open transaction, the newest of its pipeline, is due to close, as
	 * {@link #due(long, long, int)} with the pipeline's {@link TransactionPipeline#preparing()},
	 * except that it stops growing past {@code maxRecords} once its sends held in memory
	 * ({@link TransactionPipeline#heldBytes()}) reach {@link #MAX_HELD_BYTES_TO_GROW}. Held sends
	 * wait for the previous transaction's acknowledgements: where those take a round trip (a
	 * target in another region) a transaction that grows sends more per round trip, but where
	 * they wait only for the target's own pace (a backlog beside the target) growth would only
	 * hold more records in memory and pass them on in one larger burst (issue 25;
	 * {@code docs/benchmarks.md}, "Growth while held").
	 * @param records records it holds, 0 or more
	 * @param ageNanos nanoseconds since it began
	 * @param pipeline its pipeline; read, not changed
	 * @return true to close it now
	 * @since 0.2.0
	 */
	public boolean due(long records, long ageNanos, TransactionPipeline pipeline) {
		return due(records, ageNanos, (pipeline.heldBytes() >= MAX_HELD_BYTES_TO_GROW) ? 0 : pipeline.preparing());
	}

	/**
	 * Returns how long an open transaction of that age may wait for records before it is due.
	 * @param ageNanos nanoseconds since it began
	 * @return 0 or more nanoseconds
	 */
	public long nanosUntilDue(long ageNanos) {
		return Math.max(0, this.maxInterval.toNanos() - ageNanos);
	}

}
