package dev.tandem.transaction;

import java.util.List;
import java.util.Objects;

/**
 * The commit decision of one cross-cluster transaction, as written to the {@link DecisionLog}
 * before any participant commits (the "DECIDED" record of {@code docs/architecture.md}, "The protocol and recovery").
 * <p>
 * Immutable and thread-safe.
 *
 * @param transactionId Tandem's id of the cross-cluster transaction (unique, never reused)
 * @param owner the app instance that owns the transaction and recovers it after a crash
 *     ({@code <id-prefix>.<instance-id>})
 * @param decidedAtMs wall-clock time of the decision, epoch milliseconds
 * @param participants every enlisted cluster's Kafka transaction, possibly empty when
 *     {@code databases} is not
 * @param databases every enlisted database's prepared branch, possibly empty (a decision written
 *     before database participants existed has none)
 * @since 0.1.0
 */
public record Decision(String transactionId, String owner, long decidedAtMs,
		List<ParticipantRecord> participants, List<DatabaseRecord> databases) {

	public Decision {
		Objects.requireNonNull(transactionId, "transactionId");
		Objects.requireNonNull(owner, "owner");
		participants = List.copyOf(participants);
		databases = List.copyOf(databases);
		if (participants.isEmpty() && databases.isEmpty()) {
			throw new IllegalArgumentException("A decision needs at least one participant");
		}
	}

	/**
	 * A decision over Kafka participants only.
	 * @param transactionId Tandem's id of the cross-cluster transaction
	 * @param owner the owning app instance
	 * @param decidedAtMs wall-clock time of the decision, epoch milliseconds
	 * @param participants every enlisted cluster's Kafka transaction; never empty
	 * @throws IllegalArgumentException if {@code participants} is empty
	 */
	public Decision(String transactionId, String owner, long decidedAtMs, List<ParticipantRecord> participants) {
		this(transactionId, owner, decidedAtMs, participants, List.of());
	}

	/**
	 * One participant's Kafka transaction as captured at prepare time: enough to resume and
	 * commit it in a fresh producer, and to check its outcome through its marker record.
	 *
	 * @param cluster the cluster's name in Tandem's configuration
	 * @param transactionalId the participant producer's {@code transactional.id}
	 * @param producerId the producer id the broker assigned to that transactional id
	 * @param producerEpoch the producer epoch of the open transaction (0 to 32767)
	 * @param markerTopic the control topic the marker record was written to
	 * @param markerPartition the marker record's partition
	 * @param markerOffset the marker record's offset; a {@code read_committed} fetch at this
	 *     offset tells whether the participant committed
	 * @param transactionVersion the transaction protocol the participant's producer used (KIP-890):
	 *     {@value #TRANSACTION_V1} or {@value #TRANSACTION_V2}; {@value #TRANSACTION_VERSION_UNKNOWN} when
	 *     not recorded (a decision written before it was, issue 26 item 2): recovery then reads the
	 *     cluster's {@code transaction.version} feature instead
	 * @since 0.1.0
	 */
	public record ParticipantRecord(String cluster, String transactionalId, long producerId,
			short producerEpoch, String markerTopic, int markerPartition, long markerOffset, byte transactionVersion) {

		/** The transaction version of a participant whose decision did not record it. */
		public static final byte TRANSACTION_VERSION_UNKNOWN = 0;

		/** Transactions V1: the producer epoch rises only at {@code initTransactions()}. */
		public static final byte TRANSACTION_V1 = 1;

		/** Transactions V2 (KIP-890): the broker raises the producer epoch at every commit and abort. */
		public static final byte TRANSACTION_V2 = 2;

		public ParticipantRecord {
			Objects.requireNonNull(cluster, "cluster");
			Objects.requireNonNull(transactionalId, "transactionalId");
			Objects.requireNonNull(markerTopic, "markerTopic");
			if (transactionVersion < TRANSACTION_VERSION_UNKNOWN || transactionVersion > TRANSACTION_V2) {
				throw new IllegalArgumentException("Transaction version must be 0 (unknown), 1 or 2: "
						+ transactionVersion);
			}
		}

		/**
		 * A participant whose transaction version is not recorded ({@value #TRANSACTION_VERSION_UNKNOWN}).
		 * @param cluster the cluster's name in Tandem's configuration
		 * @param transactionalId the participant producer's {@code transactional.id}
		 * @param producerId the producer id the broker assigned to that transactional id
		 * @param producerEpoch the producer epoch of the open transaction (0 to 32767)
		 * @param markerTopic the control topic the marker record was written to
		 * @param markerPartition the marker record's partition
		 * @param markerOffset the marker record's offset
		 */
		public ParticipantRecord(String cluster, String transactionalId, long producerId, short producerEpoch,
				String markerTopic, int markerPartition, long markerOffset) {
			this(cluster, transactionalId, producerId, producerEpoch, markerTopic, markerPartition, markerOffset,
					TRANSACTION_VERSION_UNKNOWN);
		}

		/**
		 * Whether the decision recorded the transaction version the participant used.
		 * @return whether {@link #transactionVersion()} is 1 or 2
		 */
		public boolean transactionVersionKnown() {
			return this.transactionVersion != TRANSACTION_VERSION_UNKNOWN;
		}

	}

	/**
	 * One database participant's branch as prepared in phase one (XA {@code prepare}): enough to
	 * commit or roll it back from any connection to that database, after a crash too.
	 *
	 * @param database the database's name in Tandem's configuration
	 *     ({@link CrossClusterTransactionManagerBuilder#database})
	 * @param preparedId the branch's XA transaction id in its text form
	 *     ({@code <format id>:<global id in hex>:<branch qualifier in hex>}; docs/architecture.md,
	 *     "Database participants")
	 * @since 0.1.0
	 */
	public record DatabaseRecord(String database, String preparedId) {

		public DatabaseRecord {
			Objects.requireNonNull(database, "database");
			Objects.requireNonNull(preparedId, "preparedId");
		}

	}

}
