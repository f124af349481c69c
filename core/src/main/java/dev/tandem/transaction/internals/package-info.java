/**
 * The only code in Tandem that reaches into kafka-clients internals: capturing a transactional
 * producer's producer id and epoch, and resuming an open transaction in a fresh producer (the
 * technique of Flink's {@code FlinkKafkaInternalProducer.resumeTransaction}); and reading a
 * client's cached metadata (leaders, leader epochs, last update) for the failover leader cache
 * ({@link dev.tandem.transaction.internals.LeaderSource}). Checked against the running
 * kafka-clients version by {@link dev.tandem.transaction.internals.ProducerInternals#verify()}
 * and by tests that fail loudly when an upgrade breaks them.
 */
@NullMarked
package dev.tandem.transaction.internals;

import org.jspecify.annotations.NullMarked;
