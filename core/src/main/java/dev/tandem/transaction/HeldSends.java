package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.jspecify.annotations.Nullable;

import dev.tandem.text.DurationText;

/**
 * The record sends of one pipelined transaction, held in order until every record the
 * pipeline's previous transaction sent is acknowledged (or failed), then passed to the
 * producers in the order they were made. Records of consecutive transactions thus never
 * interleave in a partition, although each transaction sends through its own slot's producer:
 * the same guarantee as flushing the previous transaction before the next one sends, without
 * the caller's thread waiting for that flush. The caller goes on polling and sending (its sends
 * are queued) while the previous transaction's records are acknowledged.
 * <p>
 * Lifecycle: holding, then released (once the previous transaction's records are all
 * acknowledged: sends pass straight through from then on) or discarded (the transaction aborted,
 * or a transaction of the pipeline ahead of it failed: records still held are never sent).
 * {@link #close()} (the transaction handed to its pipeline) or {@link #discard} ends the sends;
 * {@link #acknowledged()} completes once the transaction's sends are ended, released or
 * discarded, and every record it passed on is acknowledged or failed: that is the next
 * transaction's gate.
 * <p>
 * A failure stops the line here too. The gate completes exceptionally when the transaction was
 * handed over and cannot commit (a send of it failed, or it aborted after its hand-over), or when
 * its own gate did; the next transaction then discards its held records instead of releasing them
 * (its transaction must abort: {@link #awaitReleased} throws {@link PredecessorFailedException}).
 * So the records of a transaction behind a failed one never reach a producer, whose cluster may be
 * the one that failed (issue 25: before, they were released to a cluster that was down and the
 * next prepare waited for them). A transaction aborted before its hand-over (by its application)
 * passes its predecessor's gate on unchanged.
 * <p>
 * Who releases: a pipeline thread, as soon as the previous transaction's records are acknowledged
 * (the acknowledgements complete on a producer's network thread, which must not send); the
 * caller's own next send if it sees that first; at the latest the pipeline's preparing thread,
 * which waits for it before the transaction prepares ({@link #awaitReleased}).
 * <p>
 * Thread-safe: every method takes this object's lock, and every send of the transaction (queued
 * or passed on) goes through it, so one participant's sends list is never touched by two threads.
 */
final class HeldSends {

	private enum State {
		HOLDING, RELEASED, DISCARDED
	}

	private record Held(Participant participant, ProducerRecord<byte[], byte[]> record,
			CompletableFuture<RecordMetadata> result) {
	}

	/** Completes once the previous transaction's records are done; exceptionally if it failed. */
	private final CompletableFuture<Void> previous;

	private final List<Held> queue = new ArrayList<>();

	/** Every send passed to a producer, for {@link #acknowledged()}. */
	private final List<CompletableFuture<RecordMetadata>> issued = new ArrayList<>();

	private final CompletableFuture<Void> acknowledged = new CompletableFuture<>();

	private State state = State.HOLDING;

	/** The keys, values and headers of the records in {@link #queue}. */
	private volatile long heldBytes;

	/** No more sends: the transaction was handed over or aborted. */
	private boolean closed;

	/** The transaction was handed to its pipeline ({@link #close()}). */
	private volatile boolean handedOver;

	/** Why the transaction failed after its hand-over ({@link #discard} then); null otherwise. */
	private volatile @Nullable Throwable failedAfterHandOver;

	private boolean acknowledging;

	/** What a held send threw when it was passed on: the transaction must not commit. */
	private volatile @Nullable RuntimeException failure;

	/**
	 * @param previous completes once every record of the previous transaction of the pipeline is
	 *     acknowledged or failed, exceptionally if that transaction (or one ahead of it) failed;
	 *     already complete for the pipeline's first
	 * @param releaser runs the release once {@code previous} completes
	 */
	HeldSends(CompletableFuture<Void> previous, Executor releaser) {
		this.previous = previous;
		if (!previous.isDone()) {
			previous.whenComplete((done, ex) -> {
				try {
					releaser.execute(this::release);
				}
				catch (RejectedExecutionException closing) {
					// the pipeline closes: the preparing thread or the abort ends the hold
				}
			});
		}
	}

	/**
	 * Sends a record of the transaction, or queues it while the previous transaction's records
	 * are not all acknowledged.
	 * @return completes when the broker acknowledged the record (or the send failed, or the
	 *     transaction aborted before the record was sent)
	 * @throws IllegalStateException if the transaction was handed over or aborted
	 */
	synchronized CompletableFuture<RecordMetadata> send(Participant participant, ProducerRecord<byte[], byte[]> record) {
		if (this.closed) {
			throw new IllegalStateException("The transaction no longer sends: it was handed to its pipeline or aborted");
		}
		if (this.state == State.HOLDING && this.previous.isDone()) {
			releaseHeld();
		}
		if (this.state == State.RELEASED) {
			return issue(participant, record);
		}
		if (this.state == State.DISCARDED) {
			return CompletableFuture.failedFuture(notSent(this.failure));
		}
		CompletableFuture<RecordMetadata> result = new CompletableFuture<>();
		this.queue.add(new Held(participant, record, result));
		this.heldBytes += sizeOf(record);
		return result;
	}

	/** The bytes a record's key, value and headers take (not what a batch adds). */
	private static long sizeOf(ProducerRecord<byte[], byte[]> record) {
		long size = ((record.key() != null) ? record.key().length : 0)
				+ ((record.value() != null) ? record.value().length : 0);
		for (Header header : record.headers()) {
			size += header.key().length() + ((header.value() != null) ? header.value().length : 0);
		}
		return size;
	}

	/**
	 * Returns the bytes of the records held now: their keys, values and headers.
	 * @return 0 or more; 0 once released or discarded
	 */
	long heldBytes() {
		return this.heldBytes;
	}

	private CompletableFuture<RecordMetadata> issue(Participant participant, ProducerRecord<byte[], byte[]> record) {
		CompletableFuture<RecordMetadata> sent = participant.send(record);
		this.issued.add(sent);
		return sent;
	}

	/** Passes the held records on if the previous transaction's are acknowledged; idempotent. */
	synchronized void release() {
		if (this.state == State.HOLDING && this.previous.isDone()) {
			releaseHeld();
		}
	}

	private void releaseHeld() {
		if (this.previous.isCompletedExceptionally()) {
			discardHeld(predecessorFailed());
			acknowledgeWhenSent();
			return;
		}
		this.state = State.RELEASED;
		for (Held held : this.queue) {
			if (this.failure != null) {
				held.result().completeExceptionally(this.failure);
				continue;
			}
			try {
				issue(held.participant(), held.record()).whenComplete((metadata, ex) -> {
					if (ex != null) {
						held.result().completeExceptionally(ex);
					}
					else {
						held.result().complete(metadata);
					}
				});
			}
			catch (RuntimeException ex) {
				// A send that throws (the producer failed, the transaction is in error) is not
				// appended: the rest are not sent either, and the transaction must abort.
				this.failure = ex;
				held.result().completeExceptionally(ex);
			}
		}
		this.queue.clear();
		this.heldBytes = 0;
		acknowledgeWhenSent();
	}

	/** Ends the sends: the transaction was handed to its pipeline. */
	synchronized void close() {
		this.closed = true;
		this.handedOver = true;
		acknowledgeWhenSent();
	}

	/**
	 * Ends the sends of an aborted transaction: records still held are never sent, their futures
	 * fail with {@code cause}. Idempotent.
	 */
	synchronized void discard(Throwable cause) {
		this.closed = true;
		if (this.handedOver && this.failedAfterHandOver == null) {
			this.failedAfterHandOver = cause;
		}
		if (this.state == State.HOLDING) {
			discardHeld(cause);
		}
		acknowledgeWhenSent();
	}

	/** Held records are never sent: their futures fail with {@code cause}; later sends fail at once. */
	private void discardHeld(Throwable cause) {
		this.state = State.DISCARDED;
		if (this.failure == null) {
			this.failure = (cause instanceof RuntimeException runtime) ? runtime
					: new TandemException(String.valueOf(cause.getMessage()), cause);
		}
		TransactionAbortedException aborted = notSent(cause);
		for (Held held : this.queue) {
			held.result().completeExceptionally(aborted);
		}
		this.queue.clear();
		this.heldBytes = 0;
	}

	private static TransactionAbortedException notSent(@Nullable Throwable cause) {
		return new TransactionAbortedException("The transaction aborted before this record was sent: " + cause, cause);
	}

	/** Why the held records are discarded when the previous transaction's gate failed. */
	private PredecessorFailedException predecessorFailed() {
		Throwable cause = failureOf(this.previous);
		return new PredecessorFailedException("An earlier transaction of the pipeline failed (" + cause
				+ "): this transaction's held records were not sent", cause);
	}

	private void acknowledgeWhenSent() {
		if (!this.closed || this.state == State.HOLDING || this.acknowledging) {
			return;
		}
		this.acknowledging = true;
		// The previous transaction's gate too: a transaction discarded while holding passed nothing
		// on, and the next one must still wait for the records of the one before it.
		List<CompletableFuture<RecordMetadata>> sent = List.copyOf(this.issued);
		List<CompletableFuture<?>> waits = new ArrayList<>(sent);
		waits.add(this.previous);
		// Completes on a producer's network thread: no lock taken there.
		CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0])).whenComplete((done, ex) -> {
			Throwable failed = gateFailure(sent);
			if (failed != null) {
				this.acknowledged.completeExceptionally(failed);
			}
			else {
				this.acknowledged.complete(null);
			}
		});
	}

	/**
	 * Why the next transaction must not send (its gate fails): the one ahead failed, or this one
	 * was handed over and cannot commit (aborted after the hand-over, or a send of it failed);
	 * null if the next one may send. Called once every wait of the gate completed.
	 */
	private @Nullable Throwable gateFailure(List<CompletableFuture<RecordMetadata>> sent) {
		if (this.previous.isCompletedExceptionally()) {
			return failureOf(this.previous);
		}
		if (!this.handedOver) {
			return null;
		}
		if (this.failedAfterHandOver != null) {
			return this.failedAfterHandOver;
		}
		if (this.failure != null) {
			return this.failure;
		}
		for (CompletableFuture<RecordMetadata> send : sent) {
			if (send.isCompletedExceptionally()) {
				return failureOf(send);
			}
		}
		return null;
	}

	/** What a future that completed exceptionally failed with. */
	private static Throwable failureOf(CompletableFuture<?> failed) {
		try {
			failed.join();
		}
		catch (CompletionException | CancellationException ex) {
			return (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
		}
		throw new IllegalStateException("Future did not fail");
	}

	/**
	 * Returns the next transaction's gate: completes once the sends ended, every record passed on
	 * is acknowledged or failed, and this transaction's own gate completed (a transaction aborted
	 * while holding keeps the next one behind the one before it); exceptionally, with the failure,
	 * if this transaction was handed over and a send of it failed or it aborted, or if its own
	 * gate did: the next transaction then discards its held records.
	 */
	CompletableFuture<Void> acknowledged() {
		return this.acknowledged;
	}

	/**
	 * Waits until the previous transaction's records are acknowledged, then passes the held
	 * records on (if no other thread did), so that every record of the transaction is with its
	 * producer.
	 * @param timeout bound of the wait
	 * @throws PredecessorFailedException if a transaction ahead failed: the held records were
	 *     discarded, and the transaction must abort
	 * @throws TandemException if the previous transaction's records were not acknowledged in time,
	 *     if interrupted, or if a held record's send threw
	 */
	void awaitReleased(Duration timeout) {
		try {
			this.previous.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted while waiting for the previous transaction's records", ex);
		}
		catch (ExecutionException ex) {
			// a transaction ahead failed: release() discards the held records, and this one aborts
		}
		catch (TimeoutException ex) {
			throw new TandemException("The records of the pipeline's previous transaction were not acknowledged within "
					+ DurationText.of(timeout) + ": this transaction's records were not sent", ex);
		}
		RuntimeException failed;
		synchronized (this) {
			release();
			failed = this.failure;
		}
		if (failed instanceof PredecessorFailedException predecessor) {
			throw predecessor;
		}
		if (failed != null) {
			throw new TandemException("A send of the transaction failed when its held records were sent: " + failed,
					failed);
		}
	}

}
