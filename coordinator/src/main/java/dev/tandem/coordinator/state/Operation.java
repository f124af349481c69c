package dev.tandem.coordinator.state;

import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import dev.tandem.transaction.Decision;

/**
 * One mutation of the {@link DecisionTable}. A {@link Command} carries a batch of them, so that
 * one Raft log entry holds many decisions (group commit).
 * <p>
 * Each operation names what it touches ({@link #scopes()}): the coordinator applies it only
 * for a caller whose {@link Grant} covers every scope, so a new operation is authorized as soon
 * as it says which owner or transaction it acts on.
 *
 * @since 0.1.0
 */
public sealed interface Operation {

	/**
	 * Returns what this operation touches, for authorization.
	 * @return the scopes, never empty
	 */
	List<AccessScope> scopes();

	/**
	 * Records a commit decision; idempotent, refused when the transaction id is aborted, and
	 * refused while the owner's lease is claimed or, with an incarnation, held by another run.
	 *
	 * @param decision the decision to record
	 * @param incarnation the deciding run of the owner, or null when it holds no lease
	 * @since 0.1.0
	 */
	record Decide(Decision decision, @Nullable String incarnation) implements Operation {

		public Decide {
			Objects.requireNonNull(decision, "decision");
		}

		/**
		 * A decision of an owner that holds no lease (or of a client that does not say which run it is).
		 * @param decision the decision
		 */
		public Decide(Decision decision) {
			this(decision, null);
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.TransactionFor(this.decision.transactionId(), this.decision.owner()));
		}

	}

	/**
	 * Marks a decided transaction completed; a no-op for any other state.
	 *
	 * @param transactionId the transaction id
	 * @since 0.1.0
	 */
	record Complete(String transactionId) implements Operation {

		public Complete {
			Objects.requireNonNull(transactionId, "transactionId");
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.TransactionOf(this.transactionId));
		}

	}

	/**
	 * Records an abort of a transaction id that has no record; a no-op when it has one.
	 *
	 * @param transactionId the transaction id
	 * @param owner the owning app instance
	 * @since 0.1.0
	 */
	record Abort(String transactionId, String owner) implements Operation {

		public Abort {
			Objects.requireNonNull(transactionId, "transactionId");
			Objects.requireNonNull(owner, "owner");
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.TransactionFor(this.transactionId, this.owner));
		}

	}

	/**
	 * Removes completed and aborted records that finished more than {@code retentionMs}
	 * before the command's time.
	 *
	 * @param retentionMs the retention period in milliseconds, zero or more
	 * @since 0.1.0
	 */
	record Purge(long retentionMs) implements Operation {

		public Purge {
			if (retentionMs < 0) {
				throw new IllegalArgumentException("retentionMs must be >= 0: " + retentionMs);
			}
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.Admin());
		}

	}

	/**
	 * Takes or renews an instance's lease (see {@link DecisionTable} for the rules).
	 *
	 * @param idPrefix the app's id prefix
	 * @param instanceId the instance id
	 * @param incarnation the renewing run's incarnation
	 * @param durationMs how long the lease lasts from the command's time, positive
	 * @param held whether the run held the lease already (a renewal, not a first take): then it is
	 *     granted only while the run still holds it, so a lease never returns to a run it left
	 *     (issue 26 item 1)
	 * @since 0.1.0
	 */
	record RenewLease(String idPrefix, String instanceId, String incarnation, long durationMs,
			boolean held) implements Operation {

		/**
		 * A first take of the lease by a run that has not held it yet (or a renewal from a client that
		 * does not say whether it held it).
		 * @param idPrefix the app's id prefix
		 * @param instanceId the instance id
		 * @param incarnation the renewing run's incarnation
		 * @param durationMs how long the lease lasts from the command's time, positive
		 */
		public RenewLease(String idPrefix, String instanceId, String incarnation, long durationMs) {
			this(idPrefix, instanceId, incarnation, durationMs, false);
		}

		public RenewLease {
			Objects.requireNonNull(idPrefix, "idPrefix");
			Objects.requireNonNull(instanceId, "instanceId");
			Objects.requireNonNull(incarnation, "incarnation");
			if (durationMs <= 0) {
				throw new IllegalArgumentException("durationMs must be positive: " + durationMs);
			}
		}

		/**
		 * Returns the owner id of the lease.
		 * @return {@code <id-prefix>.<instance-id>}
		 */
		public String owner() {
			return this.idPrefix + "." + this.instanceId;
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.Owner(owner()));
		}

	}

	/**
	 * Claims an expired lease of another instance of the same app.
	 *
	 * @param owner the owner id whose lease to claim
	 * @param claimant the claiming instance's owner id
	 * @since 0.1.0
	 */
	record ClaimLease(String owner, String claimant) implements Operation {

		public ClaimLease {
			Objects.requireNonNull(owner, "owner");
			Objects.requireNonNull(claimant, "claimant");
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.Owner(this.owner), new AccessScope.Owner(this.claimant));
		}

	}

	/**
	 * Releases a lease, by its holder's incarnation or its claimant's owner id.
	 *
	 * @param owner the owner id of the lease
	 * @param by the holder's incarnation or the claimant's owner id
	 * @param keepRuns whether a release by the holder keeps the lease, marked released, with its
	 *     run history (issue 26 item 1: the next run fences every run that held it), instead of
	 *     removing it; operation code 10, which older peers do not know
	 * @since 0.1.0
	 */
	record ReleaseLease(String owner, String by, boolean keepRuns) implements Operation {

		/**
		 * A release that removes the lease (clients before run histories).
		 * @param owner the owner id of the lease
		 * @param by the holder's incarnation or the claimant's owner id
		 */
		public ReleaseLease(String owner, String by) {
			this(owner, by, false);
		}

		public ReleaseLease {
			Objects.requireNonNull(owner, "owner");
			Objects.requireNonNull(by, "by");
		}

		@Override
		public List<AccessScope> scopes() {
			return List.of(new AccessScope.Owner(this.owner));
		}

	}

}
