package dev.tandem.coordinator.state;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import dev.tandem.transaction.InstanceLease;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinator's state: one {@link TransactionRecord} per transaction id (DECIDED,
 * COMPLETED or ABORTED), indexed by owner for recovery and by finish time for purging
 * ({@link TransactionRecords} keeps the records and their indexes, {@link InstanceLeases} the
 * leases; this class holds the rules that join them, and is the one entry point of both).
 * <p>
 * Rules (two-phase commit with presumed abort; {@code docs/architecture.md}, "The protocol and recovery"):
 * <ul>
 * <li>decide: creates a DECIDED record; a retried decide of the same decision succeeds
 * unchanged; a decide of an aborted id is refused ({@link OperationResult.AbortConflict}), and
 * one of a decided id with another decision too ({@link OperationResult.Refused}: a reply never
 * echoes a stored decision, so its size never exceeds the command's).</li>
 * <li>complete: DECIDED becomes COMPLETED; a no-op for any other state, including an unknown
 * id.</li>
 * <li>abort: an unknown id becomes ABORTED; a no-op when the id has a record, so an abort
 * never overrides a decision.</li>
 * <li>purge: removes COMPLETED and ABORTED records that finished more than the retention
 * period before the command's time, leases expired that long (and at least a day), and the DECIDED
 * records of those leases' owners, which nobody will complete. A purged id reads as UNKNOWN again.</li>
 * <li>limits: a command that breaks the {@link CommandLimits} is refused whole
 * ({@link OperationResult.Refused}); so is a decide or abort, under a grant of some owners only,
 * of an id recorded for another owner; an operation whose apply fails is refused and logged, never
 * thrown, so a replica never stops on a logged entry.</li>
 * <li>authorization: a command applied with a {@link Grant} changes only records whose owner
 * the grant covers; a complete of another owner's record is a no-op (the coordinator refuses
 * such commands before they reach the log; this rule covers a record created between that
 * check and the apply).</li>
 * </ul>
 * Instance leases ({@link InstanceLease}), one per owner, follow the rules of {@link InstanceLeases}
 * (renew, claim, release); the table adds:
 * <ul>
 * <li>decide: refused ({@link OperationResult.OwnerClaimed}) while the owner's lease is claimed, and,
 * for a decision that names its run (incarnation), unless that run holds the lease (unreleased): a run that
 * wakes up after a pause longer than its lease cannot decide a transaction whose participants a
 * claimant or a new run of the instance aborted; the log's order, not clocks, separates a
 * decision from a claim or a renewal.</li>
 * </ul>
 * Applying the same commands in the same order gives the same table on every replica: the
 * table reads no clock of its own (the command's time is the leader's, stamped when it accepted the command).
 * <p>
 * Not thread-safe: the owner serialises access (the Ratis adapter holds a read-write lock).
 *
 * @since 0.1.0
 */
public final class DecisionTable {

	private static final Logger logger = LoggerFactory.getLogger(DecisionTable.class);

	/**
	 * Shortest time after its expiry that a lease, and the decisions of its owner, may be purged,
	 * in milliseconds (one day): far longer than any Kafka transaction timeout, so a purge never drops
	 * a decision a claimant or the owner's next run could still commit.
	 */
	public static final long ABANDONED_AFTER_MS = 24L * 60 * 60 * 1000;

	private final TransactionRecords records = new TransactionRecords();

	private final InstanceLeases leases = new InstanceLeases();

	/**
	 * Applies every operation of a command, in order.
	 * @param command the command
	 * @return one result per operation, in the command's order
	 */
	public List<OperationResult> apply(Command command) {
		return apply(command, Grant.ALL);
	}

	/**
	 * Applies every operation of a command, in order, for a caller with the given grant.
	 * @param command the command
	 * @param grant what the caller that sent it may act for
	 * @return one result per operation, in the command's order
	 */
	public List<OperationResult> apply(Command command, Grant grant) {
		List<OperationResult> results = new ArrayList<>(command.operations().size());
		String invalid = CommandLimits.refusal(command);
		for (Operation operation : command.operations()) {
			if (invalid != null) {
				results.add(new OperationResult.Refused(invalid));
				continue;
			}
			if (!grant.isAll() && operation instanceof Operation.Complete complete) {
				TransactionRecord existing = this.records.get(complete.transactionId());
				if (existing != null && !grant.coversOwner(existing.owner())) {
					results.add(new OperationResult.StateAfter(existing.state()));
					continue;
				}
			}
			String otherOwner = (grant.isAll() || grant.admin()) ? null : otherOwner(operation);
			if (otherOwner != null) {
				results.add(new OperationResult.Refused(otherOwner));
				continue;
			}
			try {
				results.add(apply(operation, command.atMs()));
			}
			catch (RuntimeException ex) {
				// Deterministic: every replica runs the same code on the same table and entry
				logger.error("Applying {} failed; it is refused on every replica and the peer goes on: {}",
						describe(operation), ex.toString(), ex);
				results.add(new OperationResult.Refused("the coordinator failed to apply " + describe(operation) + ": "
						+ ex.getClass().getSimpleName()));
			}
		}
		return results;
	}

	/**
	 * Returns why a decide or abort names a transaction id recorded for another owner, or
	 * {@code null} (the coordinator refuses such commands before they reach the log; this rule
	 * covers a record created between that check and the apply).
	 */
	private @Nullable String otherOwner(Operation operation) {
		String transactionId;
		String owner;
		if (operation instanceof Operation.Decide decide) {
			transactionId = decide.decision().transactionId();
			owner = decide.decision().owner();
		}
		else if (operation instanceof Operation.Abort abort) {
			transactionId = abort.transactionId();
			owner = abort.owner();
		}
		else {
			return null;
		}
		TransactionRecord existing = this.records.get(transactionId);
		return (existing != null && !existing.owner().equals(owner))
				? "transaction " + transactionId + " belongs to another owner than " + owner : null;
	}

	private static String describe(Operation operation) {
		String text = operation.toString();
		return (text.length() > 200) ? text.substring(0, 200) + "..." : text;
	}

	/**
	 * Applies one operation.
	 * @param operation the operation
	 * @param atMs the command's time, epoch milliseconds
	 * @return the result
	 */
	public OperationResult apply(Operation operation, long atMs) {
		if (operation instanceof Operation.Decide decide) {
			return decide(decide.decision(), decide.incarnation());
		}
		if (operation instanceof Operation.Complete complete) {
			return new OperationResult.StateAfter(complete(complete.transactionId(), atMs));
		}
		if (operation instanceof Operation.Abort abort) {
			return new OperationResult.StateAfter(abort(abort.transactionId(), abort.owner(), atMs));
		}
		if (operation instanceof Operation.Purge purge) {
			return new OperationResult.Purged(purge(atMs, purge.retentionMs()));
		}
		if (operation instanceof Operation.RenewLease renew) {
			return new OperationResult.LeaseAfter(renewLease(renew, atMs));
		}
		if (operation instanceof Operation.ClaimLease claim) {
			return new OperationResult.LeaseAfter(claimLease(claim.owner(), claim.claimant(), atMs));
		}
		if (operation instanceof Operation.ReleaseLease release) {
			return new OperationResult.LeaseAfter(releaseLease(release, atMs));
		}
		throw new IllegalArgumentException("Unknown operation " + operation);
	}

	/**
	 * Records a decision (idempotent).
	 * @param decision the decision
	 * @return {@link OperationResult.Decided} with the stored decision,
	 *     {@link OperationResult.AbortConflict} when the id is aborted, or
	 *     {@link OperationResult.OwnerClaimed} while the owner's lease is claimed
	 */
	public OperationResult decide(Decision decision) {
		return decide(decision, null);
	}

	/**
	 * Records a decision of one run of its owner (idempotent): refused unless that run holds the
	 * owner's lease, so a run that paused past its lease cannot decide once the lease moved on to a
	 * claimant or to a new run of the instance (which may have fenced some participants already).
	 * @param decision the decision
	 * @param incarnation the deciding run, or null for an owner that holds no lease
	 * @return as {@link #decide(Decision)}, or {@link OperationResult.OwnerClaimed} when the run does
	 *     not hold the lease
	 */
	public OperationResult decide(Decision decision, @Nullable String incarnation) {
		InstanceLease lease = this.leases.get(decision.owner());
		if (lease != null && lease.claimedBy() != null) {
			return new OperationResult.OwnerClaimed(decision.transactionId(), lease.claimedBy());
		}
		if (incarnation != null && (lease == null || !lease.isHeldBy(incarnation))) {
			return new OperationResult.OwnerClaimed(decision.transactionId(),
					(lease == null) ? "nobody (the lease of run " + incarnation + " is gone)"
							: lease.released() ? "nobody (run " + lease.incarnation() + " released the lease)"
									: "run " + lease.incarnation());
		}
		TransactionRecord existing = this.records.get(decision.transactionId());
		if (existing == null) {
			this.records.put(TransactionRecord.decided(decision));
			return new OperationResult.Decided(decision, true);
		}
		if (existing.state() == DecisionState.ABORTED) {
			return new OperationResult.AbortConflict(decision.transactionId());
		}
		if (!TransactionRecords.requireDecision(existing).equals(decision)) {
			// Never echo the stored decision: a reply would grow with every retry in a command
			return new OperationResult.Refused("transaction " + decision.transactionId()
					+ " is decided already with another decision, and a decision never changes");
		}
		return new OperationResult.Decided(decision, false);
	}

	/**
	 * Marks a decided transaction completed (idempotent; a no-op for other states).
	 * @param transactionId the transaction id
	 * @param atMs the completion time, epoch milliseconds
	 * @return the state after the call
	 */
	public DecisionState complete(String transactionId, long atMs) {
		TransactionRecord existing = this.records.get(transactionId);
		if (existing == null) {
			return DecisionState.UNKNOWN;
		}
		if (existing.state() == DecisionState.DECIDED) {
			this.records.remove(existing);
			this.records.put(existing.completed(atMs));
			return DecisionState.COMPLETED;
		}
		return existing.state();
	}

	/**
	 * Records an abort of an unknown transaction id (a no-op when it has a record).
	 * @param transactionId the transaction id
	 * @param owner the owning app instance
	 * @param atMs the abort time, epoch milliseconds
	 * @return the state after the call: {@link DecisionState#ABORTED}, or the state of the
	 *     record that was already there
	 */
	public DecisionState abort(String transactionId, String owner, long atMs) {
		TransactionRecord existing = this.records.get(transactionId);
		if (existing != null) {
			return existing.state();
		}
		this.records.put(TransactionRecord.aborted(transactionId, owner, atMs));
		return DecisionState.ABORTED;
	}

	/**
	 * Removes what nobody needs any more, as of {@code nowMs - retentionMs} (the cutoff): completed
	 * and aborted records that finished before the cutoff; leases that expired before the cutoff,
	 * and at least {@link #ABANDONED_AFTER_MS} ago (instances that never came back, taken over or
	 * not), with the decided records of their owners, which nobody will complete (a claimant
	 * completes what it takes over; the brokers aborted the rest long ago). Decided records of
	 * owners that never held a lease stay until completed.
	 * @param nowMs the command's time, epoch milliseconds
	 * @param retentionMs the retention period in milliseconds, zero or more
	 * @return the number of removed records and leases
	 */
	public int purge(long nowMs, long retentionMs) {
		long cutoff = nowMs - retentionMs;
		// A commit decision is never dropped sooner than a day after its owner's lease ran out, whatever
		// the retention: a claimant or the owner's next run may still need it to finish the commit
		long goneBefore = nowMs - Math.max(retentionMs, ABANDONED_AFTER_MS);
		int count = 0;
		List<TransactionRecord> abandoned = this.records.decidedOf((owner) -> {
			InstanceLease lease = this.leases.get(owner);
			return lease != null && lease.expiresAtMs() < goneBefore;
		});
		for (TransactionRecord record : abandoned) {
			this.records.remove(record);
			count++;
		}
		count += this.leases.removeExpiredBefore(goneBefore);
		count += this.records.removeFinishedBefore(cutoff);
		return count;
	}

	/**
	 * Returns the number of decided, not completed transactions of the owners a grant covers
	 * (for {@link CoordinatorQuotas}); 0 for a grant of every owner.
	 * @param grant the grant
	 * @return the count, zero or more
	 */
	public int openDecisions(Grant grant) {
		return this.records.openDecisions(grant);
	}

	/**
	 * Returns the number of aborted records of the owners a grant covers (for
	 * {@link CoordinatorQuotas}); 0 for a grant of every owner.
	 * @param grant the grant
	 * @return the count, zero or more
	 */
	public int abortedRecords(Grant grant) {
		return this.records.abortedRecords(grant);
	}

	/**
	 * Returns the number of leases of the owners a grant covers (for {@link CoordinatorQuotas});
	 * 0 for a grant of every owner.
	 * @param grant the grant
	 * @return the count, zero or more
	 */
	public int leaseCount(Grant grant) {
		return this.leases.countCovered(grant);
	}

	/**
	 * Returns whether an owner holds a lease.
	 * @param owner the owner id
	 * @return whether the table holds a lease of it, claimed or not
	 */
	public boolean hasLease(String owner) {
		return this.leases.get(owner) != null;
	}

	/**
	 * Takes or renews a lease (rules in {@link InstanceLeases}).
	 * @param renew the renewal
	 * @param atMs the command's time, epoch milliseconds
	 * @return the lease after the call, or null when a renewal of a held lease finds none
	 */
	public @Nullable InstanceLease renewLease(Operation.RenewLease renew, long atMs) {
		return this.leases.renew(renew, atMs);
	}

	/**
	 * Claims an expired lease (rules in {@link InstanceLeases}).
	 * @param owner the owner id whose lease to claim
	 * @param claimant the claimant's owner id
	 * @param atMs the command's time, epoch milliseconds
	 * @return the lease after the call, or null if the owner has none
	 */
	public @Nullable InstanceLease claimLease(String owner, String claimant, long atMs) {
		return this.leases.claim(owner, claimant, atMs);
	}

	/**
	 * Removes a lease when asked by its holder's incarnation (unclaimed); marks it taken over when
	 * asked by its claimant (rules in {@link InstanceLeases}); the operation of clients before run
	 * histories.
	 * @param owner the owner id of the lease
	 * @param by the holder's incarnation or the claimant's owner id
	 * @return the lease after the call, null when removed or absent
	 */
	public @Nullable InstanceLease releaseLease(String owner, String by) {
		return this.leases.release(new Operation.ReleaseLease(owner, by), 0);
	}

	/**
	 * Releases a lease (rules in {@link InstanceLeases}): with {@code keepRuns}, a release by its
	 * holder keeps the lease, marked released, with its run history.
	 * @param release the release
	 * @param atMs the command's time, epoch milliseconds
	 * @return the lease after the call, null when removed or absent
	 */
	public @Nullable InstanceLease releaseLease(Operation.ReleaseLease release, long atMs) {
		return this.leases.release(release, atMs);
	}

	/**
	 * Returns every lease, by owner id.
	 * @return an unmodifiable view; do not keep it across mutations
	 */
	public Collection<InstanceLease> leases() {
		return this.leases.all();
	}

	/**
	 * Returns the leases of one app's instances, by owner id.
	 * @param idPrefix the app's id prefix
	 * @return the leases, possibly empty
	 */
	public List<InstanceLease> leases(String idPrefix) {
		return this.leases.ofApp(idPrefix);
	}

	/**
	 * Lists the decided but not completed decisions of every instance of one app (owners
	 * {@code <id-prefix>.*}), oldest decision first.
	 * @param idPrefix the app's id prefix
	 * @return the in-doubt decisions, possibly empty
	 */
	public List<Decision> appInDoubt(String idPrefix) {
		return this.records.appInDoubt(idPrefix);
	}

	/**
	 * Answers a query.
	 * @param query the query
	 * @return the reply of the query's kind
	 */
	public QueryReply answer(Query query) {
		if (query instanceof Query.StateQuery state) {
			return new QueryReply.StateReply(state(state.transactionId()));
		}
		if (query instanceof Query.InDoubtQuery inDoubt) {
			return new QueryReply.InDoubtReply(inDoubt(inDoubt.owner()));
		}
		if (query instanceof Query.AppInDoubtQuery inDoubt) {
			return new QueryReply.InDoubtReply(appInDoubt(inDoubt.idPrefix()));
		}
		if (query instanceof Query.LeasesQuery leases) {
			return new QueryReply.LeasesReply(leases(leases.idPrefix()), leases.withRuns());
		}
		return new QueryReply.CountsReply(counts());
	}

	/**
	 * Returns the state of one transaction id.
	 * @param transactionId the transaction id
	 * @return the state, {@link DecisionState#UNKNOWN} when there is no record
	 */
	public DecisionState state(String transactionId) {
		TransactionRecord existing = this.records.get(transactionId);
		return (existing != null) ? existing.state() : DecisionState.UNKNOWN;
	}

	/**
	 * Returns the record of one transaction id.
	 * @param transactionId the transaction id
	 * @return the record, or {@code null} when there is none
	 */
	public @Nullable TransactionRecord record(String transactionId) {
		return this.records.get(transactionId);
	}

	/**
	 * Lists one owner's decided but not completed decisions, oldest decision first (by
	 * {@link Decision#decidedAtMs()}, then transaction id).
	 * @param owner the owning app instance
	 * @return the in-doubt decisions, possibly empty
	 */
	public List<Decision> inDoubt(String owner) {
		return this.records.inDoubt(owner);
	}

	/**
	 * Returns the number of records per state.
	 * @return the counts
	 */
	public Counts counts() {
		return this.records.counts();
	}

	/**
	 * Returns every record, in no particular order (for snapshots).
	 * @return an unmodifiable view of the records; do not keep it across mutations
	 */
	public Collection<TransactionRecord> records() {
		return this.records.all();
	}

	/**
	 * Replaces the whole content of this table (loading a snapshot).
	 * @param records the records
	 * @throws IllegalArgumentException if two records have the same transaction id
	 */
	public void replaceWith(Collection<TransactionRecord> records) {
		replaceWith(records, List.of());
	}

	/**
	 * Replaces the whole content of this table, leases included (loading a snapshot).
	 * @param records the records
	 * @param leases the leases
	 * @throws IllegalArgumentException if two records have the same transaction id, or two leases
	 *     the same owner
	 */
	public void replaceWith(Collection<TransactionRecord> records, Collection<InstanceLease> leases) {
		clear();
		for (InstanceLease lease : leases) {
			if (!this.leases.add(lease)) {
				clear();
				throw new IllegalArgumentException("Duplicate lease for " + lease.owner());
			}
		}
		for (TransactionRecord record : records) {
			if (this.records.get(record.transactionId()) != null) {
				clear();
				throw new IllegalArgumentException("Duplicate record for " + record.transactionId());
			}
			this.records.put(record);
		}
	}

	/**
	 * Removes every record and every lease.
	 */
	public void clear() {
		this.records.clear();
		this.leases.clear();
	}

	/**
	 * The number of records per state.
	 *
	 * @param decided the number of DECIDED (in-doubt) records
	 * @param completed the number of COMPLETED records
	 * @param aborted the number of ABORTED records
	 * @since 0.1.0
	 */
	public record Counts(int decided, int completed, int aborted) {

		/**
		 * Returns the number of records of every state.
		 * @return the total
		 */
		public int total() {
			return this.decided + this.completed + this.aborted;
		}

	}

}
