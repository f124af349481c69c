package dev.tandem.autoconfigure;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;

import dev.tandem.autoconfigure.diagnostics.NearestName;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;

/**
 * The keys written under {@code tandem.clusters.<name>.*}, and the failure that names them when a
 * cluster has no bootstrap servers. A misspelt key ({@code bootstrap-server},
 * {@code bootstrap.servers}) binds to nothing, so the cluster looks unconfigured; listing what was
 * written, with the nearest property Tandem knows, says what to rename. Stateless.
 */
final class ClusterKeys {

	private static final ConfigurationPropertyName CLUSTERS = ConfigurationPropertyName.of("tandem.clusters");

	/** The properties of {@link TandemProperties.Cluster}: exact names, then the map groups. */
	private static final List<String> EXACT = List.of("bootstrap-servers", "ssl.bundle");

	private static final List<String> GROUPS = List.of("properties", "producer", "consumer", "admin");

	private ClusterKeys() {
	}

	/**
	 * Returns the keys found in the environment's enumerable property sources under
	 * {@code tandem.clusters.<name>.*}, by cluster name, each relative to its cluster
	 * ({@code bootstrap-server}, {@code producer.acks}), sorted.
	 * @param environment the environment
	 * @return the keys by cluster name; empty if none are written or the environment is not a
	 *     {@link ConfigurableEnvironment}
	 */
	static Map<String, List<String>> declared(Environment environment) {
		if (!(environment instanceof ConfigurableEnvironment)) {
			return Map.of();
		}
		Map<String, TreeSet<String>> keys = new LinkedHashMap<>();
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (!(source instanceof IterableConfigurationPropertySource iterable)) {
				continue;
			}
			iterable.stream()
				.filter((name) -> CLUSTERS.isAncestorOf(name) && name.getNumberOfElements() > 3)
				.forEach((name) -> {
					String cluster = name.getElement(2, ConfigurationPropertyName.Form.ORIGINAL);
					String prefix = name.chop(3).toString();
					keys.computeIfAbsent(cluster, (c) -> new TreeSet<>()).add(name.toString().substring(prefix.length() + 1));
				});
		}
		Map<String, List<String>> declared = new LinkedHashMap<>();
		keys.forEach((cluster, found) -> declared.put(cluster, List.copyOf(found)));
		return declared;
	}

	/**
	 * Returns the failure of a cluster without bootstrap servers: the property to set, the keys
	 * found under the cluster, and the nearest known property of each key that is not one.
	 * @param cluster the cluster name
	 * @param found the keys found under {@code tandem.clusters.<cluster>.*}, relative to it
	 * @return the exception to throw
	 */
	static TandemConfigurationException missingBootstrapServers(String cluster, Collection<String> found) {
		String prefix = "tandem.clusters." + cluster + ".";
		String property = prefix + "bootstrap-servers";
		StringBuilder description = new StringBuilder("Cluster '" + cluster + "' has no bootstrap servers: " + property
				+ " is not set. ");
		List<String> renames = new ArrayList<>();
		if (found.isEmpty()) {
			description.append("No keys were found under ").append(prefix).append("*.");
		}
		else {
			description.append("Keys found under ").append(prefix).append("*: ").append(found).append('.');
			for (String key : found) {
				String meant = didYouMean(key);
				if (meant != null) {
					renames.add(prefix + key + " -> " + prefix + meant);
					description.append(" Did you mean ").append(prefix).append(meant).append(" instead of ").append(prefix)
						.append(key).append('?');
				}
			}
		}
		String action = "Set " + property + " to the cluster's host:port list"
				+ (renames.isEmpty() ? "" : " (rename " + String.join(", ", renames) + ")")
				+ ", or define a TandemClusterConnectionDetails bean for it.";
		return new TandemConfigurationException(property, description.toString(), action);
	}

	/**
	 * Returns the known property a key most likely meant, or null if the key is one already or
	 * nothing is close.
	 * @param key a key relative to its cluster, such as {@code bootstrap-server}
	 */
	static @Nullable String didYouMean(String key) {
		String plain = key.replaceAll("\\[\\d+]$", "");
		if (EXACT.contains(plain) || GROUPS.stream().anyMatch((group) -> plain.startsWith(group + "."))) {
			return null;
		}
		String best = null;
		int bestDistance = Integer.MAX_VALUE;
		// the whole key, and its Kafka spelling with dots (bootstrap.servers)
		for (String written : List.of(plain, plain.replace('.', '-'))) {
			for (String known : EXACT) {
				int distance = NearestName.distance(written, known);
				if (distance < bestDistance && distance <= Math.max(2, known.length() / 4)) {
					best = known;
					bestDistance = distance;
				}
			}
		}
		// a misspelt group keeps the key under it: producr.acks -> producer.acks
		int dot = plain.indexOf('.');
		if (dot > 0) {
			String head = plain.substring(0, dot);
			for (String group : GROUPS) {
				int distance = NearestName.distance(head, group);
				if (distance < bestDistance && distance <= 2) {
					best = group + plain.substring(dot);
					bestDistance = distance;
				}
			}
		}
		return best;
	}

}
