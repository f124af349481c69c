package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import org.jspecify.annotations.Nullable;

import dev.tandem.transaction.Decision.DatabaseRecord;
import dev.tandem.transaction.Decision.ParticipantRecord;

/**
 * Phase one of a two-phase commit: every Kafka participant flushed and its sends (its marker
 * record among them) checked, every database branch prepared (marker row, XA end, XA prepare),
 * with the waits overlapped where there is more than one: each cluster whose acknowledgements are
 * still outstanding is flushed on an executor thread ({@code KafkaProducer.flush()} blocks until
 * its cluster answers) while the calling thread prepares the database branches (or flushes one
 * of the clusters when there is no database). With at most one wait (one cluster and no database,
 * or a pipeline's transaction whose records its clusters have all acknowledged by the time it
 * prepares) everything runs on the calling thread, in turn, with no thread hand-off.
 * <p>
 * Safety does not depend on the order: the decision is written only after every participant and
 * branch is prepared, and a branch prepared while a cluster's flush still fails is rolled back by
 * the caller's abort, or by recovery if the process dies first (presumed abort: a prepared branch
 * without a decision is rolled back; recovery finds it by its xid). Whatever fails, every
 * flush handed to the executor has ended before {@link #run} returns or throws, so the caller's
 * abort never races one.
 * <p>
 * Called by the one thread that commits the transaction; not thread-safe.
 */
final class PhaseOne {

	/**
	 * What phase one leaves for the decision.
	 * @param records the participants' marker records, in the order of the participants given
	 * @param branches the prepared branches, in the order of the databases given
	 */
	record Prepared(List<ParticipantRecord> records, List<DatabaseRecord> branches) {
	}

	private final String transactionId;

	private final Executor executor;

	private final Duration timeout;

	/**
	 * @param transactionId the transaction's id (the databases' marker rows carry it)
	 * @param executor runs the flushes handed off; a rejected hand-off runs on the calling thread
	 * @param timeout bound of each send's acknowledgement once flushed
	 */
	PhaseOne(String transactionId, Executor executor, Duration timeout) {
		this.transactionId = transactionId;
		this.executor = executor;
		this.timeout = timeout;
	}

	/**
	 * Prepares every participant and branch.
	 * @param working the Kafka participants with work, in enlistment order
	 * @param databases the enlisted databases' branches, in enlistment order
	 * @return the marker records and prepared branches
	 * @throws ExecutionException if a participant's marker record failed
	 * @throws InterruptedException if interrupted while waiting for a marker record
	 * @throws RuntimeException what a flush, a send or a branch's prepare threw (the first, in the
	 *     order participants then databases); the caller aborts everything
	 */
	Prepared run(List<Participant> working, Collection<DatabaseParticipant> databases)
			throws ExecutionException, InterruptedException {
		List<Participant> awaiting = new ArrayList<>(working.size());
		for (Participant participant : working) {
			if (participant.awaitsAcknowledgement()) {
				awaiting.add(participant);
			}
		}
		if (awaiting.size() + (databases.isEmpty() ? 0 : 1) < 2) {
			return inTurn(working, databases);
		}
		return overlapped(working, awaiting, databases);
	}

	/** One wait at most: everything on the calling thread, clusters first. */
	private Prepared inTurn(List<Participant> working, Collection<DatabaseParticipant> databases)
			throws ExecutionException, InterruptedException {
		for (Participant participant : working) {
			participant.flush();
		}
		List<ParticipantRecord> records = new ArrayList<>(working.size());
		for (Participant participant : working) {
			records.add(participant.prepared(this.timeout));
		}
		return new Prepared(records, prepareBranches(databases));
	}

	private Prepared overlapped(List<Participant> working, List<Participant> awaiting,
			Collection<DatabaseParticipant> databases) throws ExecutionException, InterruptedException {
		// Without a database the calling thread flushes the first cluster itself: one hand-off fewer.
		@Nullable Participant onCaller = databases.isEmpty() ? awaiting.get(0) : null;
		Map<Participant, CompletableFuture<ParticipantRecord>> handedOff = new IdentityHashMap<>();
		for (Participant participant : awaiting) {
			if (participant != onCaller) {
				handedOff.put(participant, handOff(participant));
			}
		}
		Map<Participant, ParticipantRecord> onThisThread = new IdentityHashMap<>();
		List<DatabaseRecord> branches = List.of();
		Throwable failure = null;
		try {
			for (Participant participant : working) {
				if (!handedOff.containsKey(participant)) {
					onThisThread.put(participant, flushAndCheck(participant));
				}
			}
			branches = prepareBranches(databases);
		}
		catch (RuntimeException | ExecutionException | InterruptedException ex) {
			failure = ex;
		}
		// Every hand-off ends before this returns or throws: the caller's abort must not race a flush.
		List<ParticipantRecord> records = new ArrayList<>(working.size());
		Throwable first = null;
		for (Participant participant : working) {
			CompletableFuture<ParticipantRecord> future = handedOff.get(participant);
			if (future == null) {
				ParticipantRecord record = onThisThread.get(participant);
				if (record != null) {
					records.add(record);
				}
				continue;
			}
			try {
				records.add(future.join());
			}
			catch (CompletionException ex) {
				if (first == null) {
					first = (ex.getCause() != null) ? ex.getCause() : ex;
				}
			}
		}
		if (first == null) {
			first = failure;
		}
		if (first != null) {
			throw rethrow(first);
		}
		return new Prepared(records, branches);
	}

	private CompletableFuture<ParticipantRecord> handOff(Participant participant) {
		try {
			return CompletableFuture.supplyAsync(() -> {
				try {
					return flushAndCheck(participant);
				}
				catch (ExecutionException | InterruptedException ex) {
					throw new CompletionException(ex);
				}
			}, this.executor);
		}
		catch (RejectedExecutionException ex) {
			// The manager is closing: flush on this thread, in turn.
			try {
				return CompletableFuture.completedFuture(flushAndCheck(participant));
			}
			catch (RuntimeException | ExecutionException | InterruptedException failure) {
				return CompletableFuture.failedFuture(failure);
			}
		}
	}

	private ParticipantRecord flushAndCheck(Participant participant) throws ExecutionException, InterruptedException {
		participant.flush();
		return participant.prepared(this.timeout);
	}

	private List<DatabaseRecord> prepareBranches(Collection<DatabaseParticipant> databases) {
		if (databases.isEmpty()) {
			return List.of();
		}
		List<DatabaseRecord> branches = new ArrayList<>(databases.size());
		for (DatabaseParticipant database : databases) {
			branches.add(database.prepare(this.transactionId));
		}
		return branches;
	}

	private static RuntimeException rethrow(Throwable failure) throws ExecutionException, InterruptedException {
		if (failure instanceof RuntimeException runtime) {
			throw runtime;
		}
		if (failure instanceof Error error) {
			throw error;
		}
		if (failure instanceof ExecutionException execution) {
			throw execution;
		}
		if (failure instanceof InterruptedException interrupted) {
			throw interrupted;
		}
		throw new TandemException("Phase one failed: " + failure, failure);
	}

}
