package dev.tandem.autoconfigure.actuate;

import java.util.List;
import java.util.Locale;

import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;

/**
 * Masks credential-like client properties in the {@code configprops} and {@code env} endpoints,
 * also with {@code show-values=always}: under {@code tandem.clusters.*} (the pass-through
 * {@code properties}, {@code producer}, {@code consumer} and {@code admin} maps, where
 * {@code sasl.jaas.config} and SSL passwords live), {@code tandem.coordinator.*} (TLS passwords),
 * {@code tandem.datasources.*} (database passwords, also under {@code xa-properties} and
 * {@code pool}; keep them out of the JDBC URL, which is not masked) and {@code spring.kafka.*},
 * which every cluster inherits. A key is credential-like when it
 * contains {@code password}, {@code secret}, {@code jaas}, {@code credential}, {@code token} or
 * {@code user.info}, or ends with {@code .key} ({@code ssl.keystore.key}, PEM private keys).
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public class TandemSanitizingFunction implements SanitizingFunction {

	private static final List<String> PREFIXES = List.of("tandem.clusters.", "tandem.coordinator.", "spring.kafka.",
			"tandem.datasources.");

	private static final List<String> CREDENTIAL_PARTS = List.of("password", "secret", "jaas", "credential", "token",
			"user.info");

	@Override
	public SanitizableData apply(SanitizableData data) {
		return isCredential(data.getKey()) ? data.withSanitizedValue() : data;
	}

	/**
	 * Returns whether a property name is a Tandem (or inherited Kafka) credential.
	 * @param key the property name, in any case
	 * @return true to mask its value
	 */
	public static boolean isCredential(String key) {
		String lower = key.toLowerCase(Locale.ROOT);
		if (PREFIXES.stream().noneMatch(lower::startsWith)) {
			return false;
		}
		return lower.endsWith(".key") || CREDENTIAL_PARTS.stream().anyMatch(lower::contains);
	}

}
