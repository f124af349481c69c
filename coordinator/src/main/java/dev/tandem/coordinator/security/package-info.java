/**
 * Security of the coordinator: mutual TLS for every connection to a peer
 * ({@link dev.tandem.coordinator.security.CoordinatorTls}) and the policy that maps a
 * certificate's identity to the owners it may act for
 * ({@link dev.tandem.coordinator.security.AccessPolicy}).
 *
 * @since 0.1.0
 */
@NullMarked
package dev.tandem.coordinator.security;

import org.jspecify.annotations.NullMarked;
