package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
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
 * acknowledged: sends pass straight through from then on) or discarded (the transaction aborted:
 * records still held are never sent). {@link #close()} (the transaction handed to its pipeline)
 * or {@link #discard} ends the sends; {@link #acknowledged()} completes once the transaction's
 * sends are ended, released or discarded, and every record it passed on is acknowledged or failed:
 * that is the next transaction's gate.
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

	private final CompletableFuture<Void> previous;

	private final List<Held> queue = new ArrayList<>();

	/** Every send passed to a producer, for {@link #acknowledged()}. */
	private final List<CompletableFuture<RecordMetadata>> issued = new ArrayList<>();

	private final CompletableFuture<Void> acknowledged = new CompletableFuture<>();

	private State state = State.HOLDING;

	/** No more sends: the transaction was handed over or aborted. */
	private boolean closed;

	private boolean acknowledging;

	/** What a held send threw when it was passed on: the transaction must not commit. */
	private @Nullable RuntimeException failure;

	/**
	 * @param previous completes (normally) once every record of the previous transaction of the
	 *     pipeline is acknowledged or failed; already complete for the pipeline's first
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
		CompletableFuture<RecordMetadata> result = new CompletableFuture<>();
		this.queue.add(new Held(participant, record, result));
		return result;
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
		acknowledgeWhenSent();
	}

	/** Ends the sends: the transaction was handed to its pipeline. */
	synchronized void close() {
		this.closed = true;
		acknowledgeWhenSent();
	}

	/**
	 * Ends the sends of an aborted transaction: records still held are never sent, their futures
	 * fail with {@code cause}. Idempotent.
	 */
	synchronized void discard(Throwable cause) {
		this.closed = true;
		if (this.state == State.HOLDING) {
			this.state = State.DISCARDED;
			TransactionAbortedException aborted = new TransactionAbortedException(
					"The transaction aborted before this record was sent: " + cause, cause);
			for (Held held : this.queue) {
				held.result().completeExceptionally(aborted);
			}
			this.queue.clear();
		}
		acknowledgeWhenSent();
	}

	private void acknowledgeWhenSent() {
		if (!this.closed || this.state == State.HOLDING || this.acknowledging) {
			return;
		}
		this.acknowledging = true;
		// The previous transaction's gate too: a transaction discarded while holding passed nothing
		// on, and the next one must still wait for the records of the one before it.
		List<CompletableFuture<?>> waits = new ArrayList<>(this.issued);
		waits.add(this.previous);
		CompletableFuture.allOf(waits.toArray(new CompletableFuture<?>[0]))
			.whenComplete((done, ex) -> this.acknowledged.complete(null));
	}

	/**
	 * Returns the next transaction's gate: completes normally (a failed send too: its transaction
	 * aborts, and the pipeline aborts the ones after it) once the sends ended, every record
	 * passed on is acknowledged or failed, and this transaction's own gate completed (a
	 * transaction aborted while holding keeps the next one behind the one before it).
	 */
	CompletableFuture<Void> acknowledged() {
		return this.acknowledged;
	}

	/**
	 * Waits until the previous transaction's records are acknowledged, then passes the held
	 * records on (if no other thread did), so that every record of the transaction is with its
	 * producer.
	 * @param timeout bound of the wait
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
			// the gate only completes normally; keep going as if it had
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
		if (failed != null) {
			throw new TandemException("A send of the transaction failed when its held records were sent: " + failed,
					failed);
		}
	}

}
