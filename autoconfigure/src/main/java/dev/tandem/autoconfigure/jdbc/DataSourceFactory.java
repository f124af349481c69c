package dev.tandem.autoconfigure.jdbc;

import java.beans.PropertyDescriptor;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

import javax.sql.DataSource;
import javax.sql.XAConnection;
import javax.sql.XADataSource;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeanUtils;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.util.ClassUtils;

import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.autoconfigure.diagnostics.NearestName;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.transaction.CrossClusterDataSource;

/**
 * Builds the {@link CrossClusterDataSource} of one {@code tandem.datasources.<name>} entry: the
 * driver's XA data source (its class from {@code xa-data-source-class-name} or the URL, its bean
 * properties from the URL, credentials and {@code xa-properties}) and a pool of the same database
 * for work outside cross-cluster transactions (Spring Boot's {@code DataSourceBuilder}, so HikariCP
 * when present, else Spring's {@code SimpleDriverDataSource}, with {@code pool.*} bound onto it; {@code pool.*}
 * without a pool library is refused, naming HikariCP). Every mistake is a
 * {@link TandemConfigurationException} naming the property at fault and the fix; a database that
 * cannot be reached fails here too, naming the URL property, before the manager's own start-up
 * checks (prepared transactions enabled, marker table) run.
 */
final class DataSourceFactory {

	/** The names the manager accepts ({@code CrossClusterTransactionManagerBuilder.database}). */
	static final Pattern NAME = Pattern.compile("[a-zA-Z0-9_-]{1,200}");

	private static final Map<String, String> XA_CLASSES = Map.of("postgresql", "org.postgresql.xa.PGXADataSource",
			"mysql", "com.mysql.cj.jdbc.MysqlXADataSource", "mariadb", "org.mariadb.jdbc.MariaDbDataSource");

	private static final String BUILDER = "org.springframework.boot.jdbc.DataSourceBuilder";

	private DataSourceFactory() {
	}

	/**
	 * Builds the data source of one entry.
	 * @param name the database's name (the key under {@code tandem.datasources})
	 * @param properties its properties
	 * @param pools where the pool is kept to be closed at shutdown
	 * @param classLoader the application's class loader
	 * @return the data source
	 * @throws TandemConfigurationException if a property is missing or wrong, or the database cannot be reached
	 */
	static CrossClusterDataSource create(String name, TandemProperties.Datasource properties, DataSourcePools pools,
			@Nullable ClassLoader classLoader) {
		String prefix = "tandem.datasources." + name;
		if (!NAME.matcher(name).matches()) {
			throw new TandemConfigurationException(prefix, "'" + name + "' is not a valid database name.",
					"Rename tandem.datasources." + name + " with 1 to 200 letters, digits, '-' and '_'; keep the name "
							+ "stable across restarts: it is part of the ids of the database's prepared branches.");
		}
		String url = properties.getUrl();
		if (url == null || url.isBlank()) {
			throw new TandemConfigurationException(prefix + ".url", "Database '" + name + "' has no JDBC URL.",
					"Set " + prefix + ".url, such as jdbc:postgresql://db:5432/orders.");
		}
		XADataSource xa = xaDataSource(name, prefix, url, properties, classLoader);
		checkReachable(name, prefix, url, xa);
		if (!ClassUtils.isPresent(BUILDER, classLoader)) {
			throw new TandemConfigurationException(prefix, "Database '" + name + "' needs Spring Boot's JDBC support "
					+ "(spring-boot-jdbc) for its connection pool outside cross-cluster transactions.",
					"Add org.springframework.boot:spring-boot-starter-jdbc to the application, or declare a "
							+ "CrossClusterDataSource bean with a pool of your own instead of " + prefix + ".");
		}
		if (!properties.getPool().isEmpty() && !Pool.libraryPresent(classLoader)) {
			List<String> keys = properties.getPool().keySet().stream().sorted().map((key) -> prefix + ".pool." + key)
				.toList();
			throw new TandemConfigurationException(keys.get(0), prefix + ".pool.* needs HikariCP on the classpath: add "
					+ "com.zaxxer:HikariCP (spring-boot-starter-jdbc brings it) or remove " + prefix + ".pool. Keys found: "
					+ keys + "; without a pool library each call opens a connection of its own, which has no pool settings.",
					"Add com.zaxxer:HikariCP to the application (spring-boot-starter-jdbc brings it), or remove " + prefix
							+ ".pool.");
		}
		DataSource pool = Pool.create(url, properties.getUsername(), properties.getPassword(), classLoader);
		pools.add(pool);
		bind(pool, properties.getPool(), prefix + ".pool", true);
		return new CrossClusterDataSource(name, xa, pool);
	}

	private static XADataSource xaDataSource(String name, String prefix, String url,
			TandemProperties.Datasource properties, @Nullable ClassLoader classLoader) {
		String property = prefix + ".xa-data-source-class-name";
		String className = properties.getXaDataSourceClassName();
		if (className == null || className.isBlank()) {
			className = xaClassOf(url);
			if (className == null) {
				throw new TandemConfigurationException(property, "Database '" + name + "': Tandem knows no XA data "
						+ "source for the URL " + withoutParameters(url) + ".",
						"Set " + property + " to the JDBC driver's javax.sql.XADataSource class (PostgreSQL: "
								+ XA_CLASSES.get("postgresql") + ", MySQL: " + XA_CLASSES.get("mysql") + ").");
			}
		}
		Class<?> type;
		try {
			type = ClassUtils.forName(className.trim(), classLoader);
		}
		catch (ClassNotFoundException | LinkageError ex) {
			throw new TandemConfigurationException(property, "Database '" + name + "': the XA data source class "
					+ className + " is not on the class path.", "Add the JDBC driver to the application (PostgreSQL: "
							+ "org.postgresql:postgresql), or correct " + property + ".");
		}
		if (!XADataSource.class.isAssignableFrom(type)) {
			throw new TandemConfigurationException(property, "Database '" + name + "': " + className
					+ " is not a javax.sql.XADataSource.", "Set " + property
							+ " to the driver's XA data source class, such as " + XA_CLASSES.get("postgresql") + ".");
		}
		XADataSource xa = (XADataSource) BeanUtils.instantiateClass(type);
		Map<String, String> connection = new LinkedHashMap<>();
		connection.put("url", url);
		if (properties.getUsername() != null) {
			connection.put("user", properties.getUsername());
		}
		if (properties.getPassword() != null) {
			connection.put("password", properties.getPassword());
		}
		bind(xa, connection, prefix, false);
		bind(xa, properties.getXaProperties(), prefix + ".xa-properties", true);
		return xa;
	}

	/** The XA data source class of a JDBC URL's driver, or null if Tandem does not know it. */
	static @Nullable String xaClassOf(String url) {
		String lower = url.trim().toLowerCase(Locale.ROOT);
		for (Map.Entry<String, String> known : XA_CLASSES.entrySet()) {
			if (lower.startsWith("jdbc:" + known.getKey() + ":")) {
				return known.getValue();
			}
		}
		return null;
	}

	private static void checkReachable(String name, String prefix, String url, XADataSource xa) {
		try {
			XAConnection connection = xa.getXAConnection();
			connection.close();
		}
		catch (SQLException | RuntimeException ex) {
			throw new TandemConfigurationException(prefix + ".url", "Database '" + name + "' at "
					+ withoutParameters(url) + " cannot be reached: " + ex.getMessage(), "Check " + prefix + ".url, "
							+ prefix + ".username and " + prefix + ".password, and that the database runs and accepts "
							+ "connections from this host: Tandem recovers its prepared branches there at start-up.");
		}
	}

	/** The URL without its parameters, which may hold credentials. */
	static String withoutParameters(String url) {
		int query = url.indexOf('?');
		return (query >= 0) ? url.substring(0, query) : url;
	}

	/**
	 * Binds properties onto a bean with Spring Boot's relaxed names ({@code socket-timeout} sets
	 * {@code socketTimeout}).
	 * @param strict whether a property the bean does not have is an error
	 */
	private static void bind(Object target, Map<String, String> values, String prefix, boolean strict) {
		if (values.isEmpty()) {
			return;
		}
		if (strict) {
			BeanWrapper bean = new BeanWrapperImpl(target);
			List<String> unknown = new ArrayList<>();
			List<String> renames = new ArrayList<>();
			for (String key : values.keySet()) {
				if (!bean.isWritableProperty(camelCase(key))) {
					unknown.add(prefix + "." + key);
					String meant = NearestName.nearest(kebabCase(camelCase(key)), writableProperties(bean), 3);
					if (meant != null) {
						renames.add(prefix + "." + key + " -> " + prefix + "." + meant);
					}
				}
			}
			if (!unknown.isEmpty()) {
				throw new TandemConfigurationException(unknown.get(0), unknown + " " + ((unknown.size() == 1)
						? "is not a property" : "are not properties") + " of " + target.getClass().getName() + ".",
						"Remove or correct " + String.join(", ", unknown)
								+ (renames.isEmpty() ? "" : " (did you mean " + String.join(", ", renames) + "?)")
								+ ": the keys are the bean properties of " + target.getClass().getSimpleName()
								+ " in kebab case.");
			}
		}
		Binder binder = new Binder(new MapConfigurationPropertySource(values));
		try {
			binder.bind(ConfigurationPropertyName.EMPTY, Bindable.ofInstance(target));
		}
		catch (BindException ex) {
			ConfigurationProperty property = ex.getProperty();
			String at = (property != null) ? prefix + "." + property.getName() : prefix;
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new TandemConfigurationException(at, at + " cannot be set on " + target.getClass().getName() + ": "
					+ cause.getMessage(), "Correct the value of " + at + ".");
		}
	}

	/** The writable properties of a bean, in kebab case ({@code socketTimeout} as {@code socket-timeout}). */
	private static List<String> writableProperties(BeanWrapper bean) {
		List<String> names = new ArrayList<>();
		for (PropertyDescriptor descriptor : bean.getPropertyDescriptors()) {
			if (descriptor.getWriteMethod() != null) {
				names.add(kebabCase(descriptor.getName()));
			}
		}
		return names;
	}

	/** {@code socketTimeout} as {@code socket-timeout}, {@code URL} as {@code url}. */
	static String kebabCase(String camelCase) {
		StringBuilder name = new StringBuilder(camelCase.length() + 4);
		char previous = '-';
		for (char c : camelCase.toCharArray()) {
			boolean upper = Character.isUpperCase(c);
			if (upper) {
				if (name.length() > 0 && !Character.isUpperCase(previous)) {
					name.append('-');
				}
				name.append(Character.toLowerCase(c));
			}
			else {
				name.append(c);
			}
			previous = c;
		}
		return name.toString();
	}

		/** {@code socket-timeout} and {@code socketTimeout} as {@code socketTimeout}. */
	static String camelCase(String key) {
		StringBuilder name = new StringBuilder(key.length());
		boolean upper = false;
		for (char c : key.toCharArray()) {
			if (c == '-' || c == '_') {
				upper = true;
			}
			else {
				name.append(upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return name.toString();
	}

	/** Spring Boot's {@code DataSourceBuilder}, in a class of its own: loaded only where present. */
	private static final class Pool {

		/** Whether a connection pool library Spring Boot knows (HikariCP, ...) is on the class path. */
		static boolean libraryPresent(@Nullable ClassLoader classLoader) {
			return org.springframework.boot.jdbc.DataSourceBuilder.findType(classLoader) != null;
		}

		static DataSource create(String url, @Nullable String username, @Nullable String password,
				@Nullable ClassLoader classLoader) {
			org.springframework.boot.jdbc.DataSourceBuilder<?> builder = org.springframework.boot.jdbc.DataSourceBuilder
				.create(classLoader);
			if (org.springframework.boot.jdbc.DataSourceBuilder.findType(classLoader) == null) {
				// no pool library (HikariCP...) on the class path: a connection per call, as Spring's driver data source
				builder.type(org.springframework.jdbc.datasource.SimpleDriverDataSource.class);
			}
			return builder.url(url).username(username).password(password).build();
		}

	}

}
