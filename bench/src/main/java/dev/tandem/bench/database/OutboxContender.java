package dev.tandem.bench.database;

import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A transactional outbox with a polling relay: the unit of work inserts the row and an outbox row
 * in one database transaction; one relay thread polls the outbox every {@code pollInterval} (at
 * once again while a poll returns a full batch), sends each batch to both clusters with idempotent
 * producers ({@code acks=all}), waits for every acknowledgement, then deletes the batch's outbox
 * rows. At-least-once: a relay that dies between the sends and the delete sends them again.
 */
final class OutboxContender implements Contender {

	static final String NAME = "outbox";

	private static final Logger logger = LoggerFactory.getLogger(OutboxContender.class);

	private static final int BATCH = 500;

	private final String jdbcUrl;

	private final List<Connection> connections = new ArrayList<>();

	private final KafkaProducer<byte[], byte[]> east;

	private final KafkaProducer<byte[], byte[]> west;

	private final Duration pollInterval;

	private final Thread relay;

	private final AtomicLong relayed = new AtomicLong();

	private volatile boolean running = true;

	private volatile @Nullable Throwable relayFailure;

	OutboxContender(Map<String, Map<String, Object>> clusters, String jdbcUrl, int workers, Duration pollInterval)
			throws SQLException {
		this.jdbcUrl = jdbcUrl;
		this.pollInterval = pollInterval;
		try (Connection connection = DriverManager.getConnection(jdbcUrl); Statement statement = connection.createStatement()) {
			statement.execute("CREATE TABLE outbox (seq BIGSERIAL PRIMARY KEY, topic VARCHAR(64) NOT NULL, "
					+ "id VARCHAR(64) NOT NULL, payload BYTEA NOT NULL)");
		}
		for (int worker = 0; worker < workers; worker++) {
			Connection connection = DriverManager.getConnection(jdbcUrl);
			connection.setAutoCommit(false);
			this.connections.add(connection);
		}
		this.east = new KafkaProducer<>(new HashMap<>(clusters.get(DatabaseBench.EAST)), new ByteArraySerializer(),
				new ByteArraySerializer());
		this.west = new KafkaProducer<>(new HashMap<>(clusters.get(DatabaseBench.WEST)), new ByteArraySerializer(),
				new ByteArraySerializer());
		this.relay = new Thread(this::relay, "outbox-relay");
		this.relay.setDaemon(true);
		this.relay.start();
	}

	@Override
	public String name() {
		return NAME;
	}

	@Override
	public void execute(int worker, String id, byte[] payload, Runnable committing) throws SQLException {
		Connection connection = this.connections.get(worker);
		try {
			try (PreparedStatement row = connection.prepareStatement("INSERT INTO " + table() + " (id, payload) VALUES (?, ?)");
					PreparedStatement outbox = connection
						.prepareStatement("INSERT INTO outbox (topic, id, payload) VALUES (?, ?, ?)")) {
				row.setString(1, id);
				row.setBytes(2, payload);
				row.executeUpdate();
				outbox.setString(1, topic());
				outbox.setString(2, id);
				outbox.setBytes(3, payload);
				outbox.executeUpdate();
			}
			committing.run();
			connection.commit();
		}
		catch (SQLException | RuntimeException ex) {
			connection.rollback();
			throw ex;
		}
	}

	@Override
	public long backlog() throws SQLException {
		Throwable failure = this.relayFailure;
		if (failure != null) {
			throw new IllegalStateException("the outbox relay failed", failure);
		}
		try (Connection connection = DriverManager.getConnection(this.jdbcUrl);
				Statement statement = connection.createStatement();
				ResultSet count = statement.executeQuery("SELECT count(*) FROM outbox")) {
			count.next();
			return count.getLong(1);
		}
	}

	/** Returns how many outbox rows the relay has sent (to both clusters) and deleted. */
	long relayed() {
		return this.relayed.get();
	}

	private void relay() {
		try (Connection connection = DriverManager.getConnection(this.jdbcUrl)) {
			connection.setAutoCommit(false);
			while (this.running) {
				int sent = relayOnce(connection);
				if (sent < BATCH) {
					Thread.sleep(this.pollInterval.toMillis());
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (Exception ex) {
			if (this.running) {
				logger.error("The outbox relay failed", ex);
				this.relayFailure = ex;
			}
		}
	}

	private int relayOnce(Connection connection) throws Exception {
		List<Long> sequences = new ArrayList<>();
		List<Future<RecordMetadata>> sends = new ArrayList<>();
		try (PreparedStatement select = connection
			.prepareStatement("SELECT seq, topic, id, payload FROM outbox ORDER BY seq LIMIT " + BATCH);
				ResultSet rows = select.executeQuery()) {
			while (rows.next()) {
				sequences.add(rows.getLong(1));
				byte[] key = rows.getString(3).getBytes(StandardCharsets.UTF_8);
				byte[] payload = rows.getBytes(4);
				sends.add(this.east.send(new ProducerRecord<>(rows.getString(2), key, payload)));
				sends.add(this.west.send(new ProducerRecord<>(rows.getString(2), key, payload)));
			}
		}
		connection.commit();
		if (sequences.isEmpty()) {
			return 0;
		}
		for (Future<RecordMetadata> send : sends) {
			send.get();
		}
		// by sequence number, never "up to the highest": a row of a lower number may commit later
		try (PreparedStatement delete = connection.prepareStatement("DELETE FROM outbox WHERE seq = ANY (?)")) {
			Array numbers = connection.createArrayOf("bigint", sequences.toArray());
			delete.setArray(1, numbers);
			delete.executeUpdate();
		}
		connection.commit();
		this.relayed.addAndGet(sequences.size());
		return sequences.size();
	}

	@Override
	public void close() throws Exception {
		this.running = false;
		this.relay.interrupt();
		this.relay.join(10_000);
		this.east.close();
		this.west.close();
		for (Connection connection : this.connections) {
			connection.close();
		}
	}

}
