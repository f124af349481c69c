/**
 * Benchmark harness: the KIP-951 leader-move scenario on a 3-broker cluster, comparing
 * kafka-clients defaults, Tandem's failover profile and a pre-KIP-951 client.
 */
@NullMarked
package dev.tandem.bench;

import org.jspecify.annotations.NullMarked;
