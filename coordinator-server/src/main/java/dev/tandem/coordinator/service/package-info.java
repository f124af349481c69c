/**
 * The coordinator service: a Spring Boot app hosting one peer of Tandem's Raft-replicated
 * decision log, with health, readiness and Prometheus metrics.
 */
@NullMarked
package dev.tandem.coordinator.service;

import org.jspecify.annotations.NullMarked;
