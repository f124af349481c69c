package dev.tandem.transaction;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.config.types.Password;

/**
 * Cuts a cluster's client properties down to one client type's.
 */
final class ClientConfigs {

	private ClientConfigs() {
	}

	/**
	 * Removes the keys that are not among {@code names}, except entries whose value is an object
	 * for a client plugin rather than a setting (not a string, number, boolean, class, list or
	 * password): such an object travels in the properties under a key of its own, as Spring
	 * Boot's SSL bundle does for its {@code ssl.engine.factory.class}, and the plugin cannot work
	 * without it.
	 * @param config mutable client properties
	 * @param names the client type's configuration names
	 */
	static void retain(Map<String, Object> config, Set<String> names) {
		config.entrySet().removeIf((entry) -> !names.contains(entry.getKey()) && !isPluginObject(entry.getValue()));
	}

	/**
	 * Returns whether a property value is an object for a client plugin rather than a setting.
	 * @param value the value
	 * @return false for null, strings, numbers, booleans, classes, lists and passwords
	 */
	static boolean isPluginObject(Object value) {
		return !(value == null || value instanceof CharSequence || value instanceof Number || value instanceof Boolean
				|| value instanceof Class<?> || value instanceof List<?> || value instanceof Password);
	}

}
