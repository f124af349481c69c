/**
 * Embedded Kafka clusters for Spring test contexts: {@link dev.tandem.test.spring.EmbeddedTandemClusters}.
 */
@NullMarked
package dev.tandem.test.spring;

import org.jspecify.annotations.NullMarked;
