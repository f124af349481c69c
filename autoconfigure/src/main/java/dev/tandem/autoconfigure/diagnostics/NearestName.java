package dev.tandem.autoconfigure.diagnostics;

import java.util.Collection;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The known name a misspelt one most likely meant, by Levenshtein distance: the "did you mean"
 * of start-up failures ({@code bootstrap-server} for {@code bootstrap-servers},
 * {@code maximum-pool-sise} for {@code maximum-pool-size}). Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class NearestName {

	private NearestName() {
	}

	/**
	 * Returns the known name nearest to the written one, if it is close enough.
	 * @param written the name as written, compared case-insensitively
	 * @param known the names that exist
	 * @param maxDistance the largest edit distance still taken for a typo, at least 0
	 * @return the nearest known name within {@code maxDistance} (the first of equals in
	 *     iteration order), or null if none is
	 */
	public static @Nullable String nearest(String written, Collection<String> known, int maxDistance) {
		String best = null;
		int bestDistance = Integer.MAX_VALUE;
		for (String candidate : known) {
			int distance = distance(written, candidate);
			if (distance < bestDistance && distance <= maxDistance) {
				best = candidate;
				bestDistance = distance;
			}
		}
		return best;
	}

	/**
	 * Returns the Levenshtein distance of two names, case-insensitive.
	 * @param a one name
	 * @param b the other
	 * @return the insertions, deletions and substitutions that turn one into the other, 0 or more
	 */
	public static int distance(String a, String b) {
		String x = a.toLowerCase(Locale.ROOT);
		String y = b.toLowerCase(Locale.ROOT);
		int[] previous = new int[y.length() + 1];
		int[] current = new int[y.length() + 1];
		for (int j = 0; j <= y.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= x.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= y.length(); j++) {
				int substitution = previous[j - 1] + ((x.charAt(i - 1) == y.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[y.length()];
	}

}
