/**
 * Benchmark of Tandem's coordinator: decisions per second and decide latency with and without
 * group commit on 1 and 3 peers, and linearizable read throughput on the leader and on
 * followers.
 */
@NullMarked
package dev.tandem.bench.coordinator;

import org.jspecify.annotations.NullMarked;
