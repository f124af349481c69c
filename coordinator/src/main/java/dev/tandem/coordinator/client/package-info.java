/**
 * Client side of the coordinator: a {@link dev.tandem.transaction.DecisionLog} over an Apache
 * Ratis client, with group commit of decisions and batched completions.
 */
@NullMarked
package dev.tandem.coordinator.client;

import org.jspecify.annotations.NullMarked;
