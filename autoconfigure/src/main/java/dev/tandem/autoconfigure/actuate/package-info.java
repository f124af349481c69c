/**
 * Auto-configuration of Tandem's actuator endpoints, health indicators and Micrometer meters.
 */
@NullMarked
package dev.tandem.autoconfigure.actuate;

import org.jspecify.annotations.NullMarked;
