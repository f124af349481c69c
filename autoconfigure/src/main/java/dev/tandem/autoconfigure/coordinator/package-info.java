/**
 * Auto-configuration of the decision log: embedded Ratis peer or remote coordinator.
 */
@NullMarked
package dev.tandem.autoconfigure.coordinator;

import org.jspecify.annotations.NullMarked;
