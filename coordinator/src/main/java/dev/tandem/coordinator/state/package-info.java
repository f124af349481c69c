/**
 * The coordinator's domain state machine and its binary codec: decision records keyed by
 * transaction id and indexed by owner, free of any Raft library.
 */
@NullMarked
package dev.tandem.coordinator.state;

import org.jspecify.annotations.NullMarked;
