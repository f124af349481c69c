/**
 * Actuator endpoints, health indicators and metrics of Tandem.
 */
@NullMarked
package dev.tandem.actuate;

import org.jspecify.annotations.NullMarked;
