package dev.tandem.sample;

import java.nio.file.Path;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Demo settings, each read from a system property or the matching environment variable
 * ({@code tandem.clusters.east.bootstrap-servers} or {@code TANDEM_CLUSTERS_EAST_BOOTSTRAP_SERVERS}).
 *
 * @param eastBootstrapServers bootstrap servers of cluster east; null starts embedded clusters
 * @param westBootstrapServers bootstrap servers of cluster west; null starts embedded clusters
 * @param coordinatorDataDir directory of the embedded coordinator's Raft log
 * @param input path of a flights JSON file; null uses the bundled flights-20k.json
 * @param recordsPerTransaction records consumed per cross-cluster transaction (1 or more)
 * @param moveLeadershipAt transaction number after which leadership on west moves (0 = never)
 * @param crashAt transaction number at which the pipeline stops hard after its decision (0 = never)
 */
record DemoSettings(@Nullable String eastBootstrapServers, @Nullable String westBootstrapServers,
		Path coordinatorDataDir, @Nullable Path input, int recordsPerTransaction, int moveLeadershipAt, int crashAt) {

	static DemoSettings fromEnvironment() {
		String east = get("tandem.clusters.east.bootstrap-servers", null);
		String west = get("tandem.clusters.west.bootstrap-servers", null);
		if ((east == null) != (west == null)) {
			throw new IllegalArgumentException("Set both tandem.clusters.east.bootstrap-servers and "
					+ "tandem.clusters.west.bootstrap-servers (or neither, to use embedded clusters)");
		}
		String dataDir = get("tandem.coordinator.data-dir", "target/tandem-demo/coordinator");
		String input = get("tandem.demo.input", null);
		return new DemoSettings(east, west, Path.of(dataDir), (input != null) ? Path.of(input) : null,
				Math.max(1, positive("tandem.demo.records-per-transaction", 200)),
				positive("tandem.demo.move-leadership-at", 20), positive("tandem.demo.crash-at", 40));
	}

	boolean embedded() {
		return this.eastBootstrapServers == null;
	}

	private static int positive(String name, int fallback) {
		String value = get(name, String.valueOf(fallback));
		try {
			int parsed = Integer.parseInt(value.trim());
			if (parsed < 0) {
				throw new NumberFormatException();
			}
			return parsed;
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException(name + " must be a whole number, 0 or more; got '" + value + "'");
		}
	}

	private static @Nullable String get(String name, @Nullable String fallback) {
		String value = System.getProperty(name);
		if (value == null) {
			value = System.getenv(name.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_'));
		}
		return (value == null || value.isBlank()) ? fallback : value;
	}

}
