package dev.tandem.sample;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

import dev.tandem.test.ReadCommitted;

/**
 * The chaos suite's check of a run whose router writes a row per routed flight
 * ({@link FlightLedger}): reads the run's output on both clusters ({@code read_committed}) and its
 * rows, and counts, per flight ({@code seq}) and cluster, rows without their record, records
 * without their row, rows and records beyond one, and input flights with neither. Facts, by name:
 * {@value #ROWS}, {@value #ROWS_WITHOUT_RECORDS}, {@value #RECORDS_WITHOUT_ROWS},
 * {@value #DUPLICATE_ROWS}, {@value #DUPLICATE_RECORDS}, {@value #MISSING}, and per transaction (the
 * records' {@code flights-txn} header against the rows' {@code transaction_id}: a transaction
 * whose records committed and whose rows did not, or the reverse, even where a redelivery wrote
 * the flight again) {@value #TORN_RECORDS}, {@value #TORN_ROWS}; their sum is {@link #anomalies()}.
 * {@value #PREPARED} is informative.
 */
final class DatabaseCheck {

	static final String ROWS = "database rows";

	static final String ROWS_WITHOUT_RECORDS = "rows without records";

	static final String RECORDS_WITHOUT_ROWS = "records without rows";

	static final String DUPLICATE_ROWS = "duplicate rows";

	static final String DUPLICATE_RECORDS = "duplicate records";

	static final String MISSING = "flights with neither row nor record";

	/** Records whose transaction (header {@code flights-txn}) wrote no row for their flight: a torn transaction. */
	static final String TORN_RECORDS = "records without their transaction's row";

	/** Rows whose transaction ({@code transaction_id}) wrote no record for their flight: a torn transaction. */
	static final String TORN_ROWS = "rows without their transaction's record";

	/** Branches prepared and never ended, in the whole database (informative: earlier runs' count too). */
	static final String PREPARED = "prepared branches in the database";

	private static final ObjectMapper JSON = JsonMapper.builder().build();

	private static final Duration READ_TIMEOUT = Duration.ofMinutes(2);

	private final Map<String, Object> facts = new LinkedHashMap<>();

	/** The transactions whose records or rows are torn, by id, with how many of each. */
	private final Map<String, String> torn = new java.util.TreeMap<>();

	/**
	 * Runs the check.
	 * @param bootstrapServers each cluster's bootstrap servers, by name
	 * @param runId the run's id (rows and records of other runs are ignored)
	 * @param outputTopic the output topic, on every cluster
	 * @param jdbcUrl the database
	 * @param flights the input flights the run committed ({@code seq} 0 to {@code flights - 1})
	 * @throws SQLException if the rows cannot be read
	 */
	DatabaseCheck(Map<String, String> bootstrapServers, String runId, String outputTopic, String jdbcUrl, long flights)
			throws SQLException {
		// seq -> cluster -> count
		Map<Long, Map<String, Integer>> records = new HashMap<>();
		java.util.Set<String> recordsByTransaction = new java.util.HashSet<>();
		bootstrapServers.forEach((cluster, bootstrap) -> {
			for (ConsumerRecord<byte[], byte[]> record : ReadCommitted.records(bootstrap, outputTopic, READ_TIMEOUT)) {
				JsonNode value = JSON.readTree(record.value());
				if (runId.equals(value.path("runId").asString(""))) {
					records.computeIfAbsent(value.path("seq").asLong(-1), (s) -> new HashMap<>()).merge(cluster, 1, Integer::sum);
					org.apache.kafka.common.header.Header transaction = record.headers()
						.lastHeader(FlightRouterApplication.TRANSACTION_HEADER);
					String id = (transaction != null) ? new String(transaction.value(), java.nio.charset.StandardCharsets.UTF_8) : "";
					recordsByTransaction.add(id + "/" + value.path("seq").asLong(-1));
				}
			}
		});
		Map<Long, Map<String, Integer>> rows = new HashMap<>();
		java.util.Set<String> rowsByTransaction = new java.util.HashSet<>();
		long rowCount = 0;
		long prepared;
		try (Connection connection = DriverManager.getConnection(jdbcUrl);
				PreparedStatement select = connection.prepareStatement("SELECT seq, cluster, count(*) FROM "
						+ FlightLedger.TABLE + " WHERE run_id = ? GROUP BY seq, cluster")) {
			select.setString(1, runId);
			try (ResultSet result = select.executeQuery()) {
				while (result.next()) {
					rows.computeIfAbsent(result.getLong(1), (s) -> new HashMap<>()).put(result.getString(2), result.getInt(3));
					rowCount += result.getInt(3);
				}
			}
			try (PreparedStatement byTransaction = connection
				.prepareStatement("SELECT transaction_id, seq FROM " + FlightLedger.TABLE + " WHERE run_id = ?")) {
				byTransaction.setString(1, runId);
				try (ResultSet result = byTransaction.executeQuery()) {
					while (result.next()) {
						rowsByTransaction.add(result.getString(1) + "/" + result.getLong(2));
					}
				}
			}
			try (PreparedStatement count = connection.prepareStatement("SELECT count(*) FROM pg_prepared_xacts");
					ResultSet result = count.executeQuery()) {
				result.next();
				prepared = result.getLong(1);
			}
		}
		long rowsWithoutRecords = 0;
		long recordsWithoutRows = 0;
		long duplicateRows = 0;
		long duplicateRecords = 0;
		for (Map.Entry<Long, Map<String, Integer>> row : rows.entrySet()) {
			Map<String, Integer> recordsOfFlight = records.getOrDefault(row.getKey(), Map.of());
			for (Map.Entry<String, Integer> perCluster : row.getValue().entrySet()) {
				if (recordsOfFlight.getOrDefault(perCluster.getKey(), 0) == 0) {
					rowsWithoutRecords += perCluster.getValue();
				}
			}
			duplicateRows += row.getValue().values().stream().mapToInt(Integer::intValue).sum() - 1;
		}
		for (Map.Entry<Long, Map<String, Integer>> record : records.entrySet()) {
			Map<String, Integer> rowsOfFlight = rows.getOrDefault(record.getKey(), Map.of());
			for (Map.Entry<String, Integer> perCluster : record.getValue().entrySet()) {
				if (rowsOfFlight.getOrDefault(perCluster.getKey(), 0) == 0) {
					recordsWithoutRows += perCluster.getValue();
				}
			}
			duplicateRecords += record.getValue().values().stream().mapToInt(Integer::intValue).sum() - 1;
		}
		long missing = 0;
		for (long seq = 0; seq < flights; seq++) {
			if (!rows.containsKey(seq) && !records.containsKey(seq)) {
				missing++;
			}
		}
		this.facts.put(ROWS, rowCount);
		this.facts.put(ROWS_WITHOUT_RECORDS, rowsWithoutRecords);
		this.facts.put(RECORDS_WITHOUT_ROWS, recordsWithoutRows);
		this.facts.put(DUPLICATE_ROWS, duplicateRows);
		this.facts.put(DUPLICATE_RECORDS, duplicateRecords);
		this.facts.put(MISSING, missing);
		recordsByTransaction.stream().filter((key) -> !rowsByTransaction.contains(key))
			.forEach((key) -> this.torn.merge(key.substring(0, key.lastIndexOf('/')), "records", (a, b) -> a));
		rowsByTransaction.stream().filter((key) -> !recordsByTransaction.contains(key))
			.forEach((key) -> this.torn.merge(key.substring(0, key.lastIndexOf('/')), "rows", (a, b) -> a.equals(b) ? a : "both"));
		this.facts.put(TORN_RECORDS, recordsByTransaction.stream().filter((key) -> !rowsByTransaction.contains(key)).count());
		this.facts.put(TORN_ROWS, rowsByTransaction.stream().filter((key) -> !recordsByTransaction.contains(key)).count());
		this.facts.put(PREPARED, prepared);
	}

	/** Returns the facts, by name. */
	Map<String, Object> facts() {
		return this.facts;
	}

	/** Returns the torn transactions by id: what of theirs is missing its counterpart (records, rows, both). */
	Map<String, String> torn() {
		return this.torn;
	}

	/** Returns the sum of every anomaly counted (0 for an atomic run). */
	long anomalies() {
		return this.facts.entrySet().stream()
			.filter((fact) -> !fact.getKey().equals(ROWS) && !fact.getKey().equals(PREPARED))
			.mapToLong((fact) -> ((Number) fact.getValue()).longValue())
			.sum();
	}

}
