package dev.tandem.text;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Writes a duration the way people write it in {@code application.yml}: one number and the
 * largest unit that holds it exactly ({@code 5s}, {@code 1500ms}, {@code 15m}, {@code -5s}), so
 * that a message can be copied back into a property; never ISO-8601's {@code PT-5S}. Every Tandem
 * module writes durations in log lines and error messages with it.
 *
 * @since 0.1.0
 */
public final class DurationText {

	private static final long[] UNIT_NANOS = { 86_400_000_000_000L, 3_600_000_000_000L, 60_000_000_000L,
			1_000_000_000L, 1_000_000L, 1_000L, 1L };

	private static final String[] UNITS = { "d", "h", "m", "s", "ms", "us", "ns" };

	private DurationText() {
	}

	/**
	 * Returns the duration as Spring Boot's simple duration format writes it.
	 * @param duration the duration, or null
	 * @return for example {@code 5s}, {@code 0s}, {@code -300ms}; {@code "empty"} for null
	 */
	public static String of(@Nullable Duration duration) {
		if (duration == null) {
			return "empty";
		}
		if (duration.isZero()) {
			return "0s";
		}
		String sign = duration.isNegative() ? "-" : "";
		Duration magnitude = duration.abs();
		long seconds = magnitude.getSeconds();
		int nanos = magnitude.getNano();
		for (int i = 0; i < UNITS.length; i++) {
			long unit = UNIT_NANOS[i];
			if (unit >= 1_000_000_000L) {
				long unitSeconds = unit / 1_000_000_000L;
				if (nanos == 0 && seconds % unitSeconds == 0) {
					return sign + (seconds / unitSeconds) + UNITS[i];
				}
			}
			else if (seconds <= Long.MAX_VALUE / (1_000_000_000L / unit) && nanos % unit == 0) {
				return sign + (seconds * (1_000_000_000L / unit) + nanos / unit) + UNITS[i];
			}
		}
		return sign + magnitude;
	}

}
