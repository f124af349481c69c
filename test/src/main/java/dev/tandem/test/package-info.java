/**
 * Kafka clusters for tests: several independent KRaft clusters in one JVM on Kafka's own test
 * kit, with broker stop/restart and leadership moves, plus a JUnit Jupiter extension that
 * starts them once per test class; and {@link dev.tandem.test.KafkaProcessCluster}, a cluster
 * whose brokers run as separate processes, for {@code kill -9} of a broker.
 *
 * @since 0.1.0
 */
@NullMarked
package dev.tandem.test;

import org.jspecify.annotations.NullMarked;
