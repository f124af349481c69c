/**
 * Tandem's coordinator: a Raft-replicated decision log for cross-cluster transactions
 * (DESIGN.md §3), embedded in the app as one peer or run as a 3- or 5-peer service.
 */
@NullMarked
package dev.tandem.coordinator;

import org.jspecify.annotations.NullMarked;
