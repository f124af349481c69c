package dev.tandem.autoconfigure.jdbc;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.UnboundElementsSourceFilter;
import org.springframework.core.env.Environment;

import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.autoconfigure.diagnostics.NearestName;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;

/**
 * Binds {@code tandem.datasources.<name>.*} strictly. Spring Boot binds configuration properties
 * leniently, so a misspelt key ({@code usrename}, {@code xa-propertis.socket-timeout}) would bind
 * to nothing and the database would start without it: without its user, or without the socket
 * timeout that bounds every call Tandem makes on it. Here a key that binds to nothing fails the
 * start, naming it and the property it most likely meant. The keys under {@code xa-properties.*}
 * and {@code pool.*} are checked later against the driver's and the pool's own bean properties
 * ({@code DataSourceFactory}). Stateless.
 */
final class DatasourceKeys {

	private static final String PREFIX = "tandem.datasources";

	/** The properties of {@link TandemProperties.Datasource} in kebab case; the last two are maps. */
	private static final List<String> KNOWN = List.of("url", "username", "password", "xa-data-source-class-name",
			"primary", "xa-properties", "pool");

	private DatasourceKeys() {
	}

	/**
	 * Binds every {@code tandem.datasources.<name>} entry of the environment.
	 * @param environment the application's environment
	 * @return the entries by database name, empty if none is configured
	 * @throws TandemConfigurationException if a key under an entry is not one of its properties
	 */
	static Map<String, TandemProperties.Datasource> bind(Environment environment) {
		Binder binder = Binder.get(environment);
		BindHandler strict = new NoUnboundElementsBindHandler(BindHandler.DEFAULT, new UnboundElementsSourceFilter());
		try {
			return binder.bind(PREFIX, Bindable.mapOf(String.class, TandemProperties.Datasource.class), strict)
				.orElse(Map.of());
		}
		catch (BindException ex) {
			if (ex.getCause() instanceof UnboundConfigurationPropertiesException unbound) {
				throw unknownKeys(unbound.getUnboundProperties().stream().map(ConfigurationProperty::getName).toList());
			}
			throw ex;
		}
	}

	/**
	 * Returns the failure naming keys that bound to nothing.
	 * @param names the keys, each under {@code tandem.datasources.<name>}
	 */
	static TandemConfigurationException unknownKeys(List<ConfigurationPropertyName> names) {
		List<String> unknown = new ArrayList<>();
		List<String> renames = new ArrayList<>();
		for (ConfigurationPropertyName name : names.stream().sorted().toList()) {
			unknown.add(name.toString());
			if (name.getNumberOfElements() < 4) {
				continue;
			}
			String entry = name.chop(3).toString();
			String relative = name.toString().substring(entry.length() + 1);
			String meant = didYouMean(relative);
			if (meant != null) {
				renames.add(name + " -> " + entry + "." + meant);
			}
		}
		return new TandemConfigurationException(unknown.get(0), unknown + " " + ((unknown.size() == 1)
				? "is not a property" : "are not properties") + " of a Tandem database: it binds to nothing, so the "
				+ "database would start without it.",
				"Remove or correct " + String.join(", ", unknown)
						+ (renames.isEmpty() ? "" : " (did you mean " + String.join(", ", renames) + "?)")
						+ ": the properties of tandem.datasources.<name> are " + String.join(", ", KNOWN.subList(0, 5))
						+ ", xa-properties.* and pool.*.");
	}

	/**
	 * Returns the property a key relative to its entry most likely meant, or null if nothing is
	 * close: {@code usrename} as {@code username}, {@code xa-propertis.socket-timeout} as
	 * {@code xa-properties.socket-timeout}.
	 * @param key a key relative to {@code tandem.datasources.<name>}
	 */
	static @Nullable String didYouMean(String key) {
		int dot = key.indexOf('.');
		String head = (dot > 0) ? key.substring(0, dot) : key;
		List<String> candidates = (dot > 0) ? List.of("xa-properties", "pool") : KNOWN.subList(0, 5);
		String meant = NearestName.nearest(head, candidates, Math.max(2, head.length() / 4));
		return (meant == null) ? null : meant + ((dot > 0) ? key.substring(dot) : "");
	}

}
