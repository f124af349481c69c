package dev.tandem.autoconfigure;

import java.util.Map;

/**
 * Client properties that every cluster under {@code tandem.clusters} inherits before its own
 * settings apply. With Spring Boot's Kafka module on the class path this is
 * {@code spring.kafka.*} (see {@code SpringKafkaClientDefaults}); define a bean of this type to
 * replace it. Implementations must be immutable and thread-safe.
 *
 * @since 0.1.0
 */
public interface TandemClientDefaults {

	/** Defaults that add nothing. */
	TandemClientDefaults NONE = new TandemClientDefaults() {
	};

	/**
	 * Returns the properties every client of every cluster starts from (security, SSL, common
	 * client properties); never {@code bootstrap.servers}.
	 * @return an immutable map, empty by default
	 */
	default Map<String, Object> common() {
		return Map.of();
	}

	/**
	 * Returns the producer properties every cluster starts from; never {@code bootstrap.servers}.
	 * @return an immutable map, empty by default
	 */
	default Map<String, Object> producer() {
		return Map.of();
	}

	/**
	 * Returns the consumer properties every cluster starts from; never {@code bootstrap.servers}.
	 * @return an immutable map, empty by default
	 */
	default Map<String, Object> consumer() {
		return Map.of();
	}

	/**
	 * Returns the admin client properties every cluster starts from; never
	 * {@code bootstrap.servers}.
	 * @return an immutable map, empty by default
	 */
	default Map<String, Object> admin() {
		return Map.of();
	}

}
