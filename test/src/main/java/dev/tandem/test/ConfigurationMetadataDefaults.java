package dev.tandem.test;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import com.jayway.jsonpath.JsonPath;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.util.ClassUtils;

/**
 * Keeps a {@code @ConfigurationProperties} class's generated metadata honest about its defaults.
 * Defaults declared once as constants of a library builder are invisible to Spring Boot's
 * configuration processor (it reads only literals of the class itself), so their metadata comes
 * from {@code additional-spring-configuration-metadata.json}; these checks fail when the two drift:
 * every default in the metadata must bind to the value of a fresh properties object, and every
 * property holding a value must show a default.
 * <p>
 * Needs Spring Boot and json-path on the test class path (optional dependencies of the kit).
 * Stateless; thread-safe.
 *
 * @since 0.1.0
 */
public final class ConfigurationMetadataDefaults {

	private final Class<?> propertiesType;

	private final String prefix;

	/**
	 * @param propertiesType the {@code @ConfigurationProperties} class, with a no-argument constructor
	 * @param prefix its prefix, for example {@code "tandem"}
	 */
	public ConfigurationMetadataDefaults(Class<?> propertiesType, String prefix) {
		this.propertiesType = propertiesType;
		this.prefix = prefix;
	}

	/**
	 * Asserts that every default the metadata shows binds to the fresh object's value.
	 * @param expectedAtLeast property names that must have a default in the metadata
	 * @throws Exception if the metadata cannot be read or the object created
	 */
	public void assertDefaultsAreTheValues(String... expectedAtLeast) throws Exception {
		List<Map<String, Object>> withDefaults = properties().stream()
			.filter((property) -> property.get("defaultValue") != null)
			.toList();
		List<Object> names = withDefaults.stream().map((property) -> property.get("name")).toList();
		for (String expected : expectedAtLeast) {
			if (!names.contains(expected)) {
				throw new AssertionError("No default of " + expected + " in the metadata; defaults shown: " + names);
			}
		}
		BeanWrapper defaults = fresh();
		for (Map<String, Object> property : withDefaults) {
			String name = (String) property.get("name");
			Class<?> type = ClassUtils.forName((String) property.get("type"), getClass().getClassLoader());
			Object bound = new Binder(new MapConfigurationPropertySource(
					Map.of(name, String.valueOf(property.get("defaultValue")))))
				.bind(name, Bindable.of(type))
				.get();
			Object actual = defaults.getPropertyValue(beanPath(name));
			if (!Objects.equals(bound, actual)) {
				throw new AssertionError("Default of " + name + " in the metadata is " + property.get("defaultValue")
						+ " (" + bound + "), the properties' is " + actual);
			}
		}
	}

	/**
	 * Asserts that every property whose fresh value is not null (maps and collections aside) has
	 * a default in the metadata.
	 * @throws Exception if the metadata cannot be read or the object created
	 */
	public void assertEveryValueHasADefault() throws Exception {
		BeanWrapper defaults = fresh();
		List<String> missing = new ArrayList<>();
		for (Map<String, Object> property : properties()) {
			String name = (String) property.get("name");
			Object value = defaults.getPropertyValue(beanPath(name));
			if (value != null && !(value instanceof Map) && !(value instanceof Collection)
					&& property.get("defaultValue") == null) {
				missing.add(name + " (" + value + ")");
			}
		}
		if (!missing.isEmpty()) {
			throw new AssertionError("Properties whose default the metadata does not show: " + missing);
		}
	}

	private BeanWrapper fresh() throws ReflectiveOperationException {
		return PropertyAccessorFactory.forBeanPropertyAccess(this.propertiesType.getDeclaredConstructor().newInstance());
	}

	/** The properties of the type (and its nested classes) in the generated metadata. */
	private List<Map<String, Object>> properties() throws IOException {
		List<URL> files = Collections.list(getClass().getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json"));
		String sourceType = this.propertiesType.getName();
		for (URL file : files) {
			String json;
			try (InputStream in = file.openStream()) {
				json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
			}
			List<Map<String, Object>> properties = JsonPath.read(json,
					"$.properties[?(@.sourceType =~ /" + sourceType.replace(".", "\\.").replace("$", "\\$") + ".*/)]");
			if (!properties.isEmpty()) {
				return properties;
			}
		}
		throw new AssertionError("No configuration metadata of " + sourceType + " in " + files);
	}

	/** {@code <prefix>.listener.dead-letter.topic-suffix} as {@code listener.deadLetter.topicSuffix}. */
	private String beanPath(String name) {
		StringBuilder path = new StringBuilder();
		boolean upper = false;
		for (char c : name.substring(this.prefix.length() + 1).toCharArray()) {
			if (c == '-') {
				upper = true;
			}
			else {
				path.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return path.toString();
	}

}
