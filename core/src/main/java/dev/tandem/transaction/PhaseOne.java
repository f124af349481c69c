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
 * A pipeline's transaction is prepared within the commit timeout instead ({@code bounded}):
 * {@code flush()} ends only when every batch of the producer is acknowledged or expired (its
 * {@code delivery.timeout.ms}), so a cluster that does not answer would hold the pipeline that
 * long, and its successors behind it. There, each cluster with records outstanding is flushed on an
 * executor thread that nobody waits for (so that the producer sends now rather than after
 * {@code linger.ms}), and the calling thread waits for the transaction's own sends, its marker
 * among them, until the commit timeout has passed since phase one began: a cluster that has not
 * acknowledged them by then fails the prepare (WARN, naming the cluster). Such a flush may
 * outlive {@link #run}; it touches nothing but its producer, which the caller's abort (or the
 * abandon that follows a failed abort) makes return.
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

	private final boolean bounded;

	/**
	 * @param transactionId the transaction's id (the databases' marker rows carry it)
	 * @param executor runs the flushes handed off; a rejected hand-off runs on the calling thread
	 * @param timeout bound of each send's acknowledgement once flushed; with {@code bounded}, of
	 *     the wait for every acknowledgement from the start of {@link #run}
	 * @param bounded whether the wait for the acknowledgements is bounded by {@code timeout}
	 *     rather than by the producers' {@code delivery.timeout.ms} (a pipeline's transaction)
	 */
	PhaseOne(String transactionId, Executor executor, Duration timeout, boolean bounded) {
		this.transactionId = transactionId;
		this.executor = executor;
		this.timeout = timeout;
		this.bounded = bounded;
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
		if (this.bounded) {
			return withinTimeout(working, databases);
		}
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
		long deadline = System.nanoTime() + this.timeout.toNanos();
		List<ParticipantRecord> records = new ArrayList<>(working.size());
		for (Participant participant : working) {
			records.add(participant.prepared(deadline, this.timeout));
		}
		return new Prepared(records, prepareBranches(databases));
	}

	/**
	 * A pipeline's transaction: the clusters with records outstanding are told to send them now,
	 * the branches prepared meanwhile, and the sends awaited until the timeout has passed.
	 */
	private Prepared withinTimeout(List<Participant> working, Collection<DatabaseParticipant> databases)
			throws ExecutionException, InterruptedException {
		long deadline = System.nanoTime() + this.timeout.toNanos();
		for (Participant participant : working) {
			if (participant.awaitsAcknowledgement()) {
				sendNow(participant);
			}
		}
		List<DatabaseRecord> branches = prepareBranches(databases);
		List<ParticipantRecord> records = new ArrayList<>(working.size());
		for (Participant participant : working) {
			records.add(participant.prepared(deadline, this.timeout));
		}
		return new Prepared(records, branches);
	}

	/**
	 * Flushes a participant's producer on an executor thread and does not wait for it: the
	 * producer sends what it holds at once instead of after {@code linger.ms}. What the flush
	 * waits for is the transaction's own sends, which the caller awaits with its deadline.
	 */
	private void sendNow(Participant participant) {
		try {
			this.executor.execute(() -> {
				try {
					participant.flush();
				}
				catch (RuntimeException ex) {
					// the producer was closed (aborted, abandoned): the transaction's sends carry the outcome
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// the manager is closing: the producer still sends after linger.ms
		}
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
		return participant.prepared(System.nanoTime() + this.timeout.toNanos(), this.timeout);
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
