package dev.tandem.autoconfigure.diagnostics;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Reports a missing {@code JdbcTemplate}, {@code JdbcClient}, {@code NamedParameterJdbcTemplate}
 * or single {@code DataSource} when several {@code tandem.datasources} entries are configured and
 * none is primary: Spring Boot then builds none of them (they need a single {@code DataSource}
 * candidate), and its generic advice, "consider defining a bean", hides the fix, naming
 * {@code tandem.datasources.<name>.primary}. Runs before Spring Boot's generic missing-bean
 * analysis; leaves every other missing bean to it.
 *
 * @since 0.1.0
 */
public class NoPrimaryDatabaseFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException>
		implements Ordered {

	/** Beans Spring Boot builds only on a single {@code DataSource} candidate, and that type itself. */
	static final Set<String> SINGLE_DATA_SOURCE_TYPES = Set.of("javax.sql.DataSource",
			"org.springframework.jdbc.core.JdbcTemplate", "org.springframework.jdbc.core.JdbcOperations",
			"org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate",
			"org.springframework.jdbc.core.namedparam.NamedParameterJdbcOperations",
			"org.springframework.jdbc.core.simple.JdbcClient");

	private final Environment environment;

	/**
	 * Creates the analyzer (instantiated by Spring Boot with the failed context's environment).
	 * @param environment the environment
	 */
	public NoPrimaryDatabaseFailureAnalyzer(Environment environment) {
		this.environment = environment;
	}

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
		Class<?> type = cause.getBeanType();
		if (type == null || !SINGLE_DATA_SOURCE_TYPES.contains(type.getName())) {
			return null;
		}
		Binder binder = Binder.get(this.environment);
		List<String> names = new ArrayList<>(binder.bind("tandem.datasources", Bindable.mapOf(String.class, Object.class))
			.orElse(Map.of())
			.keySet());
		if (names.size() < 2 || names.stream()
			.anyMatch((name) -> binder.bind("tandem.datasources." + name + ".primary", Boolean.class).orElse(false))) {
			return null;
		}
		String missing = ((cause instanceof NoUniqueBeanDefinitionException) ? "No single " : "No ") + type.getSimpleName();
		return new FailureAnalysis(missing + " bean: the databases " + names
				+ " are all tandem.datasources entries and none is primary, so Spring Boot has no single DataSource "
				+ "to build its JdbcTemplate, NamedParameterJdbcTemplate and JdbcClient on.",
				"Set tandem.datasources.<name>.primary=true on the database they should use (for example tandem.datasources."
						+ names.get(0) + ".primary=true), or inject the one you mean by its bean name ("
						+ names.stream().map((name) -> name + "DataSource").toList() + ").",
				cause);
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
