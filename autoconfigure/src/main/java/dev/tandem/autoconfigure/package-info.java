/**
 * Spring Boot auto-configuration for Tandem: named Kafka clusters and their properties.
 */
@NullMarked
package dev.tandem.autoconfigure;

import org.jspecify.annotations.NullMarked;
