/**
 * Cross-cluster Kafka transactions: a two-phase commit over one Kafka transaction per cluster,
 * driven by a durable {@link dev.tandem.transaction.DecisionLog} (presumed abort).
 */
@NullMarked
package dev.tandem.transaction;

import org.jspecify.annotations.NullMarked;
