package dev.tandem.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The share of CPU time the machine's hypervisor gave to other guests ("steal", the eighth
 * column of the {@code cpu} line of Linux's {@code /proc/stat}) between two samples: a virtual
 * machine's noise that load average does not show, so that a bench report can say how much of
 * a slow run was the host's. Not thread-safe; a sample is immutable.
 *
 * @param steal steal ticks since boot, all CPUs
 * @param total ticks of every state since boot, all CPUs
 * @since 0.1.0
 */
public record CpuSteal(long steal, long total) {

	private static final Path PROC_STAT = Path.of("/proc/stat");

	/**
	 * Samples the counters.
	 * @return the sample, or {@code null} where {@code /proc/stat} is not there or not readable
	 */
	public static @Nullable CpuSteal sample() {
		try {
			List<String> lines = Files.readAllLines(PROC_STAT);
			for (String line : lines) {
				if (line.startsWith("cpu ")) {
					return parse(line);
				}
			}
			return null;
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
	}

	/**
	 * Parses the aggregate {@code cpu} line of {@code /proc/stat}.
	 * @param line for example {@code cpu  45625 0 21768 194902 419 0 2701 2625 0 0}
	 * @return the steal ticks and the sum of the first eight states
	 * @throws IllegalArgumentException if the line has fewer than eight counters
	 */
	static CpuSteal parse(String line) {
		String[] fields = line.trim().split("\\s+");
		if (fields.length < 9) {
			throw new IllegalArgumentException("Not a /proc/stat cpu line with a steal column: " + line);
		}
		long total = 0;
		for (int i = 1; i <= 8; i++) {
			total += Long.parseLong(fields[i]);
		}
		return new CpuSteal(Long.parseLong(fields[8]), total);
	}

	/**
	 * Describes the steal between two samples.
	 * @param before the earlier sample, or {@code null}
	 * @param after the later sample, or {@code null}
	 * @return for example {@code "7.3 % of CPU time (/proc/stat steal)"}, or {@code "unknown"}
	 */
	public static String between(@Nullable CpuSteal before, @Nullable CpuSteal after) {
		if (before == null || after == null || after.total <= before.total) {
			return "unknown (no /proc/stat)";
		}
		return String.format(Locale.ROOT, "%.1f %% of CPU time (/proc/stat steal)",
				100.0 * (after.steal - before.steal) / (after.total - before.total));
	}

}
