package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.ClusterClients;

/**
 * The participant slots of one app instance: one transactional producer per (cluster, slot); slots
 * are taken by a transaction and released when it ends. With a lease, the transactional ids are
 * this run's own, {@code <id-prefix>.<cluster>.<instance-id>.<slot>.<run-id>} ({@link TransactionalIds}):
 * a {@code initTransactions()} on them aborts nothing of another run, and the open transactions of
 * the runs whose lease this run took (they can never decide again) are fenced at start-up. Without
 * a lease, the ids are the legacy {@code <id-prefix>.<cluster>.<instance-id>.<slot>}, shared by
 * every run, so that a restarted instance fences its own zombies, and the open transactions a
 * previous run left on slots this one does not use are aborted at start-up.
 * <p>
 * Thread-safe: {@link #take(Duration)} and {@link #release(ParticipantSlot)} from any thread;
 * {@link #start()}, {@link #close()} and {@link #abandon()} from the manager's lifecycle calls.
 */
final class ParticipantPool {

	private static final Logger logger = LoggerFactory.getLogger(ParticipantPool.class);

	private final ClusterClients clients;

	private final String idPrefix;

	private final String instanceId;

	private final int slotCount;

	/** This run's id in its transactional ids (its lease's incarnation), or null for the legacy ids. */
	private final @Nullable String runId;

	private final Duration transactionTimeout;

	private final Duration commitTimeout;

	private final BiConsumer<String, Producer<?, ?>> producerCreated;

	private final PendingRecoveries pendingRecoveries;

	/** The topic every participant's marker record goes to; its metadata is read when a producer opens. */
	private final String markerTopic;

	/** The participants' {@code retry.backoff.ms} unless a cluster sets one. */
	static final int PARTICIPANT_RETRY_BACKOFF_MS = 10;

	private final List<ParticipantSlot> slots = new ArrayList<>();

	private final BlockingQueue<ParticipantSlot> free = new LinkedBlockingQueue<>();

	private volatile boolean open;

	/** The runs before this one (from {@link #start}): their transactions left open are aborted. */
	private volatile Set<String> previousRuns = Set.of();

	/**
	 * Clusters whose open transactions of previous runs were not aborted at start (the cluster was
	 * down, or recovery of a decided transaction on it was pending): done before the first
	 * producer of the cluster is initialized, once recovery there is no longer pending.
	 */
	private final Set<String> leftOpenUnchecked = ConcurrentHashMap.newKeySet();

	/** Clusters whose previous runs' undecided transactions were aborted before the recovery at start. */
	private final Set<String> leftOpenChecked = ConcurrentHashMap.newKeySet();

	/** Transactional ids never aborted as left open: the participants of decided transactions. */
	private volatile Set<String> decidedParticipants = Set.of();

	ParticipantPool(ClusterClients clients, String idPrefix, String instanceId, @Nullable String runId, int slotCount,
			Duration transactionTimeout, Duration commitTimeout, BiConsumer<String, Producer<?, ?>> producerCreated,
			PendingRecoveries pendingRecoveries, String markerTopic) {
		this.clients = clients;
		this.idPrefix = idPrefix;
		this.instanceId = instanceId;
		this.runId = runId;
		this.slotCount = slotCount;
		this.transactionTimeout = transactionTimeout;
		this.commitTimeout = commitTimeout;
		this.producerCreated = producerCreated;
		this.pendingRecoveries = pendingRecoveries;
		this.markerTopic = markerTopic;
	}

	int slotCount() {
		return this.slotCount;
	}

	String transactionalId(String cluster, int slot) {
		return TransactionalIds.of(this.idPrefix, cluster, this.instanceId, slot, this.runId);
	}

	/**
	 * Returns the configuration of a transactional producer of a cluster, without its
	 * transactional id: idempotent, {@code acks=all}, the transaction timeout, and
	 * {@code max.block.ms} bounded by the commit timeout and {@code retry.backoff.ms} of
	 * {@value #PARTICIPANT_RETRY_BACKOFF_MS} ms unless the cluster sets them.
	 */
	Map<String, Object> producerConfig(String cluster) {
		Map<String, Object> config = this.clients.producerConfig(cluster);
		config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		config.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, (int) this.transactionTimeout.toMillis());
		// Bounds initTransactions, commitTransaction, abortTransaction and a send blocked on metadata.
		config.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, this.commitTimeout.toMillis());
		// A TxnOffsetCommit answered CONCURRENT_TRANSACTIONS (the slot's previous transaction still
		// writing its markers) is retried after retry.backoff.ms, doubling: start at 10 ms, not 100.
		config.putIfAbsent(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, PARTICIPANT_RETRY_BACKOFF_MS);
		return config;
	}

	/**
	 * Before the recovery at start: aborts the open transactions previous runs of this instance
	 * left on every available cluster, except the participants of the decided transactions, which
	 * the recovery commits. An undecided transaction left open holds back the last stable offset
	 * of its partitions, the marker partitions included: a decided transaction already committed
	 * whose marker sits behind it cannot be told committed, so its recovery waited, its clusters
	 * stayed pending (no producer initialized there), and nothing aborted the undecided one until
	 * {@code transaction.timeout.ms} (the app's and the mirror's chaos lots: halts after the
	 * decision and after the commits). A previous run never decides again once this run holds the
	 * lease, so a transaction of it that is not among the decided ones never commits. A cluster
	 * whose transactions cannot be listed or aborted now is left for {@link #start} and
	 * {@link #open}.
	 * @param unavailable clusters known to be down
	 * @param previousRuns the incarnations that held this instance's lease before this run took it
	 * @param decided the transactional ids of the decided transactions' participants
	 */
	void abortUndecidedLeftOpen(Set<String> unavailable, Set<String> previousRuns, Set<String> decided) {
		this.previousRuns = Set.copyOf(previousRuns);
		this.decidedParticipants = Set.copyOf(decided);
		for (String cluster : this.clients.names()) {
			if (unavailable.contains(cluster)) {
				continue;
			}
			try {
				abortLeftOpen(cluster, true);
				this.leftOpenChecked.add(cluster);
			}
			catch (RuntimeException ex) {
				logger.warn("Could not abort the open transactions previous runs left on cluster '{}' before the "
						+ "recovery ({}); tried again once it is done", cluster, ex.toString());
			}
		}
	}

	/**
	 * Aborts what previous runs left open on every available cluster, then creates every slot and
	 * initializes its producers. A producer of an unavailable cluster is left for its first use to
	 * initialize. Call after the instance's decided transactions are recovered: what is fenced
	 * aborts.
	 * @param unavailable clusters known to be down: their producers are not initialized now
	 * @param requireAll whether a producer that cannot be initialized fails the start
	 * @param previousRuns the incarnations that held this instance's lease before this run took it
	 *     (they never get it back, so never decide again): their open transactions are fenced;
	 *     empty without a lease
	 * @throws TandemException if a producer cannot be initialized and {@code requireAll}
	 */
	void start(Set<String> unavailable, boolean requireAll, Set<String> previousRuns) {
		this.previousRuns = Set.copyOf(previousRuns);
		for (String cluster : this.clients.names()) {
			// an "orphan" may be a decided transaction's participant still to recover: left for
			// open() once the recovery is done
			if (this.leftOpenChecked.contains(cluster)) {
				continue; // before the recovery, with its decided transactions spared
			}
			if (!unavailable.contains(cluster) && !this.pendingRecoveries.isPending(cluster)) {
				abortLeftOpen(cluster, false);
			}
			else {
				this.leftOpenUnchecked.add(cluster);
			}
		}
		Set<String> down = new HashSet<>(unavailable);
		for (int i = 0; i < this.slotCount; i++) {
			ParticipantSlot slot = new ParticipantSlot(i);
			// kept before its producers open, so that close() and abandon() reach them if a later one fails the start
			this.slots.add(slot);
			for (String cluster : this.clients.names()) {
				Participant participant = new Participant(cluster, transactionalId(cluster, i));
				slot.participants.put(cluster, participant);
				if (down.contains(cluster) || this.pendingRecoveries.isPending(cluster)) {
					continue;
				}
				try {
					open(participant);
				}
				catch (TandemException ex) {
					if (requireAll) {
						throw ex;
					}
					down.add(cluster);
					logger.warn("Cluster '{}' is not available ({}); its producers are initialized when a transaction "
							+ "first uses it", cluster, ex.getMessage());
				}
			}
			this.free.add(slot);
		}
		this.open = true;
	}

	/**
	 * Takes a free slot.
	 * @return the slot, or null if none became free within the timeout
	 */
	@Nullable ParticipantSlot take(Duration timeout) throws InterruptedException {
		return this.free.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
	}

	/** Returns a slot to the pool; after close, does nothing. */
	void release(ParticipantSlot slot) {
		if (this.open) {
			this.free.add(slot);
		}
	}

	/**
	 * Creates and initializes the participant's producer unless it has one.
	 * @throws ClusterUnavailableException while recovery on the participant's cluster is pending
	 * @throws TandemException if {@code initTransactions()} fails
	 */
	void open(Participant participant) {
		if (participant.isReady()) {
			return;
		}
		if (this.pendingRecoveries.isPending(participant.cluster)) {
			throw new ClusterUnavailableException(participant.cluster, "Cluster '" + participant.cluster + "': recovery "
					+ "of in-doubt transactions on it is still pending (it was unavailable at start-up); no producer of it "
					+ "is initialized until then");
		}
		if (this.leftOpenUnchecked.remove(participant.cluster)) {
			// Not done at start (the cluster was down, or a recovery on it pending): the previous
			// runs' undecided transactions would otherwise hold back every read_committed reader of
			// their partitions until transaction.timeout.ms. Their decided ones are committed by now.
			try {
				abortLeftOpen(participant.cluster, false);
			}
			catch (RuntimeException ex) {
				this.leftOpenUnchecked.add(participant.cluster);
				throw ex;
			}
		}
		Map<String, Object> config = producerConfig(participant.cluster);
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, participant.transactionalId);
		config.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, participant.transactionalId);
		KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
				new ByteArraySerializer());
		try {
			producer.initTransactions();
		}
		catch (RuntimeException ex) {
			producer.close(Duration.ZERO);
			throw new TandemException("Could not initialize transactional producer " + participant.transactionalId
					+ " on cluster '" + participant.cluster + "' (" + config.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)
					+ "): " + ex.getMessage(), ex);
		}
		// The marker topic's metadata now rather than in the slot's first transaction: a producer's
		// first send to a topic it does not know waits for a metadata round trip, on the caller's
		// thread, and a processor's first transactions after a start would each pay it once per slot
		// (issue 25: 8 slots x 85 ms on the polling thread at 80 ms from the source). Not needed for
		// correctness: if it fails, the first send fetches it again.
		try {
			producer.partitionsFor(this.markerTopic);
		}
		catch (RuntimeException ex) {
			logger.debug("Metadata of marker topic '{}' not read for {}: {}", this.markerTopic,
					participant.transactionalId, ex.toString());
		}
		participant.open(producer, !config.containsKey(ProducerConfig.PARTITIONER_CLASS_CONFIG)
				&& !Boolean.parseBoolean(String.valueOf(config.get(ProducerConfig.PARTITIONER_IGNORE_KEYS_CONFIG))));
		try {
			this.producerCreated.accept(participant.cluster, producer);
		}
		catch (RuntimeException ex) {
			logger.warn("Producer listener failed for {}", participant.transactionalId, ex);
		}
	}

	/**
	 * Aborts the open transactions previous runs of this instance left on a cluster (an open
	 * transaction holds back every read_committed reader of its partitions). With per-run ids: those
	 * of the runs that held the lease before this one, and every legacy id (runs of versions before
	 * per-run ids); never another run's, which may be newer and alive. With the legacy ids: those of
	 * slots this run does not use (it ran with more slots), as initTransactions() fences only the ids
	 * in use; before this run's slots exist ({@code beforeSlots}), every one. Never a decided
	 * transaction's participant ({@link #abortUndecidedLeftOpen}): the recovery commits it. Needs
	 * DESCRIBE on the transactional ids; without it, logs a warning.
	 */
	private void abortLeftOpen(String cluster, boolean beforeSlots) {
		Set<String> previousRuns = this.previousRuns;
		Set<String> decided = this.decidedParticipants;
		for (String id : openTransactions(cluster, this.instanceId)) {
			TransactionalIds.Parsed parsed = TransactionalIds.parse(id, this.idPrefix, cluster);
			if (parsed == null || decided.contains(id)) {
				continue;
			}
			// legacy ids: before this run's slots exist, every one open is a previous run's
			boolean leftOpen = (this.runId == null)
					? parsed.runId() == null && (beforeSlots || parsed.slot() >= this.slotCount)
					: parsed.runId() == null || previousRuns.contains(parsed.runId());
			if (leftOpen) {
				abortOpenTransaction(cluster, id);
				logger.info("Aborted the open transaction {} a previous run left on cluster '{}'", id, cluster);
			}
		}
	}

	/**
	 * Fences the transactional ids of a claimed run of another instance of this app, and of the runs
	 * before it in its lease's history, that have an open transaction, on every cluster: their
	 * per-run ids, and the legacy ids of the instance (runs
	 * of versions before per-run ids). {@code initTransactions()} on each aborts the open
	 * transaction at once (the broker would otherwise keep it, and hold back every
	 * {@code read_committed} reader of its partitions, until {@code transaction.timeout.ms}) and
	 * raises the producer epoch, so a zombie of that run can no longer write in it. A newer run of
	 * the instance has ids of its own and is never touched, however late this call comes. Call only
	 * after the run's decided transactions are committed: fencing aborts what is open.
	 * @param otherInstanceId the instance whose transactional ids to fence
	 * @param runs the claimed run's incarnation (its run id) and those of its lease's past runs
	 * @return the transactional ids fenced
	 * @throws TandemException if a producer cannot be initialized
	 */
	List<String> fence(String otherInstanceId, Set<String> runs) {
		List<String> fenced = new ArrayList<>();
		for (String cluster : this.clients.names()) {
			for (String id : openTransactions(cluster, otherInstanceId)) {
				TransactionalIds.Parsed parsed = TransactionalIds.parse(id, this.idPrefix, cluster);
				if (parsed != null && (parsed.runId() == null || runs.stream().anyMatch(parsed::isOfRun))) {
					abortOpenTransaction(cluster, id);
					fenced.add(id);
				}
			}
		}
		return fenced;
	}

	/**
	 * Lists the ongoing transactions of an instance's transactional ids on a cluster; logs a
	 * warning and returns none if the cluster cannot list them (no DESCRIBE permission, unreachable).
	 */
	private List<String> openTransactions(String cluster, String instance) {
		String prefix = TransactionalIds.prefix(this.idPrefix, cluster, instance);
		List<String> ids = new ArrayList<>();
		Admin admin = this.clients.admin(cluster, this.commitTimeout);
		try {
			for (TransactionListing listing : admin
				.listTransactions(new ListTransactionsOptions()
					.filterStates(List.of(org.apache.kafka.clients.admin.TransactionState.ONGOING)))
				.all()
				.get(this.commitTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
				// exactly <prefix><slot>[.<run-id>]: instance "web" must never take "web.1"'s ids for its own
				String id = listing.transactionalId();
				TransactionalIds.Parsed parsed = TransactionalIds.parse(id, this.idPrefix, cluster);
				if (parsed != null && parsed.instanceId().equals(instance)) {
					ids.add(id);
				}
			}
		}
		catch (Exception ex) {
			logger.warn("Could not list the open transactions of {}* on cluster '{}': {}", prefix, cluster, ex.toString());
		}
		finally {
			admin.close(Duration.ofSeconds(1));
		}
		return ids;
	}

	private void abortOpenTransaction(String cluster, String transactionalId) {
		Participant participant = new Participant(cluster, transactionalId);
		open(participant);
		participant.close(this.commitTimeout);
	}

	/**
	 * Closes every producer without aborting its open transaction, as a crashed process would leave
	 * it.
	 */
	void abandon() {
		this.open = false;
		for (ParticipantSlot slot : this.slots) {
			for (Participant participant : slot.participants.values()) {
				participant.abandon();
			}
		}
	}

	/** Closes every producer gracefully: an open transaction is aborted. */
	void close() {
		this.open = false;
		for (ParticipantSlot slot : this.slots) {
			for (Participant participant : slot.participants.values()) {
				try {
					participant.close(this.commitTimeout);
				}
				catch (RuntimeException ex) {
					logger.warn("Error closing producer {}", participant.transactionalId, ex);
				}
			}
		}
	}

}
