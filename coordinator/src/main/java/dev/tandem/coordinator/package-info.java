/**
 * Tandem's coordinator: a Raft-replicated decision log for cross-cluster transactions
 * ({@code docs/architecture.md}, "The coordinator"), embedded in the app as one peer or run as a 3- or 5-peer service.
 */
@NullMarked
package dev.tandem.coordinator;

import org.jspecify.annotations.NullMarked;
