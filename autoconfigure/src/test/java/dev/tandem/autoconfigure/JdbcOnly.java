package dev.tandem.autoconfigure;

/**
 * The auto-configurations that test applications of JDBC alone exclude: Hibernate is on the test
 * class path for {@code CrossClusterJpaTests}, and with it Spring Boot would build an entity
 * manager factory (and Tandem a JPA transaction manager) on every test's database.
 */
final class JdbcOnly {

	static final String HIBERNATE = "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration";

	static final String DATA_JPA = "org.springframework.boot.data.jpa.autoconfigure.DataJpaRepositoriesAutoConfiguration";

	private JdbcOnly() {
	}

}
