package dev.tandem.sample;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.context.annotation.Profile;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

import dev.tandem.autoconfigure.TandemClusters;
import dev.tandem.autoconfigure.transaction.ClusterTransactionalTemplate;
import dev.tandem.transaction.CrossClusterTransactional;

/**
 * The README's database recipe (issue 28), on with the Spring profile {@code ledger}
 * ({@code application-ledger.yml}: {@code tandem.datasources.ledger.*}, a PostgreSQL with
 * {@code max_prepared_transactions} above zero): each payment is a row in table {@code payment}
 * and a record on topic {@value #TOPIC} of east and of west, written in one cross-cluster
 * transaction, so the row never exists without its records nor the records without the row. At
 * start it records {@code ledger.payments} payments (default 10; the tenth of each ten fails after
 * its insert and sends, and leaves neither) and logs what the database and the clusters hold.
 */
@Component
@Profile("ledger")
class PaymentLedger {

	/** The payments topic, on east and on west. */
	static final String TOPIC = "payments";

	private final JdbcTemplate jdbc;

	private final ClusterTransactionalTemplate<String, String> east;

	private final ClusterTransactionalTemplate<String, String> west;

	PaymentLedger(JdbcTemplate jdbc, @Qualifier("eastTandemTemplate") ClusterTransactionalTemplate<String, String> east,
			@Qualifier("westTandemTemplate") ClusterTransactionalTemplate<String, String> west) {
		this.jdbc = jdbc;
		this.east = east;
		this.west = west;
	}

	/**
	 * Records a payment: its row and its two records commit together or not at all.
	 * @param id the payment id
	 * @param cents the amount, in cents
	 */
	@CrossClusterTransactional
	public void record(String id, long cents) {
		this.jdbc.update("INSERT INTO payment (id, cents) VALUES (?, ?)", id, cents);
		String event = "{\"payment\":\"" + id + "\",\"cents\":" + cents + "}";
		this.east.send(TOPIC, id, event);
		this.west.send(TOPIC, id, event);
	}

	/**
	 * As {@link #record}, then fails: the row and the records are rolled back with it.
	 * @param id the payment id
	 * @param cents the amount, in cents
	 */
	@CrossClusterTransactional
	public void recordAndFail(String id, long cents) {
		record(id, cents);
		throw new IllegalStateException("Payment " + id + " refused after its insert and sends");
	}

	/** Creates the table and topics, records the payments, logs the counts. */
	@Component
	@Profile("ledger")
	static class Runner implements ApplicationRunner {

		private static final Logger logger = LoggerFactory.getLogger(PaymentLedger.class);

		private final PaymentLedger ledger;

		private final JdbcTemplate jdbc;

		private final TandemClusters clusters;

		private final int payments;

		Runner(PaymentLedger ledger, JdbcTemplate jdbc, TandemClusters clusters,
				@Value("${ledger.payments:10}") int payments) {
			this.ledger = ledger;
			this.jdbc = jdbc;
			this.clusters = clusters;
			this.payments = payments;
		}

		@Override
		public void run(ApplicationArguments args) throws Exception {
			this.jdbc.execute("CREATE TABLE IF NOT EXISTS payment (id VARCHAR(64) PRIMARY KEY, cents BIGINT NOT NULL)");
			for (String cluster : List.of("east", "west")) {
				createTopic(cluster);
			}
			String run = Long.toString(System.currentTimeMillis(), 36);
			int failed = 0;
			for (int i = 1; i <= this.payments; i++) {
				String id = run + "-" + i;
				if (i % 10 == 0) {
					try {
						this.ledger.recordAndFail(id, 100L * i);
					}
					catch (IllegalStateException expected) {
						failed++;
					}
				}
				else {
					this.ledger.record(id, 100L * i);
				}
			}
			Integer rows = this.jdbc.queryForObject("SELECT count(*) FROM payment WHERE id LIKE ?", Integer.class,
					run + "-%");
			logger.info("Ledger run {}: {} payments recorded, {} refused; {} rows in table payment, and as many "
					+ "records on topic {} of east and of west (read them read_committed)", run, this.payments - failed,
					failed, rows, TOPIC);
		}

		private void createTopic(String cluster) throws InterruptedException, TimeoutException {
			try (Admin admin = Admin.create(this.clusters.adminConfig(cluster))) {
				admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) -1))).all().get(30, TimeUnit.SECONDS);
			}
			catch (ExecutionException ex) {
				if (!(ex.getCause() instanceof TopicExistsException)) {
					throw new IllegalStateException("Cannot create topic " + TOPIC + " on " + cluster, ex.getCause());
				}
			}
		}

	}

}
