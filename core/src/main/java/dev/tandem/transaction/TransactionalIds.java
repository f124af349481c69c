package dev.tandem.transaction;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The transactional ids of Tandem's participant producers: the one place that builds them and the
 * one that reads them back. Two formats:
 * <ul>
 * <li>per run, {@code <id-prefix>.<cluster>.<instance-id>.<slot>.<run-id>}: the run id is the
 * incarnation of the run's lease (a UUID in canonical form), so every run of an instance has
 * transactional ids of its own and a {@code initTransactions()} on them can abort only that run's
 * transactions. Used whenever the run holds a lease (issue 26 item 1).</li>
 * <li>legacy, {@code <id-prefix>.<cluster>.<instance-id>.<slot>}: shared by every run of an
 * instance (a restart fences its zombies by reusing them). Used without a lease, and read back to
 * recover and fence what runs of earlier versions left.</li>
 * </ul>
 * The last segment tells them apart: a slot is a decimal {@code int}, a run id contains dashes. A
 * transactional id is Tandem's only if it {@link #parse parses} exactly as {@link #of} builds it
 * (the slot in plain decimal, as an {@code int} prints; the run id lower-case canonical); what a
 * look-alike id names must still be confirmed elsewhere (an id prefix and an instance id are free
 * text, so another application's producer may use an id of the same shape).
 * <p>
 * Stateless and thread-safe.
 */
final class TransactionalIds {

	private static final int RUN_ID_LENGTH = 36;

	private TransactionalIds() {
	}

	/**
	 * Returns the legacy transactional id of one participant producer, shared by every run.
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
	 * Returns the transactional id of one participant producer of one run.
	 * @param idPrefix the app's id prefix
	 * @param cluster the cluster's name
	 * @param instanceId the instance id
	 * @param slot the slot, 0 or more
	 * @param runId the run's id (its lease's incarnation, see {@link #isRunId}), or null for the
	 *     legacy id
	 * @return {@code <id-prefix>.<cluster>.<instance-id>.<slot>.<run-id>}, or the legacy id
	 * @throws IllegalArgumentException if the run id is not a UUID in lower-case canonical form
	 */
	static String of(String idPrefix, String cluster, String instanceId, int slot, @Nullable String runId) {
		if (runId == null) {
			return of(idPrefix, cluster, instanceId, slot);
		}
		if (!isRunId(runId)) {
			throw new IllegalArgumentException("Run id '" + runId + "' is not a lower-case canonical UUID");
		}
		return of(idPrefix, cluster, instanceId, slot) + "." + runId;
	}

	/**
	 * Returns what every transactional id of one instance on one cluster starts with, of every run
	 * and of both formats.
	 * @param idPrefix the app's id prefix
	 * @param cluster the cluster's name
	 * @param instanceId the instance id
	 * @return {@code <id-prefix>.<cluster>.<instance-id>.}
	 */
	static String prefix(String idPrefix, String cluster, String instanceId) {
		return idPrefix + "." + cluster + "." + instanceId + ".";
	}

	/**
	 * Whether a text can be the run id of a per-run transactional id: a UUID as
	 * {@code UUID.toString()} prints it (36 characters, lower-case hexadecimal digits and four
	 * dashes at 8, 13, 18 and 23).
	 * @param text the text
	 * @return whether it is one
	 */
	static boolean isRunId(String text) {
		if (text.length() != RUN_ID_LENGTH) {
			return false;
		}
		for (int i = 0; i < RUN_ID_LENGTH; i++) {
			char c = text.charAt(i);
			boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
			if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Reads a transactional id back as {@link #of} built it for an app and a cluster, in either
	 * format.
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
		String runId = null;
		int last = rest.lastIndexOf('.');
		if (last > 0 && isRunId(rest.substring(last + 1))) {
			runId = rest.substring(last + 1);
			rest = rest.substring(0, last);
		}
		int dot = rest.lastIndexOf('.');
		if (dot <= 0) {
			return null;
		}
		Integer slot = slot(rest.substring(dot + 1));
		if (slot == null) {
			return null;
		}
		return new Parsed(idPrefix, cluster, rest.substring(0, dot), slot, runId);
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
	 * @param runId the run id of a per-run id, or null for a legacy id
	 */
	record Parsed(String idPrefix, String cluster, String instanceId, int slot, @Nullable String runId) {

		/** A legacy id read back. */
		Parsed(String idPrefix, String cluster, String instanceId, int slot) {
			this(idPrefix, cluster, instanceId, slot, null);
		}

		/**
		 * Returns the owner id of the instance it names.
		 * @return {@code <id-prefix>.<instance-id>}
		 */
		String owner() {
			return this.idPrefix + "." + this.instanceId;
		}

		/**
		 * Whether the id belongs to a given run of its instance.
		 * @param run the run id, or null for the legacy ids
		 * @return whether its run id is {@code run}
		 */
		boolean isOfRun(@Nullable String run) {
			return Objects.equals(this.runId, run);
		}

	}

}
