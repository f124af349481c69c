package dev.tandem.transaction;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Serializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.transaction.Decision.ParticipantRecord;

/**
 * One cross-cluster transaction: records sent to any configured cluster and consumer offsets
 * committed on the consumer's own cluster become visible all together, or not at all
 * (two-phase commit with presumed abort; {@code docs/architecture.md}, "The protocol and recovery").
 * <p>
 * Obtain one from {@link CrossClusterTransactionManager#begin()}; end it with exactly one of
 * {@link #commit()} or {@link #abort()}. {@code send} may be called from several threads;
 * {@code commit} and {@code abort} from one thread, after every {@code send} call returned.
 * Every state change goes through one method that checks it against {@link TransactionState}'s
 * table, as Kafka's {@code TransactionManager.transitionTo} does.
 *
 * @since 0.1.0
 */
public final class CrossClusterTransaction implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(CrossClusterTransaction.class);

	private final TransactionContext context;

	private final ParticipantSlot slot;

	private final String transactionId;

	private final Map<String, Participant> enlisted = new LinkedHashMap<>();

	/** The enlisted databases' branches, in order of first use. */
	private final Map<String, DatabaseParticipant> databases = new LinkedHashMap<>();

	/**
	 * Databases whose branch could not begin ({@link #database(String)} threw) and has not begun
	 * since: what the application meant to write there is not in this transaction, so it must not
	 * commit (it aborts at commit, as a JTA transaction whose enlistment failed is rollback-only).
	 */
	private final Map<String, RuntimeException> unenlistedDatabases = new LinkedHashMap<>();

	private volatile TransactionState state = TransactionState.ACTIVE;

	private boolean slotReleased;

	private final List<Runnable> onEnd = new ArrayList<>(1);

	/** Registered by the application's frameworks; run once before phase one. */
	private final List<TransactionSynchronization> synchronizations = new ArrayList<>(1);

	/** Whether {@link #synchronizations} ran their {@code beforePrepare}. */
	private boolean synchronizationsPrepared;

	/** Frameworks' resources of this transaction, by their key ({@link #putResource}). */
	private final Map<Object, Object> resources = new HashMap<>(2);

	/** Set once {@link TransactionPipeline#commitAsync} took it: only the pipeline ends it then. */
	private volatile boolean pipelined;

	/** A pipeline's transaction: offsets go to the group coordinator at commit, not at the call. */
	private boolean deferOffsets;

	/**
	 * A pipeline's transaction: its record sends, held until the previous transaction's records
	 * are acknowledged; null outside a pipeline.
	 */
	private volatile @Nullable HeldSends held;

	private final long startedAtMs = System.currentTimeMillis();

	CrossClusterTransaction(TransactionContext context, ParticipantSlot slot, String transactionId) {
		this.context = context;
		this.slot = slot;
		this.transactionId = transactionId;
	}

	/**
	 * Returns this transaction's id, unique across instances and restarts.
	 * @return the transaction id
	 */
	public String transactionId() {
		return this.transactionId;
	}

	/**
	 * Returns when this transaction began.
	 * @return epoch milliseconds
	 */
	public long startedAtMs() {
		return this.startedAtMs;
	}

	/**
	 * Returns the current state.
	 * @return the state
	 */
	public TransactionState state() {
		return this.state;
	}

	/**
	 * Sends a record to a cluster within this transaction. The record becomes visible to
	 * {@code read_committed} readers only once the transaction commits.
	 * @param cluster the cluster's configured name
	 * @param record the record, already serialized
	 * In a transaction of a {@link TransactionPipeline} the record may be held, in order with the
	 * transaction's other sends, until every record of the pipeline's previous transaction is
	 * acknowledged, so that records of consecutive transactions keep their order in each partition;
	 * this call does not wait for that.
	 * @param cluster the cluster's configured name
	 * @param record the record, already serialized
	 * @return the send's future, a {@link java.util.concurrent.CompletableFuture}; it completes when the broker
	 *     acknowledged the record (on the producer's network thread: keep dependent stages short). It
	 *     fails at once, without the producer, once a send of this transaction to the same cluster
	 *     failed as it was made (no metadata within {@code max.block.ms}, say: the transaction can
	 *     only abort), or, in a pipeline, once a transaction handed over before it failed
	 * @throws IllegalArgumentException if the cluster is unknown
	 * @throws IllegalStateException if the transaction is no longer active, or was handed to its
	 *     pipeline
	 * @throws ClusterUnavailableException if this is the transaction's first use of a cluster that
	 *     is known to be unreachable, or whose recovery is pending
	 */
	public Future<RecordMetadata> send(String cluster, ProducerRecord<byte[], byte[]> record) {
		synchronized (this) {
			checkActive();
			Participant participant = participant(cluster, record);
			HeldSends held = this.held;
			return (held != null) ? held.send(participant, record) : participant.send(record);
		}
	}

	/**
	 * Serializes and sends a record to a cluster within this transaction.
	 * @param <K> key type
	 * @param <V> value type
	 * @param cluster the cluster's configured name
	 * @param record the record
	 * @param keySerializer serializer of the key
	 * @param valueSerializer serializer of the value
	 * @return the send's future
	 * @throws IllegalArgumentException if the cluster is unknown
	 * @throws IllegalStateException if the transaction is no longer active
	 */
	public <K, V> Future<RecordMetadata> send(String cluster, ProducerRecord<K, V> record,
			Serializer<K> keySerializer, Serializer<V> valueSerializer) {
		Headers headers = record.headers();
		byte[] key = keySerializer.serialize(record.topic(), headers, record.key());
		byte[] value = valueSerializer.serialize(record.topic(), headers, record.value());
		// ProducerRecord copies the headers it is given; none to copy: not even an empty array
		return send(cluster, new ProducerRecord<>(record.topic(), record.partition(), record.timestamp(), key, value,
				headers.iterator().hasNext() ? headers : null));
	}

	/**
	 * Commits a consumer's offsets within this transaction, on the cluster the consumer reads
	 * from (so they can never land in another cluster's {@code __consumer_offsets}). In a
	 * transaction of a {@link TransactionPipeline} the offsets (with the consumer's group
	 * metadata of now) are handed to the group coordinator when the transaction commits, on the
	 * pipeline's thread, so the caller does not wait for it; a failure then aborts the
	 * transaction (a rebalance in between fences the stale generation: KIP-447).
	 * @param consumer a consumer created by or registered with the manager
	 * @param offsets the next offsets to consume, per partition
	 * @throws IllegalArgumentException if the consumer is not registered with a cluster
	 * @throws IllegalStateException if the transaction is no longer active
	 */
	public void sendOffsets(Consumer<?, ?> consumer, Map<TopicPartition, OffsetAndMetadata> offsets) {
		String cluster = this.context.consumers().clusterOf(consumer);
		synchronized (this) {
			checkActive();
			if (offsets.isEmpty()) {
				return;
			}
			if (this.deferOffsets) {
				participant(cluster).deferOffsets(offsets, consumer.groupMetadata());
			}
			else {
				participant(cluster).sendOffsets(offsets, consumer.groupMetadata());
			}
		}
	}

	/**
	 * Commits offsets of a named consumer group on a named cluster within this transaction, for
	 * a group that this process does not consume as: a mirror's translated offsets of a source
	 * group, written to the target cluster's {@code __consumer_offsets} atomically with the
	 * mirrored records. The commit carries no generation or member id, so the group coordinator
	 * accepts it only while the group has no active members on that cluster (otherwise the
	 * commit of this cluster's participant fails and the whole transaction aborts). To commit the
	 * offsets of a consumer this process reads with, use {@link #sendOffsets}, which always
	 * picks the consumer's own cluster.
	 * @param cluster the cluster's configured name (the group's offsets land there)
	 * @param groupId the consumer group, not blank
	 * @param offsets the next offsets to consume, per partition of that cluster's topics
	 * @throws IllegalArgumentException if the cluster is unknown or the group id is blank
	 * @throws IllegalStateException if the transaction is no longer active
	 * @throws ClusterUnavailableException as {@link #send(String, ProducerRecord)}
	 */
	public void sendGroupOffsets(String cluster, String groupId, Map<TopicPartition, OffsetAndMetadata> offsets) {
		if (groupId == null || groupId.isBlank()) {
			throw new IllegalArgumentException("groupId must not be blank");
		}
		synchronized (this) {
			checkActive();
			if (offsets.isEmpty()) {
				return;
			}
			participant(cluster).sendOffsets(offsets, new ConsumerGroupMetadata(groupId));
		}
	}

	/**
	 * Enlists the cluster a consumer reads from now, before its offsets are known: its Kafka
	 * transaction begins and its marker record is sent at once, so that committing the consumer's
	 * offsets later does not wait for the marker's append (one round trip to that cluster less
	 * in the commit; issue 25). If the transaction then commits no offsets and sends nothing
	 * there, that cluster's Kafka transaction (holding only the marker) is aborted at commit and
	 * is not a participant of the decision. Does nothing if the cluster is already enlisted.
	 * @param consumer a consumer created by or registered with the manager
	 * @throws IllegalArgumentException if the consumer is not registered with a cluster
	 * @throws IllegalStateException if the transaction is no longer active
	 * @throws ClusterUnavailableException as {@link #send(String, ProducerRecord)}
	 */
	public void enlistClusterOf(Consumer<?, ?> consumer) {
		String cluster = this.context.consumers().clusterOf(consumer);
		synchronized (this) {
			checkActive();
			participant(cluster);
		}
	}

	/**
	 * Returns the names of the clusters this transaction has touched so far.
	 * @return cluster names, in order of first use
	 */
	public synchronized List<String> enlistedClusters() {
		return List.copyOf(this.enlisted.keySet());
	}

	/**
	 * Returns the JDBC connection of a configured database enlisted in this transaction: what the
	 * application writes through it commits or rolls back with the records of this transaction
	 * (the database is a participant of the two-phase commit: its XA branch is prepared before the
	 * decision and committed after it; {@code docs/architecture.md}, "Database participants"). The
	 * first call for a database starts its branch; later calls return the same connection.
	 * <p>
	 * Use the connection from one thread at a time, as JDBC connections go. Never call its
	 * {@code commit}, {@code rollback} or {@code setAutoCommit}: the transaction ends it. It is
	 * closed when the transaction ends (do not keep it).
	 * @param name the database's configured name ({@link CrossClusterTransactionManagerBuilder#database})
	 * @return the connection, in a transaction of this Tandem transaction
	 * @throws IllegalArgumentException if no database of that name is configured
	 * @throws IllegalStateException if the transaction is no longer active
	 * @throws TandemException if the database cannot be reached or refuses to start the branch
	 *     (nothing was written there; the transaction stays active, but it aborts at commit unless
	 *     a later call for the same database begins the branch: a transaction that could not write
	 *     where it meant to never commits its records alone, even when the rollback rule of the
	 *     surrounding code would commit on the exception, a checked {@code SQLException} say)
	 * @since 0.1.0
	 */
	public Connection database(String name) {
		synchronized (this) {
			checkActive();
			DatabaseParticipant database = this.databases.get(name);
			if (database == null) {
				database = this.context.databases().participant(this.slot.index, name);
				try {
					database.begin(this.transactionId);
				}
				catch (RuntimeException ex) {
					this.unenlistedDatabases.put(name, ex);
					throw ex;
				}
				this.unenlistedDatabases.remove(name);
				this.databases.put(name, database);
			}
			return database.connection();
		}
	}

	/**
	 * Returns the names of the databases this transaction has enlisted so far.
	 * @return database names, in order of first use
	 */
	public synchronized List<String> enlistedDatabases() {
		return List.copyOf(this.databases.keySet());
	}

	private Participant participant(String cluster) {
		return participant(cluster, null);
	}

	/**
	 * Returns the cluster's participant, enlisting it (its Kafka transaction begun, its marker
	 * sent) on first use.
	 * @param first the record the caller sends next, if any: the marker is placed beside it
	 */
	private Participant participant(String cluster, @Nullable ProducerRecord<byte[], byte[]> first) {
		Participant participant = this.enlisted.get(cluster);
		if (participant == null) {
			participant = this.slot.participant(cluster);
			if (this.context.reachability().isUnreachable(cluster)) {
				throw new ClusterUnavailableException(cluster, "Transaction " + this.transactionId + " needs cluster '"
						+ cluster + "', whose brokers do not answer (every Tandem client of it lost its brokers); nothing "
						+ "was written there. Retry once the cluster is back");
			}
			this.context.pool().open(participant);
			participant.begin(markerRecord(), first);
			this.enlisted.put(cluster, participant);
		}
		return participant;
	}

	private void checkActive() {
		if (this.state != TransactionState.ACTIVE) {
			throw new IllegalStateException("Transaction " + this.transactionId + " is " + this.state
					+ ", not ACTIVE");
		}
	}

	/**
	 * The one place the state changes.
	 * @throws IllegalStateException if {@link TransactionState} does not allow the move
	 */
	private synchronized void to(TransactionState next) {
		if (!this.state.canTransitionTo(next)) {
			throw new IllegalStateException("Transaction " + this.transactionId + ": illegal transition "
					+ this.state + " -> " + next);
		}
		this.state = next;
		if ((next.isTerminal() || next == TransactionState.IN_DOUBT) && !this.onEnd.isEmpty()) {
			List<Runnable> callbacks = List.copyOf(this.onEnd);
			this.onEnd.clear();
			callbacks.forEach(Runnable::run);
		}
	}

	/** Makes {@link #sendOffsets} defer its offsets to the commit (a pipeline's transaction). */
	synchronized void deferOffsetsToCommit() {
		this.deferOffsets = true;
	}

	/**
	 * Makes {@link #send} go through a pipeline's hold (a pipeline's transaction), so that its
	 * records reach their producers only after the previous transaction's are acknowledged.
	 */
	synchronized void holdSends(HeldSends sends) {
		this.held = sends;
	}

	/** Runs a callback once, when this transaction ends or is handed to the resolver. */
	synchronized void onEnd(Runnable callback) {
		this.onEnd.add(callback);
	}

	/**
	 * Registers work to run before this transaction prepares and once it ends
	 * ({@link TransactionSynchronization}): a framework that buffers writes for an enlisted database
	 * (a JPA persistence context) flushes them there before phase one, so that the prepared branch
	 * holds them, and a flush that fails aborts the whole transaction. The idea is JTA's
	 * {@code TransactionSynchronizationRegistry.registerInterposedSynchronization}.
	 * @param synchronization the synchronization; run in registration order
	 * @throws IllegalStateException if the transaction is no longer active, or has begun to commit
	 * @since 0.1.0
	 */
	public void registerSynchronization(TransactionSynchronization synchronization) {
		Objects.requireNonNull(synchronization, "synchronization");
		synchronized (this) {
			checkActive();
			if (this.synchronizationsPrepared) {
				throw new IllegalStateException("Transaction " + this.transactionId + " has begun to commit: too late "
						+ "to register a synchronization");
			}
			this.synchronizations.add(synchronization);
			onEnd(() -> afterCompletion(synchronization));
		}
	}

	private void afterCompletion(TransactionSynchronization synchronization) {
		try {
			synchronization.afterCompletion(this.state);
		}
		catch (RuntimeException ex) {
			logger.warn("Synchronization {} of transaction {} failed after completion ({})", synchronization,
					this.transactionId, this.state, ex);
		}
	}

	/**
	 * Returns a framework's resource of this transaction, as JTA's
	 * {@code TransactionSynchronizationRegistry.getResource} does.
	 * @param key the key it was put under (the framework's own object, compared by {@code equals})
	 * @return the resource, or null if none was put
	 * @since 0.1.0
	 */
	public synchronized @Nullable Object getResource(Object key) {
		return this.resources.get(key);
	}

	/**
	 * Keeps a framework's resource with this transaction for the rest of its life (it is dropped
	 * with the transaction), as JTA's {@code TransactionSynchronizationRegistry.putResource} does.
	 * @param key the key, the framework's own object
	 * @param value the resource
	 * @throws IllegalStateException if the transaction is no longer active
	 * @since 0.1.0
	 */
	public synchronized void putResource(Object key, Object value) {
		checkActive();
		this.resources.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value,
				"value"));
	}

	/**
	 * Runs the synchronizations' {@code beforePrepare} once, while the transaction is still active.
	 * @throws TransactionAbortedException if one threw: the transaction aborted everywhere
	 */
	private void beforePrepare() {
		List<TransactionSynchronization> toRun;
		synchronized (this) {
			if (this.synchronizationsPrepared) {
				return;
			}
			this.synchronizationsPrepared = true;
			toRun = List.copyOf(this.synchronizations);
		}
		for (TransactionSynchronization synchronization : toRun) {
			try {
				synchronization.beforePrepare();
			}
			catch (RuntimeException ex) {
				logger.debug("Synchronization {} of transaction {} refused the commit: {}", synchronization,
						this.transactionId, ex.toString());
				throw abortAll(new ArrayList<>(this.enlisted.values()), ex);
			}
		}
	}

	/**
	 * Commits on every enlisted cluster and database. With one cluster and no database this is a
	 * plain Kafka commit (plus the participant's marker record, no decision written); with more, or
	 * with a database, every participant is flushed and checked and every database branch prepared
	 * (prepare), the decision is written to the decision log, and every participant commits.
	 * @throws TransactionAbortedException if the transaction aborted before the decision (or, with
	 *     one cluster, its broker did not commit it); nothing is visible anywhere
	 * @throws InDoubtTransactionException if the outcome is not final yet: the decision is durable
	 *     but some participant could not commit yet (recovery will commit it), or the decision
	 *     write's outcome is unknown, or a one-phase commit was not confirmed within the commit
	 *     timeout (twice) and Tandem keeps retrying it; {@link InDoubtTransactionException#outcome()}
	 *     tells the outcome once known. Never retry the work before it says ABORTED
	 * @throws HeuristicOutcomeException if a broker aborted a decided participant
	 * @throws IllegalStateException if the transaction is not active
	 */
	public void commit() {
		finishCommit(prepareToCommit());
	}

	/**
	 * First stage of a commit, which makes nothing visible: deferred offsets go to their group
	 * coordinators, every participant is flushed and its sends, its marker record among them (sent
	 * when the participant was enlisted), checked, and every database branch prepared, the waits
	 * overlapped where there are several ({@link PhaseOne}); a participant enlisted with nothing to
	 * commit is aborted. With two or more participants the transaction is PREPARED after it;
	 * with one or none it stays PREPARING (a plain Kafka commit follows). A pipeline runs this for
	 * transaction N+1 while N is decided and commits: the group coordinator keeps, of two
	 * transactional offset commits of one partition, the one appended later to
	 * {@code __consumer_offsets} (whatever order their transactions' markers come in), so running
	 * the stages of consecutive transactions in order on one thread each keeps the last offsets.
	 * @return what the second stage needs
	 * @throws TransactionAbortedException if a send, an offset commit or a flush failed (aborted
	 *     everywhere)
	 * @throws IllegalStateException if the transaction is not active
	 */
	PreparedCommit prepareToCommit() {
		long start = System.nanoTime();
		checkActive();
		awaitHeldSends();
		beforePrepare();
		to(TransactionState.PREPARING);
		List<Participant> working = new ArrayList<>();
		List<Participant> empty = new ArrayList<>();
		for (Participant participant : this.enlisted.values()) {
			(participant.hasWork() ? working : empty).add(participant);
		}
		abortIfADatabaseWasNotEnlisted();
		// Every participant sent its marker when it was enlisted: its append overlapped the
		// transaction's execution and does not wait behind the offset commit below.
		if (this.deferOffsets) {
			sendDeferredOffsets();
		}
		crashPoint(ProtocolStep.BEFORE_PREPARE);
		for (Participant participant : empty) {
			abortOrAbandon(participant);
		}
		PhaseOne.Prepared phaseOne = prepare(working);
		PreparedCommit prepared = new PreparedCommit(working, phaseOne.records(), phaseOne.branches(), start);
		if (!prepared.onePhase()) {
			to(TransactionState.PREPARED);
		}
		crashPoint(ProtocolStep.AFTER_PREPARE);
		return prepared;
	}

	/**
	 * Second stage of a commit: with one participant its plain Kafka commit; with more, the
	 * decision and the commits on every cluster. Exceptions as {@link #commit()}.
	 * @param prepared what {@link #prepareToCommit()} returned for this transaction
	 */
	void finishCommit(PreparedCommit prepared) {
		Decision decision = decideStage(prepared);
		if (decision != null) {
			commitDecidedStage(decision, prepared);
		}
	}

	/**
	 * The part of the second stage that fixes the outcome: with one participant its plain Kafka
	 * commit; with more, the decision. A pipeline runs it for its transactions one after another,
	 * so that N+1 is decided only once N's decision is durable. Exceptions as {@link #commit()}.
	 * @param prepared what {@link #prepareToCommit()} returned for this transaction
	 * @return the durable decision, whose commits {@link #commitDecidedStage} then runs; null if
	 *     the transaction already ended committed (one-phase, or the resolver committed it)
	 */
	@Nullable Decision decideStage(PreparedCommit prepared) {
		List<Participant> working = prepared.working();
		if (prepared.onePhase()) {
			commitOnePhase(working, prepared.records(), prepared.startNanos());
			return null;
		}
		Decision decision = new Decision(this.transactionId, this.context.owner(), System.currentTimeMillis(),
				prepared.records(), prepared.databases());
		if (!decide(decision, working)) {
			// The decision log was unreachable and the resolver's first attempt found the decision
			// durable and committed every participant.
			committed(working.size(), prepared.startNanos());
			return null;
		}
		to(TransactionState.DECIDED);
		crashPoint(ProtocolStep.AFTER_DECISION);
		return decision;
	}

	/**
	 * The commits of a decided transaction on every cluster. Its outcome can no longer be an
	 * abort, so a pipeline runs the commits of consecutive transactions at the same time (each on
	 * its own slot's producers): a {@code read_committed} reader still sees every partition in
	 * offset order (the last stable offset waits for the earlier transaction), and the group
	 * coordinator keeps the offset commit appended last whatever order the commit markers come in.
	 * Exceptions as {@link #commit()}, never {@link TransactionAbortedException}.
	 * @param decision what {@link #decideStage} returned
	 * @param prepared what {@link #prepareToCommit()} returned for this transaction
	 */
	void commitDecidedStage(Decision decision, PreparedCommit prepared) {
		commitDecided(decision, prepared.working(), prepared.startNanos());
	}

	/**
	 * A database whose branch could not begin: the transaction aborts everywhere rather than
	 * commit its records without what it meant to write there.
	 */
	private void abortIfADatabaseWasNotEnlisted() {
		Map.Entry<String, RuntimeException> unenlisted;
		synchronized (this) {
			if (this.unenlistedDatabases.isEmpty()) {
				return;
			}
			unenlisted = this.unenlistedDatabases.entrySet().iterator().next();
		}
		throw abortAll(new ArrayList<>(this.enlisted.values()), new TandemException("Database '" + unenlisted.getKey()
				+ "' could not join transaction " + this.transactionId + " (" + unenlisted.getValue().getMessage()
				+ "), so what was meant to be written there is not in it: the transaction cannot commit",
				unenlisted.getValue()));
	}

	/**
	 * A pipeline's transaction: waits until the previous transaction's records are acknowledged
	 * and every record of this one is with its producer, so that phase one checks them all.
	 * @throws TransactionAbortedException if that did not happen in time or a held send threw
	 */
	private void awaitHeldSends() {
		HeldSends sends = this.held;
		if (sends == null) {
			return;
		}
		try {
			sends.awaitReleased(this.context.commitTimeout());
		}
		catch (RuntimeException ex) {
			throw abortAll(new ArrayList<>(this.enlisted.values()), ex);
		}
	}

	private void sendDeferredOffsets() {
		List<Participant> all = new ArrayList<>(this.enlisted.values());
		try {
			for (Participant participant : all) {
				participant.sendDeferredOffsets();
			}
		}
		catch (RuntimeException ex) {
			throw abortAll(all, ex);
		}
	}

	private void crashPoint(ProtocolStep step) {
		this.context.hook().reached(this.transactionId, step);
	}

	/** Ends a committed transaction: the last crash point, the slot back, the listener told. */
	private void committed(int participants, long start) {
		crashPoint(ProtocolStep.AFTER_COMMIT);
		releaseSlot();
		this.context.listener().onCommitted(this.transactionId, participants, Duration.ofNanos(System.nanoTime() - start));
	}

	/**
	 * One participant with work: a plain Kafka commit, no decision written. The participant
	 * still writes its marker, so that a commit whose answer never came (the broker may complete
	 * it later) or that the broker refused can be settled by one {@code read_committed} fetch:
	 * such a commit is never reported as aborted unless the marker says so.
	 */
	private void commitOnePhase(List<Participant> working, List<ParticipantRecord> records, long start) {
		if (working.isEmpty()) {
			to(TransactionState.COMMITTED);
			committed(0, start);
			return;
		}
		Participant participant = working.get(0);
		ParticipantRecord marker = records.get(0);
		try {
			participant.commit();
			to(TransactionState.COMMITTED);
		}
		catch (RuntimeException ex) {
			// The commit request may have reached the broker: aborting now could report as aborted
			// what the broker still commits. Settle the outcome instead.
			logger.warn("One-phase commit of {} on cluster '{}' failed with an unknown outcome ({}); settling it",
					participant.transactionalId, participant.cluster, ex.toString());
			handOver(this.context.recovery().onePhaseUnknown(this.transactionId, participant, marker, this.slot, ex), ex,
					"its one-phase commit on cluster '" + participant.cluster
							+ "' has not been confirmed yet (the broker may still complete it)",
					"its broker did not commit it (its marker record was aborted)");
		}
		committed(1, start);
	}

	/** The marker record: key the transaction id, value its owner, on the marker topic. */
	private ProducerRecord<byte[], byte[]> markerRecord() {
		return new ProducerRecord<>(this.context.markerTopic(), this.transactionId.getBytes(StandardCharsets.UTF_8),
				this.context.owner().getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Phase one: every participant flushed and checked, every database branch prepared, the waits
	 * overlapped where there are several ({@link PhaseOne}). Any failure aborts everything.
	 */
	private PhaseOne.Prepared prepare(List<Participant> working) {
		try {
			// a pipeline's transaction is prepared within the commit timeout: nothing flushes it
			// synchronously, and a cluster that does not answer must not hold its successors
			return new PhaseOne(this.transactionId, this.context.commitExecutor(), this.context.commitTimeout(),
					this.held != null)
				.run(working, this.databases.values());
		}
		catch (ProtocolHook.SimulatedCrashException ex) {
			throw ex;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw abortAll(working, ex);
		}
		catch (RuntimeException | ExecutionException ex) {
			throw abortAll(working, ex);
		}
	}

	/**
	 * Writes the decision. A write with an unknown outcome is resolved (a late write could still
	 * land, so an abort is recorded and what won is read); a decision log that stays unreachable
	 * hands the transaction to the resolver.
	 * @return true if the decision is durable; false if the resolver already committed it
	 * @throws TransactionAbortedException if the decision was not recorded (aborted everywhere)
	 * @throws InDoubtTransactionException if the resolver has not settled it yet
	 * @throws HeuristicOutcomeException if the resolver found a mixed outcome
	 */
	private boolean decide(Decision decision, List<Participant> working) {
		try {
			this.context.decisionLog().decide(decision, this.context.incarnation(), this.context.decisionTimeout());
			return true;
		}
		catch (ProtocolHook.SimulatedCrashException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			logger.warn("Decision write for transaction {} failed or timed out; resolving its outcome", this.transactionId, ex);
		}
		DecisionState resolved;
		try {
			resolved = this.context.recovery().resolveUnknownDecision(decision);
		}
		catch (DecisionLogException ex) {
			handOver(this.context.recovery().decisionUnknown(decision, this.slot), ex,
					"its decision write has an unknown outcome (the decision log is unreachable)",
					"its decision was not recorded");
			return false;
		}
		if (resolved == DecisionState.DECIDED || resolved == DecisionState.COMPLETED) {
			return true;
		}
		throw abortAll(working, new DecisionLogException("Decision for " + this.transactionId + " not recorded"));
	}

	/**
	 * Hands this transaction to the resolver (state IN_DOUBT; the slot is the resolver's now) and
	 * ends commit() accordingly: returns normally, COMMITTED, if the resolver's first attempt
	 * committed it; otherwise throws what the caller must know. A later outcome moves the state on.
	 */
	private void handOver(CompletableFuture<TransactionState> outcome, Throwable cause, String why,
			String whyAborted) {
		to(TransactionState.IN_DOUBT);
		this.slotReleased = true;
		for (DatabaseParticipant database : this.databases.values()) {
			database.handOver();
		}
		TransactionState resolved = outcome.getNow(null);
		if (resolved == null) {
			outcome.thenAccept(this::to);
			this.context.listener().onInDoubt(this.transactionId, cause);
			throw new InDoubtTransactionException(this.transactionId, "Transaction " + this.transactionId
					+ " is in-doubt: " + why + "; Tandem resolves it in the background (see "
					+ "CrossClusterTransactionManager.inDoubtOutcome)", cause, outcome,
					this.context.recovery()::heuristicOutcome);
		}
		to(resolved);
		InDoubtTransactionException.requireCommitted(this.transactionId, resolved, cause, whyAborted,
				this.context.recovery()::heuristicOutcome);
	}

	private void commitDecided(Decision decision, List<Participant> working, long start) {
		// With a fault-injection hook the first participant commits alone, so that MID_COMMIT falls
		// where exactly one participant has committed.
		List<CompletableFuture<@Nullable Throwable>> commits = Participant.startCommits(working,
				this.context.commitExecutor(),
				this.context.hook().injectsFaults() ? () -> crashPoint(ProtocolStep.MID_COMMIT) : null);
		// The branches commit on this thread while the clusters' commits are in flight.
		Map<String, Throwable> databaseFailures = new LinkedHashMap<>();
		for (DatabaseParticipant database : this.databases.values()) {
			Throwable failure = database.commitOrFailure();
			if (failure != null) {
				databaseFailures.put("database:" + database.database, failure);
			}
		}
		Map<Participant, Throwable> failures = Participant.awaitCommits(working, commits);
		if (failures.isEmpty() && databaseFailures.isEmpty()) {
			to(TransactionState.COMMITTED);
			crashPoint(ProtocolStep.AFTER_COMMIT);
			Completions.record(this.context.decisionLog(), this.transactionId);
			releaseSlot();
			this.context.listener().onCommitted(this.transactionId, working.size() + this.databases.size(),
					Duration.ofNanos(System.nanoTime() - start));
			return;
		}
		// Some participant did not commit. Never abort now: the decision says commit.
		Throwable first = !failures.isEmpty() ? failures.values().iterator().next()
				: databaseFailures.values().iterator().next();
		List<String> failed = new ArrayList<>(failures.keySet().stream().map((p) -> p.cluster).toList());
		failed.addAll(databaseFailures.keySet());
		logger.warn("Transaction {} is decided but {} could not commit yet; leaving it to recovery",
				this.transactionId, failed, first);
		handOver(this.context.recovery().decidedNotCommitted(decision, this.slot), first,
				"it is decided but could not commit on " + failed + " yet", "its decision was not recorded");
		this.context.listener().onCommitted(this.transactionId, working.size() + this.databases.size(),
				Duration.ofNanos(System.nanoTime() - start));
	}

	private TransactionAbortedException abortAll(List<Participant> participants, Throwable cause) {
		HeldSends sends = this.held;
		if (sends != null) {
			// Held records are never sent now, and one being passed on ends before the aborts.
			sends.discard(cause);
		}
		synchronized (this) {
			if (this.state != TransactionState.ABORTING) {
				to(TransactionState.ABORTING);
			}
		}
		for (Participant participant : participants) {
			abortOrAbandon(participant);
		}
		for (DatabaseParticipant database : this.databases.values()) {
			database.rollback();
		}
		to(TransactionState.ABORTED);
		releaseSlot();
		this.context.listener().onAborted(this.transactionId, cause);
		return new TransactionAbortedException("Transaction " + this.transactionId + " aborted on every cluster: "
				+ cause.getMessage(), cause);
	}

	/**
	 * Aborts a participant's Kafka transaction, waiting at most its producer's {@code max.block.ms}
	 * (the commit timeout unless the cluster sets it); a participant whose abort fails (its cluster
	 * does not answer) is abandoned: the broker aborts the transaction when the slot's next
	 * producer initializes the transactional id, or at its transaction timeout.
	 */
	private static void abortOrAbandon(Participant participant) {
		try {
			participant.abort();
		}
		catch (RuntimeException ex) {
			logger.warn("Abort of {} on cluster '{}' failed; abandoning its producer (the broker aborts the transaction when a new producer initializes it)",
					participant.transactionalId, participant.cluster, ex);
			participant.abandon();
		}
	}

	/**
	 * Aborts on every enlisted cluster; nothing sent in this transaction becomes visible.
	 * Idempotent after an abort.
	 * @throws IllegalStateException if the transaction is already committing or committed, or was
	 *     handed to a {@link TransactionPipeline}
	 */
	public void abort() {
		if (this.pipelined) {
			throw new IllegalStateException("Transaction " + this.transactionId + " was handed to its pipeline "
					+ "(commitAsync): only the pipeline ends it now");
		}
		abortNow();
	}

	/**
	 * Marks this transaction as the pipeline's ({@link #abort()} and {@link #close()} refuse it)
	 * and ends its sends. Its records are not flushed here: they reach their producers only after
	 * the previous transaction's records are acknowledged ({@link HeldSends}), and the next
	 * transaction's only after this one's, so records of consecutive transactions keep their
	 * order in every partition while the caller's thread goes on. A send that failed is found by
	 * the pipeline's prepare. The synchronizations' {@code beforePrepare} runs first, on this
	 * thread ({@link TransactionAbortedException} if one refuses: the transaction aborted).
	 */
	void handToPipeline() {
		// on the caller's thread, where the synchronizations' resources (a persistence context) live
		beforePrepare();
		HeldSends sends = this.held;
		if (sends != null) {
			sends.close();
		}
		this.pipelined = true;
	}

	/** The pipeline's abort of a transaction it was handed (an earlier one failed). */
	void abortInPipeline() {
		abortNow();
	}

	private void abortNow() {
		synchronized (this) {
			if (this.state == TransactionState.ABORTED) {
				return;
			}
			to(TransactionState.ABORTING);
		}
		abortAll(new ArrayList<>(this.enlisted.values()), new TandemException("aborted by the application"));
	}

	/**
	 * Aborts the transaction if it is still active and not handed to a pipeline; does nothing
	 * otherwise. For try-with-resources.
	 */
	@Override
	public void close() {
		if (this.state == TransactionState.ACTIVE && !this.pipelined) {
			abort();
		}
	}

	private void releaseSlot() {
		if (!this.slotReleased) {
			this.slotReleased = true;
			this.context.pool().release(this.slot);
		}
	}

}
