/**
 * Per-cluster Spring Kafka beans: producer and consumer factories, templates, listener container factories.
 */
@NullMarked
package dev.tandem.autoconfigure.kafka;

import org.jspecify.annotations.NullMarked;
