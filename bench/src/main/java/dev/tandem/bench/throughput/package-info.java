/**
 * Throughput benchmark: copies of the same real records east to west by an at-least-once copy,
 * Kafka's single-cluster exactly-once copy, Tandem sequential and pipelined, and the starter's
 * {@code @KafkaListener}, in interleaved rounds of one run.
 */
@NullMarked
package dev.tandem.bench.throughput;

import org.jspecify.annotations.NullMarked;
