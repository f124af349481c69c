/**
 * The failover feature's reach into kafka-clients internals: reading a client's cached metadata
 * (leaders, leader epochs, last update) for the leader cache
 * ({@link dev.tandem.failover.internals.LeaderSource}). Covered by {@code LeaderSourceTests}, which
 * fail loudly when a kafka-clients upgrade breaks it.
 */
@NullMarked
package dev.tandem.failover.internals;

import org.jspecify.annotations.NullMarked;
