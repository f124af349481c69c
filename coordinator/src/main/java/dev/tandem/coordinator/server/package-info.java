/**
 * The coordinator peer: a thin Apache Ratis state machine adapter over the decision table, and
 * the server that hosts it.
 */
@NullMarked
package dev.tandem.coordinator.server;

import org.jspecify.annotations.NullMarked;
