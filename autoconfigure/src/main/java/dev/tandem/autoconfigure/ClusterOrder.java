package dev.tandem.autoconfigure;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;

/**
 * The configured order of the clusters under {@code tandem.clusters}, whatever order the property
 * sources that bind them iterate in. Spring Boot binds a map from the highest-precedence source
 * first, and an environment variable, a command-line argument or a {@code Map} given as properties
 * iterates in hash order, so an override of one cluster's setting could move it first. The order
 * here: clusters in the order the lowest-precedence source that names them declares them
 * ({@code application.yml}, where clusters are usually declared), each further source adding the
 * clusters it alone names; within a source that keeps no order, by name. Which cluster is first
 * matters: it holds the instance heartbeats' topic, and every listing follows this order.
 *
 * @since 0.1.0
 */
public final class ClusterOrder {

	private static final ConfigurationPropertyName CLUSTERS = ConfigurationPropertyName.of("tandem.clusters");

	private ClusterOrder() {
	}

	/**
	 * Returns cluster names in configured order.
	 * @param environment the environment the names were bound from
	 * @param names the bound names, in any order
	 * @return the same names in configured order; names no source lists keep their given order, last
	 */
	public static List<String> of(Environment environment, Collection<String> names) {
		if (!(environment instanceof ConfigurableEnvironment configurable) || names.size() < 2) {
			return List.copyOf(names);
		}
		Map<String, String> byKey = new LinkedHashMap<>();
		names.forEach((name) -> byKey.putIfAbsent(name.toLowerCase(Locale.ROOT), name));
		List<PropertySource<?>> sources = new ArrayList<>();
		configurable.getPropertySources().forEach(sources::add);
		Collections.reverse(sources);
		Set<String> ordered = new LinkedHashSet<>();
		for (PropertySource<?> source : sources) {
			ConfigurationPropertySource properties = ConfigurationPropertySource.from(source);
			if (!(properties instanceof IterableConfigurationPropertySource iterable)) {
				continue;
			}
			List<String> found = new ArrayList<>();
			iterable.stream()
				.filter(CLUSTERS::isAncestorOf)
				.map((property) -> byKey.get(property.getElement(CLUSTERS.getNumberOfElements(),
						ConfigurationPropertyName.Form.UNIFORM)))
				.filter((name) -> name != null && !found.contains(name))
				.forEach(found::add);
			if (!keepsOrder(source)) {
				Collections.sort(found);
			}
			ordered.addAll(found);
		}
		ordered.addAll(names);
		return List.copyOf(ordered);
	}

	/**
	 * Puts a map of clusters in configured order, in place.
	 * @param <V> the value type
	 * @param environment the environment the map was bound from
	 * @param clusters the map, by cluster name; changed in place
	 */
	public static <V> void apply(Environment environment, Map<String, V> clusters) {
		List<String> order = of(environment, clusters.keySet());
		if (order.equals(List.copyOf(clusters.keySet()))) {
			return;
		}
		Map<String, V> copy = new LinkedHashMap<>(clusters);
		clusters.clear();
		order.forEach((name) -> clusters.put(name, copy.get(name)));
	}

	/**
	 * Whether a source lists its properties in the order they were written: Spring Boot's
	 * {@code application.yml} and {@code .properties} sources and ordered maps do; environment
	 * variables, command-line arguments, {@link java.util.Properties} and hash maps do not.
	 */
	private static boolean keepsOrder(PropertySource<?> source) {
		if (source instanceof MapPropertySource map) {
			Object backing = map.getSource();
			return (backing instanceof LinkedHashMap<?, ?> || backing instanceof SortedMap<?, ?>)
					&& !(source instanceof org.springframework.core.env.SystemEnvironmentPropertySource);
		}
		return false;
	}

}
