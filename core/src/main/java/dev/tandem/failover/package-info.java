/**
 * Fast leader failover for Kafka clients (KIP-951): a profile of client settings, a leader
 * cache per client fed from the client's own metadata, and a readiness check of the broker
 * settings that bound failover speed.
 */
@NullMarked
package dev.tandem.failover;

import org.jspecify.annotations.NullMarked;
