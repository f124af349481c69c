package dev.tandem.bench.database;

import java.util.Map;

import org.HdrHistogram.Histogram;

/**
 * One way to insert a row and send a record to clusters {@code east} and {@code west} as one unit
 * of work. Its rows go to its own table ({@code orders_<name>}), its records to its own topic
 * ({@code db-<name>}) on both clusters.
 */
interface Contender extends AutoCloseable {

	/** Returns the contender's name, as listed in {@code --contenders}. */
	String name();

	/** Returns its table. */
	default String table() {
		return "orders_" + name().replace('-', '_');
	}

	/** Returns its topic, on both clusters. */
	default String topic() {
		return "db-" + name();
	}

	/**
	 * Inserts the row {@code (id, payload)} and sends the record (key {@code id}, value
	 * {@code payload}) to both clusters, then commits; calls {@code committing} just before the
	 * commit (the first commit call where there are several). Called by worker {@code worker}
	 * only ({@code 0 <= worker < concurrency}), so a worker's resources need no locking.
	 * @throws Exception if the unit of work failed (the caller counts it as failed)
	 */
	void execute(int worker, String id, byte[] payload, Runnable committing) throws Exception;

	/**
	 * Returns how many committed rows still wait to be sent (the outbox's backlog), 0 where the
	 * records are sent by the unit of work itself.
	 * @throws Exception if the database cannot be read
	 */
	default long backlog() throws Exception {
		return 0;
	}

	/**
	 * Returns the time spent in each phase of the commit call, µs per unit, by phase name in
	 * commit order (empty where the commit is one call). Read after the workers stopped.
	 */
	default Map<String, Histogram> phases() {
		return Map.of();
	}

}
