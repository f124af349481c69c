package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.text.DurationText;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.internals.ProducerInternals;
import dev.tandem.transaction.internals.ProducerInternals.ProducerIdentity;

/**
 * One cluster's transactional producer within a slot; the Kafka transaction it holds is one
 * participant of a cross-cluster transaction. Not thread-safe beyond what KafkaProducer is: the
 * owning transaction drives begin/commit/abort from one thread.
 */
final class Participant {

	private static final Logger logger = LoggerFactory.getLogger(Participant.class);

	final String cluster;

	final String transactionalId;

	private @Nullable KafkaProducer<byte[], byte[]> producer;

	private boolean keysPickPartitions;

	private boolean inTransaction;

	private final List<Future<RecordMetadata>> sends = new ArrayList<>();

	/** The marker record of the open transaction, sent first (at begin); null outside a transaction. */
	private @Nullable Future<RecordMetadata> marker;

	/**
	 * What a send of the open transaction failed with as it was made (its metadata did not come
	 * within {@code max.block.ms}, say): the transaction cannot prepare, and later sends fail at
	 * once instead of blocking the caller as long again. Set and read on the sending thread.
	 */
	private @Nullable Throwable failedSend;

	private int offsetCommits;

	private final List<DeferredOffsets> deferred = new ArrayList<>(1);

	private record DeferredOffsets(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
	}

	Participant(String cluster, String transactionalId) {
		this.cluster = cluster;
		this.transactionalId = transactionalId;
	}

	boolean isReady() {
		return this.producer != null;
	}

	/**
	 * @param producer the participant's initialized transactional producer
	 * @param keysPickPartitions whether it partitions keyed records with Kafka's built-in partitioner
	 *     (see {@link MarkerPlacement})
	 */
	void open(KafkaProducer<byte[], byte[]> producer, boolean keysPickPartitions) {
		this.producer = producer;
		this.keysPickPartitions = keysPickPartitions;
	}

	KafkaProducer<byte[], byte[]> producer() {
		KafkaProducer<byte[], byte[]> p = this.producer;
		if (p == null) {
			throw new IllegalStateException("Participant " + this.transactionalId + " has no producer");
		}
		return p;
	}

	/**
	 * Begins this participant's Kafka transaction and sends its marker record as the transaction's
	 * first record, so that the marker's append overlaps the transaction's execution instead of
	 * adding a round trip to its prepare (issue 25). When the participant is enlisted by a send, the
	 * marker goes to a partition led by the broker of that send's partition where it can
	 * ({@link MarkerPlacement}). Does nothing if the transaction is open.
	 * @param markerRecord the marker record of the cross-cluster transaction
	 * @param firstRecord the record about to be sent first in the transaction, or null
	 */
	void begin(ProducerRecord<byte[], byte[]> markerRecord, @Nullable ProducerRecord<byte[], byte[]> firstRecord) {
		if (!this.inTransaction) {
			producer().beginTransaction();
			this.inTransaction = true;
			ProducerRecord<byte[], byte[]> placed;
			try {
				placed = MarkerPlacement.beside(producer(), this.keysPickPartitions, markerRecord, firstRecord);
			}
			catch (org.apache.kafka.common.errors.TimeoutException ex) {
				// The cluster gave no metadata within max.block.ms: the marker's send would wait as
				// long again, and every record's after it.
				logger.warn("Cluster '{}' gave no metadata to {} within max.block.ms ({}); the transaction's sends there "
						+ "fail at once and it aborts", this.cluster, this.transactionalId, ex.getMessage());
				this.failedSend = ex;
				this.marker = CompletableFuture.failedFuture(ex);
				return;
			}
			this.marker = sendOne(placed);
		}
	}

	private void requireBegun() {
		if (!this.inTransaction) {
			throw new IllegalStateException("Participant " + this.transactionalId + " was not begun with its marker");
		}
	}

	/**
	 * Sends within the open transaction. The returned future is a {@link CompletableFuture}
	 * completed by the producer's callback (on its network thread), so callers can compose on it
	 * without a thread of their own per record.
	 */
	CompletableFuture<RecordMetadata> send(ProducerRecord<byte[], byte[]> record) {
		requireBegun();
		Throwable failed = this.failedSend;
		CompletableFuture<RecordMetadata> future = (failed == null) ? sendOne(record)
				: CompletableFuture.failedFuture(failed);
		this.sends.add(future);
		return future;
	}

	/**
	 * Sends a record; a send that failed as it was made (the producer calls back before
	 * returning: no metadata within {@code max.block.ms}, a record too large) is remembered, so
	 * that the transaction's later sends fail at once ({@link #send}).
	 */
	private CompletableFuture<RecordMetadata> sendOne(ProducerRecord<byte[], byte[]> record) {
		CompletableFuture<RecordMetadata> future = new CompletableFuture<>();
		producer().send(record, (metadata, exception) -> {
			if (exception != null) {
				future.completeExceptionally(exception);
			}
			else {
				future.complete(metadata);
			}
		});
		if (future.isCompletedExceptionally() && this.failedSend == null) {
			this.failedSend = future.handle((metadata, exception) -> exception).join();
		}
		return future;
	}

	void sendOffsets(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
		if (offsets.isEmpty()) {
			return;
		}
		requireBegun();
		producer().sendOffsetsToTransaction(offsets, groupMetadata);
		this.offsetCommits++;
	}

	/**
	 * Keeps offsets to commit in the open transaction when it commits ({@link #sendDeferredOffsets}),
	 * so that the caller does not wait for the group coordinator's answer.
	 */
	void deferOffsets(Map<TopicPartition, OffsetAndMetadata> offsets, ConsumerGroupMetadata groupMetadata) {
		if (offsets.isEmpty()) {
			return;
		}
		requireBegun();
		this.deferred.add(new DeferredOffsets(Map.copyOf(offsets), groupMetadata));
	}

	/** Sends the deferred offsets, in the order they were given. */
	void sendDeferredOffsets() {
		for (DeferredOffsets offsets : this.deferred) {
			producer().sendOffsetsToTransaction(offsets.offsets(), offsets.groupMetadata());
			this.offsetCommits++;
		}
		this.deferred.clear();
	}

	boolean hasWork() {
		return this.inTransaction && (!this.sends.isEmpty() || this.offsetCommits > 0 || !this.deferred.isEmpty());
	}

	/** True if records other than the marker were sent in the open transaction. */
	boolean hasRecords() {
		return this.inTransaction && !this.sends.isEmpty();
	}

	boolean inTransaction() {
		return this.inTransaction;
	}

	List<Future<RecordMetadata>> sends() {
		return this.sends;
	}

	void flush() {
		producer().flush();
	}

	/**
	 * True if the open transaction's marker record or one of its sends is not acknowledged (or
	 * failed) yet: {@link #flush()} would wait for its cluster.
	 */
	boolean awaitsAcknowledgement() {
		Future<RecordMetadata> marker = this.marker;
		if (marker != null && !marker.isDone()) {
			return true;
		}
		for (Future<RecordMetadata> send : this.sends) {
			if (!send.isDone()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Waits for every send of the transaction, its marker record's last, until a deadline, then
	 * returns what the decision records of this participant: its producer id and epoch and where
	 * its marker landed.
	 * @param deadlineNanos when the wait ends ({@link System#nanoTime()})
	 * @param timeout the bound the deadline stands for, for the failure's message
	 * @throws TandemException if a send failed, or was not acknowledged by the deadline (logged at
	 *     WARN, naming the cluster: the caller aborts the transaction)
	 * @throws ExecutionException if the marker's send failed
	 * @throws InterruptedException if interrupted while waiting for the marker
	 */
	ParticipantRecord prepared(long deadlineNanos, Duration timeout) throws ExecutionException, InterruptedException {
		Future<RecordMetadata> marker = this.marker;
		if (marker == null) {
			throw new IllegalStateException("Participant " + this.transactionalId + " has no open transaction");
		}
		for (Future<RecordMetadata> send : this.sends) {
			try {
				send.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new TandemException("Interrupted while waiting for sends", ex);
			}
			catch (ExecutionException ex) {
				throw new TandemException("A send to cluster '" + this.cluster + "' failed: " + ex.getCause(),
						ex.getCause());
			}
			catch (TimeoutException ex) {
				throw notAcknowledged("a record", timeout, ex);
			}
		}
		RecordMetadata landed;
		try {
			landed = marker.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw notAcknowledged("the marker record", timeout, ex);
		}
		ProducerIdentity identity = ProducerInternals.identity(producer());
		return new ParticipantRecord(this.cluster, this.transactionalId, identity.producerId(),
				identity.producerEpoch(), landed.topic(), landed.partition(), landed.offset(),
				identity.transactionV2() ? ParticipantRecord.TRANSACTION_V2 : ParticipantRecord.TRANSACTION_V1);
	}

	private TandemException notAcknowledged(String what, Duration timeout, TimeoutException ex) {
		String within = DurationText.of(timeout);
		logger.warn("Cluster '{}' did not acknowledge {} of {}'s transaction within the commit timeout ({}); the "
				+ "transaction aborts", this.cluster, what, this.transactionalId, within);
		return new TandemException("Cluster '" + this.cluster + "' did not acknowledge " + what + " of the transaction"
				+ " within the commit timeout (" + within + "): the transaction was not prepared", ex);
	}

	/**
	 * Commits, retrying once after a timeout (the commit may be under way on the broker: retrying
	 * is allowed and completes it).
	 * @return null if committed, else what the commit threw
	 */
	@Nullable Throwable commitOrFailure() {
		try {
			try {
				commit();
			}
			catch (org.apache.kafka.common.errors.TimeoutException ex) {
				logger.warn("Commit of {} on cluster '{}' timed out; retrying once", this.transactionalId, this.cluster);
				commit();
			}
			return null;
		}
		catch (RuntimeException ex) {
			return ex;
		}
	}

	/**
	 * Starts the commits of every participant of a decided transaction, in parallel; collect
	 * their outcomes with {@link #awaitCommits}, after doing what else the commit needs on the
	 * calling thread.
	 * @param working the participants, in enlistment order
	 * @param executor runs the commits
	 * @param afterFirst if not null, the first participant commits alone on the calling thread and
	 *     this runs after it, before the others start (fault injection between commits)
	 * @return each participant's commit, in enlistment order: completes with null once committed,
	 *     else with what the commit threw
	 */
	static List<CompletableFuture<@Nullable Throwable>> startCommits(List<Participant> working, Executor executor,
			@Nullable Runnable afterFirst) {
		List<CompletableFuture<@Nullable Throwable>> commits = new ArrayList<>(working.size());
		for (Participant participant : working) {
			if (afterFirst != null && commits.isEmpty()) {
				commits.add(CompletableFuture.completedFuture(participant.commitOrFailure()));
				afterFirst.run();
			}
			else {
				commits.add(CompletableFuture.supplyAsync(participant::commitOrFailure, executor));
			}
		}
		return commits;
	}

	/**
	 * Waits for the commits {@link #startCommits} started.
	 * @param working the participants, in enlistment order
	 * @param commits what {@link #startCommits} returned for them
	 * @return the participants that did not commit and why, in enlistment order; empty if all did
	 */
	static Map<Participant, Throwable> awaitCommits(List<Participant> working,
			List<CompletableFuture<@Nullable Throwable>> commits) {
		Map<Participant, Throwable> failures = new LinkedHashMap<>();
		for (int i = 0; i < working.size(); i++) {
			Throwable failure = commits.get(i).join();
			if (failure != null) {
				failures.put(working.get(i), failure);
			}
		}
		return failures;
	}

	/** Commits the open transaction; bounded by the producer's {@code max.block.ms}. */
	void commit() {
		producer().commitTransaction();
		reset();
	}

	/** Aborts the open transaction, if any; bounded by the producer's {@code max.block.ms}. */
	void abort() {
		if (this.inTransaction) {
			producer().abortTransaction();
		}
		reset();
	}

	private void reset() {
		this.inTransaction = false;
		this.marker = null;
		this.failedSend = null;
		this.sends.clear();
		this.offsetCommits = 0;
		this.deferred.clear();
	}

	/**
	 * Closes the producer without aborting its open transaction, as a crashed process would leave
	 * it (a graceful close aborts).
	 */
	void abandon() {
		KafkaProducer<byte[], byte[]> p = this.producer;
		this.producer = null;
		reset();
		if (p != null) {
			p.close(Duration.ZERO);
		}
	}

	void close(Duration timeout) {
		KafkaProducer<byte[], byte[]> p = this.producer;
		this.producer = null;
		reset();
		if (p != null) {
			p.close(timeout);
		}
	}

}
