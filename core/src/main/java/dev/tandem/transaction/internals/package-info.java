/**
 * The cross-cluster transaction feature's reach into kafka-clients internals: capturing a
 * transactional producer's producer id and epoch, and resuming an open transaction in a fresh
 * producer (the technique of Flink's {@code FlinkKafkaInternalProducer.resumeTransaction}).
 * Checked against the running kafka-clients version by
 * {@link dev.tandem.transaction.internals.ProducerInternals#verify()} and by tests that fail
 * loudly when an upgrade breaks them.
 */
@NullMarked
package dev.tandem.transaction.internals;

import org.jspecify.annotations.NullMarked;
