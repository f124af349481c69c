/**
 * Exactly-once mirroring of Kafka topics from a source cluster to one or more target clusters
 * through Tandem's cross-cluster transactions, with exact consumer-group offset translation.
 * Entry point: {@link dev.tandem.mirror.Mirror}.
 */
@NullMarked
package dev.tandem.mirror;

import org.jspecify.annotations.NullMarked;
