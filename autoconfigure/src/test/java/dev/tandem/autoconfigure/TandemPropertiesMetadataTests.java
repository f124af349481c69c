package dev.tandem.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;

import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The generated configuration metadata tells the IDE the defaults {@link TandemProperties} really
 * has. Most defaults are the core builder's constants, which the configuration processor cannot
 * read across classes; their metadata comes from {@code additional-spring-configuration-metadata.json},
 * and this test keeps it honest both ways: every default in the metadata binds to the value of a
 * fresh {@code TandemProperties}, and every property with a value there has a default in the
 * metadata.
 */
class TandemPropertiesMetadataTests {

	private static final String SOURCE_TYPE = TandemProperties.class.getName();

	@Test
	void everyDefaultInTheMetadataIsTheDefaultOfTheProperties() throws Exception {
		List<Map<String, Object>> withDefaults = tandemProperties().stream()
			.filter((property) -> property.get("defaultValue") != null)
			.toList();
		assertThat(withDefaults).extracting((property) -> property.get("name"))
			.contains("tandem.transaction.slots", "tandem.transaction.lease-timeout", "tandem.listener.attempts");
		BeanWrapper defaults = PropertyAccessorFactory.forBeanPropertyAccess(new TandemProperties());
		for (Map<String, Object> property : withDefaults) {
			String name = (String) property.get("name");
			Class<?> type = ClassUtils.forName((String) property.get("type"), getClass().getClassLoader());
			Object bound = new Binder(new MapConfigurationPropertySource(
					Map.of(name, String.valueOf(property.get("defaultValue")))))
				.bind(name, Bindable.of(type))
				.get();
			assertThat(bound).as("default of %s in the metadata", name)
				.isEqualTo(defaults.getPropertyValue(beanPath(name)));
		}
	}

	@Test
	void everyPropertyWithAValueHasADefaultInTheMetadata() throws Exception {
		BeanWrapper defaults = PropertyAccessorFactory.forBeanPropertyAccess(new TandemProperties());
		List<String> missing = new ArrayList<>();
		for (Map<String, Object> property : tandemProperties()) {
			String name = (String) property.get("name");
			Object value = defaults.getPropertyValue(beanPath(name));
			if (value != null && !(value instanceof Map) && !(value instanceof Collection)
					&& property.get("defaultValue") == null) {
				missing.add(name + " (" + value + ")");
			}
		}
		assertThat(missing).as("properties whose default the metadata does not show").isEmpty();
	}

	/** Properties of TandemProperties in the metadata generated for this module. */
	private List<Map<String, Object>> tandemProperties() throws IOException {
		List<URL> files = Collections.list(getClass().getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json"));
		for (URL file : files) {
			String json;
			try (InputStream in = file.openStream()) {
				json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
			}
			List<Map<String, Object>> properties = JsonPath.read(json,
					"$.properties[?(@.sourceType =~ /" + SOURCE_TYPE.replace(".", "\\.") + ".*/)]");
			if (!properties.isEmpty()) {
				return properties;
			}
		}
		throw new AssertionError("No configuration metadata of " + SOURCE_TYPE + " in " + files);
	}

	/** {@code tandem.listener.dead-letter.topic-suffix} as {@code listener.deadLetter.topicSuffix}. */
	private static String beanPath(String name) {
		StringBuilder path = new StringBuilder();
		boolean upper = false;
		for (char c : name.substring("tandem.".length()).toCharArray()) {
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
