package dev.tandem.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Maps an airport (IATA code) to the cluster of its region: airports in the states of the
 * Pacific and Mountain time zones (plus Alaska and Hawaii) go to {@code west}, all others to
 * {@code east}. Built from the shipped {@code data/airports.csv}.
 */
final class Regions {

	static final String EAST = "east";

	static final String WEST = "west";

	private static final Set<String> WEST_STATES = Set.of("WA", "OR", "CA", "NV", "ID", "MT", "WY", "UT", "CO",
			"AZ", "NM", "AK", "HI");

	private final Map<String, String> stateByAirport;

	private Regions(Map<String, String> stateByAirport) {
		this.stateByAirport = stateByAirport;
	}

	static Regions load() {
		try (InputStream in = Objects.requireNonNull(Regions.class.getResourceAsStream("/data/airports.csv"),
				"data/airports.csv missing");
				BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
			Map<String, String> states = new HashMap<>();
			String header = reader.readLine();
			if (header == null || !header.startsWith("iata,name,city,state")) {
				throw new IllegalStateException("Unexpected airports.csv header: " + header);
			}
			String line;
			while ((line = reader.readLine()) != null) {
				String[] fields = splitCsv(line);
				if (fields.length >= 4) {
					states.put(fields[0], fields[3]);
				}
			}
			return new Regions(states);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Returns the cluster for a flight leaving the given airport.
	 * @param airport IATA code
	 * @return {@link #EAST} or {@link #WEST}
	 * @throws IllegalArgumentException if the airport is not in the list
	 */
	String clusterOf(String airport) {
		String state = this.stateByAirport.get(airport);
		if (state == null) {
			throw new IllegalArgumentException("Unknown airport " + airport);
		}
		return WEST_STATES.contains(state) ? WEST : EAST;
	}

	private static String[] splitCsv(String line) {
		java.util.List<String> fields = new java.util.ArrayList<>();
		StringBuilder field = new StringBuilder();
		boolean quoted = false;
		for (int i = 0; i < line.length(); i++) {
			char c = line.charAt(i);
			if (c == '"') {
				quoted = !quoted;
			}
			else if (c == ',' && !quoted) {
				fields.add(field.toString());
				field.setLength(0);
			}
			else {
				field.append(c);
			}
		}
		fields.add(field.toString());
		return fields.toArray(String[]::new);
	}

}
