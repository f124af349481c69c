/**
 * Auto-configuration of fast failover (KIP-951): the client profile, leader caches, readiness
 * checks of broker settings and the {@code kafkaleaders} endpoint.
 */
@NullMarked
package dev.tandem.autoconfigure.failover;

import org.jspecify.annotations.NullMarked;
