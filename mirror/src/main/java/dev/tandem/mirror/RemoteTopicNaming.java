package dev.tandem.mirror;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How a mirrored topic is named on a target cluster: MirrorMaker 2's default replication policy
 * ({@code <source-alias><separator><topic>}, {@code DefaultReplicationPolicy}, KIP-382) or the
 * source topic's own name ({@code IdentityReplicationPolicy}, KIP-690). Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class RemoteTopicNaming {

	/** MirrorMaker 2's default separator. */
	public static final String DEFAULT_SEPARATOR = ".";

	private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]+");

	private final boolean identity;

	private final String separator;

	private RemoteTopicNaming(boolean identity, String separator) {
		this.identity = identity;
		this.separator = separator;
	}

	/**
	 * Returns MirrorMaker 2's default naming, {@code <source-alias><separator><topic>}.
	 * @param separator the separator, one or more of the characters legal in a topic name
	 *     ({@code [a-zA-Z0-9._-]})
	 * @return the naming
	 * @throws IllegalArgumentException if the separator is empty or has an illegal character
	 */
	public static RemoteTopicNaming prefixed(String separator) {
		Objects.requireNonNull(separator, "separator");
		if (!LEGAL.matcher(separator).matches()) {
			throw new IllegalArgumentException("Remote topic separator '" + separator
					+ "' must be one or more of the characters legal in a topic name: letters, digits, '.', '_', '-'");
		}
		return new RemoteTopicNaming(false, separator);
	}

	/**
	 * Returns the identity naming: the remote topic has the source topic's name. Loops in
	 * active-active set-ups are then prevented by the provenance header alone.
	 * @return the naming
	 */
	public static RemoteTopicNaming identity() {
		return new RemoteTopicNaming(true, DEFAULT_SEPARATOR);
	}

	/**
	 * Returns whether the remote topic keeps the source topic's name.
	 * @return whether this is the identity naming
	 */
	public boolean isIdentity() {
		return this.identity;
	}

	/**
	 * Returns the separator of the prefixed naming.
	 * @return the separator
	 */
	public String separator() {
		return this.separator;
	}

	/**
	 * Returns the name of a source topic on a target cluster.
	 * @param sourceAlias the source cluster's alias
	 * @param topic the source topic
	 * @return the remote topic's name
	 */
	public String remoteTopic(String sourceAlias, String topic) {
		return this.identity ? topic : sourceAlias + this.separator + topic;
	}

	/**
	 * Returns whether a topic is, by its name, a remote copy of a topic of the given cluster
	 * ({@code <alias><separator>...}); always false for the identity naming, whose copies cannot
	 * be told by name.
	 * @param topic a topic name
	 * @param alias a cluster alias
	 * @return whether the topic is named as a copy from that cluster
	 */
	public boolean isRemoteTopicOf(String topic, String alias) {
		return !this.identity && topic.startsWith(alias + this.separator);
	}

	@Override
	public String toString() {
		return this.identity ? "identity" : "<source-alias>" + this.separator + "<topic>";
	}

}
