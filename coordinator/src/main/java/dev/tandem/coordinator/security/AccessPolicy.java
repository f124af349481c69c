package dev.tandem.coordinator.security;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import dev.tandem.coordinator.state.Grant;
import org.jspecify.annotations.Nullable;

/**
 * Who may do what on a coordinator, by certificate identity (the subject's common name of the
 * caller's TLS client certificate), in the manner of etcd's per-key-range roles:
 * <ul>
 * <li><b>peers</b> may replicate the log (Raft's peer-to-peer service) and are admins;</li>
 * <li><b>admins</b> may act for every owner, run administrative operations (purge, settle)
 * and use Ratis' admin service (membership, snapshots, leadership transfer);</li>
 * <li><b>apps</b> may act for the owners whose id starts with one of their id prefixes
 * ({@code tandem.transaction.id-prefix}); an identity not named here may do nothing.</li>
 * </ul>
 * {@link #open()} is the policy of a coordinator without TLS: every caller may do everything.
 * <p>
 * Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class AccessPolicy {

	private static final AccessPolicy OPEN = new AccessPolicy(true, Set.of(), Set.of(), Map.of());

	private final boolean open;

	private final Set<String> peers;

	private final Set<String> admins;

	private final Map<String, List<String>> apps;

	private AccessPolicy(boolean open, Set<String> peers, Set<String> admins, Map<String, List<String>> apps) {
		this.open = open;
		this.peers = Set.copyOf(peers);
		this.admins = Set.copyOf(admins);
		this.apps = Map.copyOf(apps);
	}

	/**
	 * Returns the policy that allows every caller everything (a coordinator without TLS).
	 * @return the open policy
	 */
	public static AccessPolicy open() {
		return OPEN;
	}

	/**
	 * Starts a policy that allows nothing but what is added.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Returns whether this is the {@link #open()} policy.
	 * @return whether every caller may do everything
	 */
	public boolean isOpen() {
		return this.open;
	}

	/**
	 * Returns whether an identity is one of the peers.
	 * @param identity the caller's identity, or {@code null} when unauthenticated
	 * @return whether it may replicate the log
	 */
	public boolean isPeer(@Nullable String identity) {
		return this.open || (identity != null && this.peers.contains(identity));
	}

	/**
	 * Returns whether an identity is an admin (peers are).
	 * @param identity the caller's identity, or {@code null} when unauthenticated
	 * @return whether it may run administrative operations
	 */
	public boolean isAdmin(@Nullable String identity) {
		return this.open || (identity != null && (this.admins.contains(identity) || this.peers.contains(identity)));
	}

	/**
	 * Resolves what a caller may act for.
	 * @param identity the caller's identity, or {@code null} when unauthenticated
	 * @return the grant; {@link Grant#ALL} for the open policy, a grant of nothing for an
	 *     identity this policy does not name
	 */
	public Grant grantFor(@Nullable String identity) {
		if (this.open) {
			return Grant.ALL;
		}
		String name = (identity != null) ? identity : "(unauthenticated)";
		if (isAdmin(identity)) {
			return new Grant(name, true, List.of());
		}
		List<String> prefixes = (identity != null) ? this.apps.get(identity) : null;
		return (prefixes != null) ? new Grant(name, false, prefixes) : Grant.none(name);
	}

	/**
	 * Returns the peer identities.
	 * @return the identities
	 */
	public Set<String> peers() {
		return this.peers;
	}

	/**
	 * Returns the admin identities.
	 * @return the identities
	 */
	public Set<String> admins() {
		return this.admins;
	}

	/**
	 * Returns the app identities and the id prefixes each may act for.
	 * @return the identities and prefixes
	 */
	public Map<String, List<String>> apps() {
		return this.apps;
	}

	@Override
	public String toString() {
		return this.open ? "AccessPolicy[open]"
				: "AccessPolicy[peers=" + this.peers + ", admins=" + this.admins + ", apps=" + this.apps + "]";
	}

	/**
	 * Builds an {@link AccessPolicy}.
	 *
	 * @since 0.1.0
	 */
	public static final class Builder {

		private final Set<String> peers = new LinkedHashSet<>();

		private final Set<String> admins = new LinkedHashSet<>();

		private final Map<String, List<String>> apps = new LinkedHashMap<>();

		private Builder() {
		}

		/**
		 * Adds peer identities.
		 * @param identities the peers' certificate common names
		 * @return this builder
		 */
		public Builder peers(Collection<String> identities) {
			identities.forEach((identity) -> this.peers.add(nonBlank(identity, "peer identity")));
			return this;
		}

		/**
		 * Adds admin identities.
		 * @param identities the admins' certificate common names
		 * @return this builder
		 */
		public Builder admins(Collection<String> identities) {
			identities.forEach((identity) -> this.admins.add(nonBlank(identity, "admin identity")));
			return this;
		}

		/**
		 * Lets an app identity act for the owners of some id prefixes.
		 * @param identity the app's certificate common name
		 * @param idPrefixes the app's {@code tandem.transaction.id-prefix} values, not empty
		 * @return this builder
		 * @throws IllegalArgumentException if the identity or a prefix is blank, or no prefix
		 *     is given
		 */
		public Builder app(String identity, Collection<String> idPrefixes) {
			nonBlank(identity, "app identity");
			if (idPrefixes.isEmpty()) {
				throw new IllegalArgumentException("App identity '" + identity + "' needs at least one id prefix");
			}
			idPrefixes.forEach((prefix) -> nonBlank(prefix, "id prefix of app identity '" + identity + "'"));
			this.apps.put(identity, List.copyOf(idPrefixes));
			return this;
		}

		/**
		 * Creates the policy.
		 * @return the policy
		 * @throws IllegalArgumentException if an id prefix of one app equals, or lies under, an id
		 *     prefix of another app ({@code orders} and {@code orders.eu}): the first app would act
		 *     for the second's owners, since a prefix covers every owner {@code <prefix>.*}
		 */
		public AccessPolicy build() {
			this.apps.forEach((identity, prefixes) -> this.apps.forEach((other, otherPrefixes) -> {
				if (identity.equals(other)) {
					return;
				}
				for (String prefix : prefixes) {
					for (String otherPrefix : otherPrefixes) {
						if (otherPrefix.equals(prefix) || otherPrefix.startsWith(prefix + ".")) {
							throw new IllegalArgumentException("Id prefix '" + otherPrefix + "' of app identity '" + other
									+ "' " + (otherPrefix.equals(prefix) ? "is" : "lies under") + " id prefix '" + prefix
									+ "' of app identity '" + identity + "', which would act for its owners too: give "
									+ "every app id prefixes of its own (tandem.coordinator.server.authorization.apps)");
						}
					}
				}
			}));
			return new AccessPolicy(false, this.peers, this.admins, this.apps);
		}

		private static String nonBlank(String value, String what) {
			Objects.requireNonNull(value, what);
			if (value.isBlank()) {
				throw new IllegalArgumentException("Blank " + what);
			}
			return value;
		}

	}

}
