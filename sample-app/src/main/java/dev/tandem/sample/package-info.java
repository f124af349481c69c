/**
 * Demo: exactly-once routing of real US flight records across two Kafka clusters.
 */
@NullMarked
package dev.tandem.sample;

import org.jspecify.annotations.NullMarked;
