package dev.tandem.coordinator.state;

import java.util.Objects;

/**
 * What an {@link Operation} or a {@link Query} touches, for authorization: the transactions
 * of one owner, one transaction whatever its owner, or the whole table (administrative).
 * A caller needs a {@link Grant} covering every scope of an operation before it is applied.
 *
 * @since 0.1.0
 */
public sealed interface AccessScope {

	/**
	 * The transactions of one owner ({@code <id-prefix>.<instance-id>}).
	 *
	 * @param owner the owner id
	 * @since 0.1.0
	 */
	record Owner(String owner) implements AccessScope {

		public Owner {
			Objects.requireNonNull(owner, "owner");
		}

	}

	/**
	 * One transaction, whose owner is the one of its record in the table.
	 *
	 * @param transactionId the transaction id
	 * @since 0.1.0
	 */
	record TransactionOf(String transactionId) implements AccessScope {

		public TransactionOf {
			Objects.requireNonNull(transactionId, "transactionId");
		}

	}

	/**
	 * A transaction id an operation records for an owner (decide, abort): the grant must cover
	 * the owner, the id must be one of that owner's ({@code <owner>-<uuid>}, see
	 * {@link dev.tandem.transaction.TransactionIds}), and a record of the id, if any, must be the
	 * owner's. So an app that learns another app's transaction id can neither decide nor abort it.
	 *
	 * @param transactionId the transaction id
	 * @param owner the owner the operation names
	 * @since 0.1.0
	 */
	record TransactionFor(String transactionId, String owner) implements AccessScope {

		public TransactionFor {
			Objects.requireNonNull(transactionId, "transactionId");
			Objects.requireNonNull(owner, "owner");
		}

	}

	/**
	 * Every owner's records at once: purges, settling another instance's transactions, counts
	 * across apps.
	 *
	 * @since 0.1.0
	 */
	record Admin() implements AccessScope {

	}

}
