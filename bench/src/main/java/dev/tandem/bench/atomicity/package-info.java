/**
 * Benchmark of the cost of atomicity: single-cluster Kafka transactions against Tandem's
 * cross-cluster transactions and best-effort chained commits, on the same clusters in one run.
 */
@NullMarked
package dev.tandem.bench.atomicity;

import org.jspecify.annotations.NullMarked;
