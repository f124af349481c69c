package dev.tandem.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.test.Directories;

/**
 * What the benchmarks' command lines and clean-up share: {@code --name value} options,
 * durations such as {@code 500ms} or {@code 10s}, deleting a scratch directory, and printing and
 * writing a report.
 *
 * @since 0.1.0
 */
public final class BenchOptions {

	private static final Logger logger = LoggerFactory.getLogger(BenchOptions.class);

	private BenchOptions() {
	}

	/**
	 * Reads {@code --name value} pairs, in order.
	 * @param args the command line
	 * @return the options by name (without the dashes)
	 * @throws IllegalArgumentException if an argument is not such a pair
	 */
	public static Map<String, String> parse(String[] args) {
		Map<String, String> options = new LinkedHashMap<>();
		for (int i = 0; i < args.length; i += 2) {
			if (!args[i].startsWith("--")) {
				throw new IllegalArgumentException("Expected --name value pairs, got '" + args[i] + "'");
			}
			if (i + 1 == args.length) {
				throw new IllegalArgumentException("Expected --name value pairs, got a lone '" + args[i] + "'");
			}
			options.put(args[i].substring(2), args[i + 1]);
		}
		return options;
	}

	/**
	 * Splits a {@code --contenders} list at the commas outside brackets: commas inside brackets
	 * belong to a contender's settings ({@code tandem[depth=4,growth=2],alo-async}).
	 * @param text the list
	 * @return the non-empty specs, trimmed, in order
	 */
	public static List<String> specs(String text) {
		List<String> specs = new ArrayList<>();
		int depth = 0;
		int start = 0;
		for (int i = 0; i <= text.length(); i++) {
			char c = (i < text.length()) ? text.charAt(i) : ',';
			if (c == '[') {
				depth++;
			}
			else if (c == ']') {
				depth--;
			}
			else if (c == ',' && depth == 0) {
				String spec = text.substring(start, i).trim();
				if (!spec.isEmpty()) {
					specs.add(spec);
				}
				start = i + 1;
			}
		}
		return specs;
	}

	/**
	 * Parses a contender's settings, {@code key=value,key=value}; blank pairs (a trailing comma)
	 * are skipped.
	 * @param text the pairs
	 * @param where the option, for the error message
	 * @return the pairs, in order
	 * @throws IllegalArgumentException if a pair has no {@code =} or no key
	 */
	public static Map<String, String> pairs(String text, String where) {
		Map<String, String> pairs = new LinkedHashMap<>();
		for (String pair : text.split(",")) {
			if (pair.isBlank()) {
				continue;
			}
			int equals = pair.indexOf('=');
			if (equals < 1) {
				throw new IllegalArgumentException(where + " takes key=value pairs, not '" + pair + "'");
			}
			pairs.put(pair.substring(0, equals).trim(), pair.substring(equals + 1).trim());
		}
		return pairs;
	}

	/**
	 * Reads a duration in milliseconds ({@code 500ms}) or seconds ({@code 10s} or {@code 10}).
	 * @param text the text
	 * @return the duration
	 * @throws NumberFormatException if the number is not a whole number
	 */
	public static Duration duration(String text) {
		String trimmed = text.trim();
		if (trimmed.endsWith("ms")) {
			return Duration.ofMillis(Long.parseLong(trimmed.substring(0, trimmed.length() - 2)));
		}
		return Duration.ofSeconds(Long.parseLong(trimmed.endsWith("s") ? trimmed.substring(0, trimmed.length() - 1)
				: trimmed));
	}

	/**
	 * Deletes a directory and everything in it; logs a WARN if that fails.
	 * @param directory the directory
	 */
	public static void deleteRecursively(Path directory) {
		try {
			Directories.deleteRecursively(directory);
		}
		catch (IOException ex) {
			logger.warn("Could not delete {}: {}", directory, ex.toString());
		}
	}

	/**
	 * Prints a bench's report to stdout and writes it to a file (its directory created if
	 * missing), then says where.
	 * @param report the report
	 * @param file where it goes
	 * @throws IOException if the file cannot be written
	 */
	public static void printAndWrite(String report, Path file) throws IOException {
		System.out.println(report);
		Path parent = file.toAbsolutePath().getParent();
		if (parent != null) {
			Files.createDirectories(parent);
		}
		Files.writeString(file, report, StandardCharsets.UTF_8);
		System.out.println("Report written to " + file.toAbsolutePath());
	}

}
