package dev.tandem.sample;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A JVM started ahead of time that becomes the flight router when told to: reads the router's
 * arguments from standard input, one a line, up to a line {@code go}, then runs
 * {@link FlightRouterApplication#main}. The chaos suite launches it while the previous step of a
 * run is still going, so the JVM's own start-up is off the run's critical path; nothing of
 * Kafka, Tandem or the coordinator exists in it before {@code go}. Exits quietly if standard
 * input closes first.
 */
public final class RouterStandby {

	private RouterStandby() {
	}

	public static void main(String[] args) throws Exception {
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		List<String> routerArgs = new ArrayList<>();
		String line;
		while ((line = in.readLine()) != null) {
			if (line.equals("go")) {
				FlightRouterApplication.main(routerArgs.toArray(String[]::new));
				return;
			}
			routerArgs.add(line);
		}
	}

}
