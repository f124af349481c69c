package dev.tandem.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Real record values: the objects of a JSON array of flights
 * ({@code [{"delay":0,"distance":1452,"time":0.0},...]}), read at run time and never copied.
 * Only kafka-clients-independent JDK code, so the legacy producer JVM can use it too.
 *
 * @author Tandem
 * @since 0.1.0
 */
public final class FlightRecords {

	/** The repository's 20,000 real flights, relative to its root. */
	public static final String BUNDLED = "sample-app/src/main/resources/data/flights-20k.json";

	private final List<String> values;

	private FlightRecords(List<String> values) {
		this.values = values;
	}

	/**
	 * The flights file a bench reads: the one given, else the repository's {@link #BUNDLED} one,
	 * from the repository root or a module directory.
	 * @param given the {@code --data} option, or {@code null}
	 * @return the path
	 * @throws IllegalArgumentException if nothing was given and the bundled file is not found
	 */
	public static Path locate(@Nullable String given) {
		if (given != null) {
			return Path.of(given);
		}
		for (String candidate : List.of(BUNDLED, "../" + BUNDLED)) {
			if (Files.isRegularFile(Path.of(candidate))) {
				return Path.of(candidate);
			}
		}
		throw new IllegalArgumentException("--data: " + BUNDLED
				+ " not found from here; run from the repository root or pass --data <flights JSON file>");
	}

	/**
	 * Read the flights file.
	 * @param path a JSON array of flat objects
	 * @return the records, at least one
	 * @throws IOException if the file cannot be read
	 * @throws IllegalArgumentException if it holds no object
	 */
	public static FlightRecords read(Path path) throws IOException {
		String json = Files.readString(path, StandardCharsets.UTF_8);
		List<String> values = new ArrayList<>();
		int start = -1;
		for (int i = 0; i < json.length(); i++) {
			char c = json.charAt(i);
			if (c == '{') {
				start = i;
			}
			else if (c == '}' && start >= 0) {
				values.add(json.substring(start, i + 1));
				start = -1;
			}
		}
		if (values.isEmpty()) {
			throw new IllegalArgumentException("No JSON object in " + path);
		}
		return new FlightRecords(values);
	}

	/**
	 * Return the value for the n-th record sent, cycling through the file.
	 * @param n the record number, 0 or more
	 * @return a JSON object
	 */
	public String value(long n) {
		return this.values.get((int) (n % this.values.size()));
	}

	/**
	 * Return the number of flights in the file.
	 * @return 1 or more
	 */
	public int size() {
		return this.values.size();
	}

}
