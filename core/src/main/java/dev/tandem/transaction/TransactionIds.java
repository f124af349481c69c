package dev.tandem.transaction;

import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * Tandem's transaction ids: {@code <owner>-<random UUID>}, where the owner is
 * {@code <id-prefix>.<instance-id>}. The id carries its owner, so a coordinator that authorizes
 * callers by id prefix can refuse a decision or abort of another app's transaction id (an id is
 * bound to the owner that created it), and an operator's settlement can refuse another app's id.
 * <p>
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
public final class TransactionIds {

	/** Length of the random part: a UUID in its canonical 36-character form. */
	private static final int RANDOM_PART = 36;

	private TransactionIds() {
	}

	/**
	 * Returns a new transaction id of an owner.
	 * @param owner the owner id, {@code <id-prefix>.<instance-id>}
	 * @return {@code <owner>-<random UUID>}, never reused
	 */
	public static String newId(String owner) {
		return owner + "-" + UUID.randomUUID();
	}

	/**
	 * Returns whether a transaction id was created by {@link #newId(String)} for an owner.
	 * @param transactionId the transaction id
	 * @param owner the owner id
	 * @return whether the id is {@code <owner>-<uuid>}
	 */
	public static boolean isOf(String transactionId, String owner) {
		return transactionId.length() == owner.length() + 1 + RANDOM_PART && transactionId.startsWith(owner)
				&& transactionId.charAt(owner.length()) == '-';
	}

	/**
	 * Returns the owner a transaction id names, or {@code null} when it is not of the form
	 * {@code <owner>-<uuid>} (an id of a Tandem version before ids carried their owner).
	 * @param transactionId the transaction id
	 * @return the owner id, or {@code null}
	 */
	public static @Nullable String ownerOf(String transactionId) {
		int dash = transactionId.length() - RANDOM_PART - 1;
		if (dash < 1 || transactionId.charAt(dash) != '-') {
			return null;
		}
		return transactionId.substring(0, dash);
	}

	/**
	 * Returns whether a transaction id belongs to an instance of the app with an id prefix.
	 * @param transactionId the transaction id
	 * @param idPrefix the app's id prefix ({@code tandem.transaction.id-prefix})
	 * @return whether the id's owner is {@code <idPrefix>.<some instance>}
	 */
	public static boolean isOfApp(String transactionId, String idPrefix) {
		String owner = ownerOf(transactionId);
		return owner != null && owner.length() > idPrefix.length() + 1 && owner.startsWith(idPrefix)
				&& owner.charAt(idPrefix.length()) == '.';
	}

}
