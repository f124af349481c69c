/**
 * Per-cluster Kafka client configuration shared by every Tandem feature: the cluster-name rule,
 * each client type's configuration of a cluster, the one {@code read_committed} consumer set-up,
 * and admin clients bounded by one timeout. The lowest package of {@code tandem-core}: it imports
 * only kafka-clients.
 */
@NullMarked
package dev.tandem.clients;

import org.jspecify.annotations.NullMarked;
