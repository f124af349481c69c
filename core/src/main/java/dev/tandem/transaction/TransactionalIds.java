package dev.tandem.transaction;

import org.jspecify.annotations.Nullable;

/**
 * The transactional ids of Tandem's participant producers,
 * {@code <id-prefix>.<cluster>.<instance-id>.<slot>}: the one place that builds them and the one
 * that reads them back. A transactional id is Tandem's only if it {@link #parse parses} exactly as
 * {@link #of} builds it (the slot in plain decimal, as an {@code int} prints); what a look-alike id
 * names must still be confirmed elsewhere (an id prefix and an instance id are free text, so
 * another application's producer may use an id of the same shape).
 * <p>
 * Stateless and thread-safe.
 */
final class TransactionalIds {

	private TransactionalIds() {
	}

	/**
	 * Returns the transactional id of one participant producer.
	 * @param idPrefix the app's id prefix
	 * @param cluster the cluster's name
	 * @param instanceId the instance id
	 * @param slot the slot, 0 or more
	 * @return {@code <id-prefix>.<cluster>.<instance-id>.<slot>}
	 */
	static String of(String idPrefix, String cluster, String instanceId, int slot) {
		return prefix(idPrefix, cluster, instanceId) + slot;
	}

	/**
	 * Returns what every transactional id of one instance on one cluster starts with.
	 * @param idPrefix the app's id prefix
	 * @param cluster the cluster's name
	 * @param instanceId the instance id
	 * @return {@code <id-prefix>.<cluster>.<instance-id>.}
	 */
	static String prefix(String idPrefix, String cluster, String instanceId) {
		return idPrefix + "." + cluster + "." + instanceId + ".";
	}

	/**
	 * Reads a transactional id back as {@link #of} built it for an app and a cluster.
	 * @param transactionalId the transactional id
	 * @param idPrefix the app's id prefix
	 * @param cluster the cluster's name
	 * @return what it names, or {@code null} when {@link #of} never builds it for this app and
	 *     cluster (another prefix or cluster, an empty instance id, a slot that is not an
	 *     {@code int} in plain decimal: {@code 07}, {@code +7}, {@code 99999999999})
	 */
	static @Nullable Parsed parse(String transactionalId, String idPrefix, String cluster) {
		String head = idPrefix + "." + cluster + ".";
		if (!transactionalId.startsWith(head)) {
			return null;
		}
		String rest = transactionalId.substring(head.length());
		int dot = rest.lastIndexOf('.');
		if (dot <= 0) {
			return null;
		}
		Integer slot = slot(rest.substring(dot + 1));
		if (slot == null) {
			return null;
		}
		return new Parsed(idPrefix, cluster, rest.substring(0, dot), slot);
	}

	/** The slot a suffix names when it is an int as {@code Integer.toString} prints it, else null. */
	static @Nullable Integer slot(String suffix) {
		if (suffix.isEmpty() || suffix.length() > 10 || (suffix.length() > 1 && suffix.charAt(0) == '0')
				|| !suffix.chars().allMatch((c) -> c >= '0' && c <= '9')) {
			return null;
		}
		long slot = Long.parseLong(suffix);
		return (slot <= Integer.MAX_VALUE) ? (int) slot : null;
	}

	/**
	 * A transactional id read back.
	 *
	 * @param idPrefix the app's id prefix
	 * @param cluster the cluster's name
	 * @param instanceId the instance id, not empty
	 * @param slot the slot, 0 or more
	 */
	record Parsed(String idPrefix, String cluster, String instanceId, int slot) {

		/**
		 * Returns the owner id of the instance it names.
		 * @return {@code <id-prefix>.<instance-id>}
		 */
		String owner() {
			return this.idPrefix + "." + this.instanceId;
		}

	}

}
