/**
 * The only code in Tandem that reaches into kafka-clients internals: capturing a transactional
 * producer's producer id and epoch, and resuming an open transaction in a fresh producer (the
 * technique of Flink's {@code FlinkKafkaInternalProducer.resumeTransaction}). Checked against
 * the running kafka-clients version by {@link dev.tandem.transaction.internals.ProducerInternals#verify()}.
 */
@NullMarked
package dev.tandem.transaction.internals;

import org.jspecify.annotations.NullMarked;
