package dev.tandem.coordinator.state;

import java.util.List;
import java.util.NavigableMap;
import java.util.Objects;

/**
 * What one authenticated caller may act for: the owners whose id starts with one of its id
 * prefixes, and, for an admin, every owner and administrative operation (purge, settle).
 * <p>
 * The leader resolves a caller's grant once, when it accepts the caller's command, and writes
 * it into the log entry with the command, so every replica applies the same command with the
 * same grant whatever its own configuration (a replayed log never depends on today's
 * policy). Immutable and thread-safe.
 *
 * @param identity who the grant was resolved for (a certificate's common name), for logs
 * @param admin whether the caller may act for every owner and run administrative operations
 * @param ownerPrefixes the id prefixes ({@code tandem.transaction.id-prefix} values) of the
 *     owners the caller may act for: prefix {@code orders} covers owner {@code orders} and
 *     every owner starting with {@code orders.}
 * @since 0.1.0
 */
public record Grant(String identity, boolean admin, List<String> ownerPrefixes) {

	/** The grant of every caller when authorization is off (plain text explicitly allowed). */
	public static final Grant ALL = new Grant("*", true, List.of());

	public Grant {
		Objects.requireNonNull(identity, "identity");
		ownerPrefixes = List.copyOf(ownerPrefixes);
	}

	/**
	 * Returns a grant that allows nothing, for a caller no policy entry names.
	 * @param identity the caller's identity
	 * @return the grant
	 */
	public static Grant none(String identity) {
		return new Grant(identity, false, List.of());
	}

	/**
	 * Returns whether this grant allows acting for an owner.
	 * @param owner the owner id
	 * @return whether it is covered
	 */
	public boolean coversOwner(String owner) {
		if (this.admin) {
			return true;
		}
		for (String prefix : this.ownerPrefixes) {
			if (owner.equals(prefix) || (owner.startsWith(prefix) && owner.charAt(prefix.length()) == '.')) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Returns whether this is {@link #ALL} (authorization off).
	 * @return whether every caller has this grant
	 */
	public boolean isAll() {
		return this.equals(ALL);
	}

	/**
	 * Returns the owners strictly below a prefix ({@code <prefix>.*}); {@link #coversOwner} covers
	 * the prefix itself too.
	 * @param <V> the value type
	 * @param byOwner a map sorted by owner id
	 * @param prefix the owner prefix
	 * @return a view of the owners below the prefix
	 */
	static <V> NavigableMap<String, V> ownersBelow(NavigableMap<String, V> byOwner, String prefix) {
		return byOwner.subMap(prefix + ".", true, prefix + "/", false);
	}

}
