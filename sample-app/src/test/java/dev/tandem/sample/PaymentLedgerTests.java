package dev.tandem.sample;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's database recipe as the sample runs it ({@code --spring.profiles.active=ledger}):
 * ten payments, the tenth refused after its insert and sends; nine rows in PostgreSQL and the same
 * nine records on east and on west, nothing of the tenth anywhere. A real PostgreSQL started by the
 * test, real clusters.
 */
class PaymentLedgerTests {

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	@TempDir
	Path dataDir;

	@Test
	void everyPaymentIsARowAndARecordOnEachClusterOrNothing() throws IOException {
		try (EmbeddedPostgres postgres = EmbeddedPostgres.builder()
			.setServerConfig("max_prepared_transactions", "10")
			.start();
				ConfigurableApplicationContext context = new SpringApplicationBuilder(FlightRouterApplication.class)
					.web(WebApplicationType.NONE)
					.profiles("ledger")
					.run(arguments(postgres))) {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			List<String> rows = jdbc.queryForList("SELECT id FROM payment ORDER BY cents", String.class);
			assertThat(rows).hasSize(9).noneMatch((id) -> id.endsWith("-10"));
			for (String cluster : List.of("east", "west")) {
				assertThat(ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), PaymentLedger.TOPIC))
					.hasSize(9)
					.allMatch((value) -> rows.stream().anyMatch((id) -> value.contains("\"" + id + "\"")));
			}
			assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_prepared_xacts", Integer.class)).isZero();
		}
	}

	/** Command-line arguments: they win over application.yml and application-ledger.yml. */
	private String[] arguments(EmbeddedPostgres postgres) {
		List<String> arguments = new ArrayList<>();
		kafka.clusters().tandemProperties().forEach((key, value) -> arguments.add("--" + key + "=" + value));
		arguments.addAll(List.of("--tandem.datasources.ledger.url=" + postgres.getJdbcUrl("postgres", "postgres"),
				"--tandem.transaction.instance-id=ledger-0", "--flights.input-topic=ledger-test-flights",
				"--tandem.coordinator.data-dir=" + this.dataDir.resolve("coordinator"), "--ledger.payments=10"));
		return arguments.toArray(String[]::new);
	}

}
