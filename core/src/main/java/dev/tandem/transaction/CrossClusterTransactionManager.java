package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;
import dev.tandem.transaction.MarkerReader.MarkerOutcome;
import dev.tandem.transaction.internals.ProducerInternals;

/**
 * Runs cross-cluster transactions for one app instance: owns one transactional producer per
 * (cluster, slot), the consumers whose offsets it commits, and recovery of this instance's
 * in-doubt transactions (DESIGN.md §2).
 * <p>
 * Lifecycle: build, {@link #start()} (recovers in-doubt transactions, then initializes the
 * producers, which fences zombies and aborts anything undecided), {@link #begin()} any number of
 * times, {@link #close()}. Thread-safe: up to {@code slots} transactions run at once; {@code begin}
 * blocks while every slot is busy.
 *
 * @since 0.1.0
 */
public final class CrossClusterTransactionManager implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(CrossClusterTransactionManager.class);

	/** Prefix of the client properties that Tandem's own interceptors read. */
	private static final String TANDEM_CLIENT_CONFIG_PREFIX = "tandem.";

	/** Default control topic for marker records, created on every cluster. */
	public static final String DEFAULT_MARKER_TOPIC = "tandem-markers";

	private enum Lifecycle {
		NEW, RUNNING, CLOSED
	}

	private final Map<String, Map<String, Object>> clusters;

	private final String idPrefix;

	private final String instanceId;

	private final DecisionLog decisionLog;

	private final String markerTopic;

	private final int slotCount;

	private final Duration transactionTimeout;

	private final Duration commitTimeout;

	private final Duration decisionTimeout;

	private final ProtocolHook hook;

	private final TransactionListener listener;

	private final Map<String, CrossClusterTransaction> active = new java.util.concurrent.ConcurrentHashMap<>();

	private final ParticipantProtocol participantProtocol;

	private final Map<Consumer<?, ?>, String> consumers = Collections.synchronizedMap(new IdentityHashMap<>());

	private final BlockingQueue<ParticipantSlot> freeSlots = new LinkedBlockingQueue<>();

	private final List<ParticipantSlot> slots = new ArrayList<>();

	private final ExecutorService executor;

	private final AtomicInteger inDoubt = new AtomicInteger();

	private final Map<String, PendingOutcome> pending = new java.util.concurrent.ConcurrentHashMap<>();

	private final Map<String, HeuristicOutcome> heuristics = new java.util.concurrent.ConcurrentHashMap<>();

	private final java.util.concurrent.ScheduledExecutorService resolver;

	private final Duration recoveryInterval;

	private final java.util.function.BiConsumer<String, org.apache.kafka.clients.producer.Producer<?, ?>> producerCreated;

	private volatile Lifecycle lifecycle = Lifecycle.NEW;

	private CrossClusterTransactionManager(Builder builder) {
		this.clusters = Collections.unmodifiableMap(new LinkedHashMap<>(builder.clusters));
		this.idPrefix = Objects.requireNonNull(builder.idPrefix, "idPrefix");
		this.instanceId = Objects.requireNonNull(builder.instanceId, "instanceId");
		this.decisionLog = Objects.requireNonNull(builder.decisionLog, "decisionLog");
		this.markerTopic = builder.markerTopic;
		this.slotCount = builder.slots;
		this.transactionTimeout = builder.transactionTimeout;
		this.commitTimeout = builder.commitTimeout;
		this.decisionTimeout = builder.decisionTimeout;
		this.hook = builder.hook;
		this.listener = new CompositeListener(List.copyOf(builder.listeners));
		this.participantProtocol = builder.participantProtocol;
		this.recoveryInterval = builder.recoveryInterval;
		this.producerCreated = builder.producerCreated;
		if (this.clusters.isEmpty()) {
			throw new IllegalArgumentException("At least one cluster must be configured");
		}
		this.resolver = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "tandem-recovery-" + this.instanceId);
			thread.setDaemon(true);
			return thread;
		});
		AtomicInteger threads = new AtomicInteger();
		this.executor = Executors.newCachedThreadPool((runnable) -> {
			Thread thread = new Thread(runnable, "tandem-commit-" + this.instanceId + "-" + threads.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * Returns a new builder.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Recovers this instance's in-doubt transactions, then creates and initializes every
	 * participant producer (which aborts any undecided transaction a previous incarnation left
	 * open and fences its zombies), and creates the marker topic where missing.
	 * @throws TandemException if a cluster is unreachable, or an in-doubt transaction cannot be
	 *     recovered within the commit timeout
	 * @throws HeuristicOutcomeException never: heuristic outcomes found by recovery are reported
	 *     to the listener and logged at ERROR
	 * @throws IllegalStateException if already started or closed
	 */
	public synchronized void start() {
		if (this.lifecycle != Lifecycle.NEW) {
			throw new IllegalStateException("Manager is " + this.lifecycle);
		}
		ProducerInternals.verify();
		for (String cluster : this.clusters.keySet()) {
			createMarkerTopic(cluster);
		}
		List<Decision> decisions = this.decisionLog.inDoubt(owner(), this.decisionTimeout);
		if (!decisions.isEmpty()) {
			logger.info("Recovering {} in-doubt transaction(s) of {}", decisions.size(), owner());
		}
		for (Decision decision : decisions) {
			HeuristicOutcome heuristic = recover(decision);
			if (heuristic == null) {
				this.listener.onRecovered(decision.transactionId());
			}
		}
		for (String cluster : this.clusters.keySet()) {
			abortOrphanedTransactions(cluster);
		}
		for (int i = 0; i < this.slotCount; i++) {
			ParticipantSlot slot = new ParticipantSlot(i);
			for (String cluster : this.clusters.keySet()) {
				Participant participant = new Participant(cluster, transactionalId(cluster, i));
				slot.participants.put(cluster, participant);
				ensureOpen(participant);
			}
			this.slots.add(slot);
			this.freeSlots.add(slot);
		}
		this.lifecycle = Lifecycle.RUNNING;
		logger.info("Tandem transaction manager {} started: clusters {}, {} slot(s)", owner(), this.clusters.keySet(),
				this.slotCount);
	}

	/**
	 * Begins a cross-cluster transaction, waiting for a free slot up to the commit timeout.
	 * @return the transaction
	 * @throws IllegalStateException if the manager is not running
	 * @throws TandemException if no slot became free in time
	 */
	public CrossClusterTransaction begin() {
		if (this.lifecycle != Lifecycle.RUNNING) {
			throw new IllegalStateException("Manager is " + this.lifecycle + "; call start() first");
		}
		try {
			ParticipantSlot slot = this.freeSlots.poll(this.commitTimeout.toMillis(), TimeUnit.MILLISECONDS);
			if (slot == null) {
				throw new TandemException("No free transaction slot within " + this.commitTimeout + " ("
						+ this.slotCount + " slot(s) configured)");
			}
			this.active.values().removeIf((txn) -> txn.state().isTerminal());
			CrossClusterTransaction transaction = new CrossClusterTransaction(this, slot,
					this.instanceId + "-" + UUID.randomUUID());
			this.active.put(transaction.transactionId(), transaction);
			return transaction;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted while waiting for a transaction slot", ex);
		}
	}

	/**
	 * Creates a consumer of a cluster whose offsets transactions commit on that same cluster;
	 * {@code isolation.level=read_committed} and {@code enable.auto.commit=false} are enforced.
	 * @param <K> key type
	 * @param <V> value type
	 * @param cluster the cluster's configured name
	 * @param overrides consumer properties (at least {@code group.id})
	 * @param keyDeserializer key deserializer
	 * @param valueDeserializer value deserializer
	 * @return the consumer, registered with its cluster; close it yourself
	 * @throws IllegalArgumentException if the cluster is unknown
	 */
	public <K, V> KafkaConsumer<K, V> createConsumer(String cluster, Map<String, Object> overrides,
			Deserializer<K> keyDeserializer, Deserializer<V> valueDeserializer) {
		Map<String, Object> config = new HashMap<>(clusterConfig(cluster));
		ClientConfigs.retain(config, ConsumerConfig.configNames());
		// The cluster's configuration is the producers'; their interceptors are not consumer interceptors.
		config.remove(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG);
		config.putAll(overrides);
		config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, IsolationLevel.READ_COMMITTED.toString());
		config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		KafkaConsumer<K, V> consumer = new KafkaConsumer<>(config, keyDeserializer, valueDeserializer);
		registerConsumer(cluster, consumer);
		return consumer;
	}

	/**
	 * Registers a consumer created elsewhere as reading from a cluster, so transactions can commit
	 * its offsets there. The consumer must use {@code read_committed} and no auto-commit.
	 * @param cluster the cluster's configured name
	 * @param consumer the consumer
	 * @throws IllegalArgumentException if the cluster is unknown
	 */
	public void registerConsumer(String cluster, Consumer<?, ?> consumer) {
		clusterConfig(cluster);
		this.consumers.put(consumer, cluster);
	}

	/**
	 * Forgets a registered consumer (call before closing it).
	 * @param consumer the consumer
	 */
	public void unregisterConsumer(Consumer<?, ?> consumer) {
		this.consumers.remove(consumer);
	}

	String clusterOf(Consumer<?, ?> consumer) {
		String cluster = this.consumers.get(consumer);
		if (cluster == null) {
			throw new IllegalArgumentException("Consumer is not registered with a cluster: create it with "
					+ "createConsumer(cluster, ...) or registerConsumer(cluster, consumer), so that its offsets are "
					+ "committed on the cluster it reads from");
		}
		return cluster;
	}

	/**
	 * Returns the configured cluster names.
	 * @return cluster names in configuration order
	 */
	public List<String> clusters() {
		return List.copyOf(this.clusters.keySet());
	}

	/**
	 * Returns the client configuration of a cluster.
	 * @param cluster the cluster's configured name
	 * @return its configuration (bootstrap servers, security, pass-through client properties)
	 * @throws IllegalArgumentException if the cluster is unknown
	 */
	public Map<String, Object> clusterConfig(String cluster) {
		Map<String, Object> config = this.clusters.get(cluster);
		if (config == null) {
			throw new IllegalArgumentException("Unknown cluster '" + cluster + "'; configured clusters: "
					+ this.clusters.keySet());
		}
		return config;
	}

	/**
	 * Returns the owner id of this instance's transactions, {@code <id-prefix>.<instance-id>}.
	 * @return the owner id
	 */
	public String owner() {
		return this.idPrefix + "." + this.instanceId;
	}

	/**
	 * Returns the transactions begun and not yet ended, oldest first.
	 * @return descriptors of the in-flight transactions
	 */
	public List<TransactionInfo> activeTransactions() {
		this.active.values().removeIf((txn) -> txn.state().isTerminal());
		return this.active.values().stream()
			.map((txn) -> new TransactionInfo(txn.transactionId(), txn.state(), txn.enlistedClusters(), txn.startedAtMs()))
			.sorted(java.util.Comparator.comparingLong(TransactionInfo::startedAtMs))
			.toList();
	}

	/**
	 * Returns one in-flight transaction.
	 * @param transactionId the transaction id
	 * @return its descriptor, or null if it is not in flight on this instance
	 */
	public @Nullable TransactionInfo activeTransaction(String transactionId) {
		CrossClusterTransaction txn = this.active.get(transactionId);
		return (txn != null) ? new TransactionInfo(txn.transactionId(), txn.state(), txn.enlistedClusters(),
				txn.startedAtMs()) : null;
	}

	/**
	 * An in-flight transaction.
	 *
	 * @param transactionId the transaction id
	 * @param state its state
	 * @param clusters the clusters it has touched
	 * @param startedAtMs when it began, epoch milliseconds
	 * @since 0.1.0
	 */
	public record TransactionInfo(String transactionId, TransactionState state, List<String> clusters,
			long startedAtMs) {
	}

	/**
	 * Returns the number of transactions currently left in-doubt by a failed commit and awaiting
	 * recovery.
	 * @return the count, 0 or more
	 */
	public int inDoubtCount() {
		return this.inDoubt.get();
	}

	/**
	 * Returns the transactional id of a participant: {@code <id-prefix>.<cluster>.<instance-id>.<slot>}.
	 * @param cluster the cluster name
	 * @param slot the slot number, 0 or more
	 * @return the transactional id
	 */
	public String transactionalId(String cluster, int slot) {
		return this.idPrefix + "." + cluster + "." + this.instanceId + "." + slot;
	}

	String markerTopic() {
		return this.markerTopic;
	}

	Duration commitTimeout() {
		return this.commitTimeout;
	}

	Duration decisionTimeout() {
		return this.decisionTimeout;
	}

	DecisionLog decisionLog() {
		return this.decisionLog;
	}

	ProtocolHook hook() {
		return this.hook;
	}

	TransactionListener listener() {
		return this.listener;
	}

	ExecutorService executor() {
		return this.executor;
	}

	void release(ParticipantSlot slot) {
		if (this.lifecycle == Lifecycle.RUNNING) {
			this.freeSlots.add(slot);
		}
	}

	void complete(String transactionId) {
		try {
			this.decisionLog.complete(transactionId);
		}
		catch (RuntimeException ex) {
			// Harmless: recovery will commit it again, which is idempotent, and complete it then.
			logger.warn("Could not record completion of transaction {}", transactionId, ex);
		}
	}

	void ensureOpen(Participant participant) {
		if (participant.isReady()) {
			return;
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
		participant.open(producer);
		try {
			this.producerCreated.accept(participant.cluster, producer);
		}
		catch (RuntimeException ex) {
			logger.warn("Producer listener failed for {}", participant.transactionalId, ex);
		}
	}

	private Map<String, Object> producerConfig(String cluster) {
		Map<String, Object> config = new HashMap<>(clusterConfig(cluster));
		// Keys under "tandem." configure Tandem's own client interceptors (the leader cache's
		// registry and cluster name, see LeaderCacheRegistry#instrument): dropping them would leave
		// the transactional producers, the busiest clients, out of the leader cache.
		config.entrySet()
			.removeIf((entry) -> !ProducerConfig.configNames().contains(entry.getKey())
					&& !entry.getKey().startsWith(TANDEM_CLIENT_CONFIG_PREFIX) && !ClientConfigs.isPluginObject(entry.getValue()));
		config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
		config.put(ProducerConfig.ACKS_CONFIG, "all");
		config.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, (int) this.transactionTimeout.toMillis());
		// Bounds initTransactions, commitTransaction, abortTransaction and a send blocked on metadata.
		config.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, this.commitTimeout.toMillis());
		return config;
	}

	/**
	 * An admin client of a cluster whose calls, and close, are bounded by the commit timeout.
	 */
	private ClosingAdmin admin(String cluster) {
		return new ClosingAdmin(BoundedAdmin.create(clusterConfig(cluster), this.commitTimeout));
	}

	private record ClosingAdmin(Admin admin) implements AutoCloseable {

		@Override
		public void close() {
			this.admin.close(Duration.ofSeconds(1));
		}

	}

	/**
	 * Aborts open transactions that a previous incarnation of this instance left on slots this
	 * incarnation does not use (it ran with more slots): initTransactions() fences only the ids
	 * in use, and an open transaction holds back every read_committed reader of its partitions.
	 * Needs DESCRIBE on the transactional ids; without it, logs a warning.
	 */
	private void abortOrphanedTransactions(String cluster) {
		String prefix = this.idPrefix + "." + cluster + "." + this.instanceId + ".";
		List<String> orphans = new ArrayList<>();
		try (ClosingAdmin bounded = admin(cluster)) {
			for (org.apache.kafka.clients.admin.TransactionListing listing : bounded.admin()
				.listTransactions(new org.apache.kafka.clients.admin.ListTransactionsOptions()
					.filterStates(List.of(org.apache.kafka.clients.admin.TransactionState.ONGOING)))
				.all()
				.get(this.commitTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
				String id = listing.transactionalId();
				if (id.startsWith(prefix)) {
					try {
						if (Integer.parseInt(id.substring(prefix.length())) >= this.slotCount) {
							orphans.add(id);
						}
					}
					catch (NumberFormatException ex) {
						// not one of ours
					}
				}
			}
		}
		catch (Exception ex) {
			logger.warn("Could not list open transactions on cluster '{}' to abort those of unused slots: {}", cluster,
					ex.toString());
			return;
		}
		for (String id : orphans) {
			Participant participant = new Participant(cluster, id);
			ensureOpen(participant);
			participant.close(this.commitTimeout);
			logger.info("Aborted the open transaction of unused slot {} on cluster '{}'", id, cluster);
		}
	}

	private void createMarkerTopic(String cluster) {
		try (ClosingAdmin bounded = admin(cluster)) {
			Admin admin = bounded.admin();
			if (admin.listTopics().names().get(this.commitTimeout.toMillis(), TimeUnit.MILLISECONDS)
				.contains(this.markerTopic)) {
				return;
			}
			int brokers = admin.describeCluster().nodes().get(this.commitTimeout.toMillis(), TimeUnit.MILLISECONDS).size();
			NewTopic topic = new NewTopic(this.markerTopic, 1, (short) Math.min(3, brokers))
				.configs(Map.of("retention.ms", String.valueOf(Duration.ofDays(7).toMillis())));
			admin.createTopics(List.of(topic)).all().get(this.commitTimeout.toMillis(), TimeUnit.MILLISECONDS);
			logger.info("Created marker topic '{}' on cluster '{}'", this.markerTopic, cluster);
		}
		catch (java.util.concurrent.ExecutionException ex) {
			if (!(ex.getCause() instanceof TopicExistsException)) {
				throw new TandemException("Could not create marker topic '" + this.markerTopic + "' on cluster '"
						+ cluster + "': " + ex.getCause(), ex.getCause());
			}
		}
		catch (java.util.concurrent.TimeoutException ex) {
			throw new TandemException("Cluster '" + cluster + "' (" + clusterConfig(cluster).get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG)
					+ ") did not answer within " + this.commitTimeout, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted", ex);
		}
	}

	/**
	 * Decides what won after a decision write with unknown outcome: records an abort (which the
	 * log refuses if the decision landed), then reads the state. Tries a few times.
	 * @return the state, never {@link DecisionState#UNKNOWN}
	 * @throws DecisionLogException if the decision log stays unreachable
	 */
	DecisionState resolveUnknownDecision(Decision decision) {
		DecisionLogException last = null;
		for (int attempt = 0; attempt < 3; attempt++) {
			try {
				DecisionState state = this.decisionLog.state(decision.transactionId(), this.decisionTimeout);
				if (state == DecisionState.UNKNOWN) {
					this.decisionLog.abort(decision.transactionId(), decision.owner(), this.decisionTimeout);
					state = this.decisionLog.state(decision.transactionId(), this.decisionTimeout);
				}
				if (state != DecisionState.UNKNOWN) {
					return state;
				}
			}
			catch (RuntimeException ex) {
				last = new DecisionLogException("Decision log unreachable while resolving " + decision.transactionId(), ex);
				logger.warn("Decision log unreachable while resolving {}: {}", decision.transactionId(), ex.toString());
			}
		}
		throw (last != null) ? last : new DecisionLogException("State of " + decision.transactionId() + " stays unknown");
	}

	/**
	 * Takes over a transaction whose outcome is not final: decided but not committed everywhere
	 * ({@code decisionKnown}), or whose decision write has an unknown outcome. Abandons the slot's
	 * producers (never closing them gracefully, which would abort), tries once at once, then keeps
	 * trying in the background every {@code recoveryInterval} (doubling up to 30 s): a decided
	 * transaction is committed by resuming its participants; an undecided one is recorded as
	 * aborted and its participants are aborted. The slot returns to the pool once resolved.
	 * @return the outcome: COMMITTED, ABORTED or HEURISTIC_MIXED when known
	 */
	java.util.concurrent.CompletableFuture<TransactionState> leaveInDoubt(Decision decision, boolean decisionKnown,
			ParticipantSlot slot) {
		for (Participant participant : slot.participants.values()) {
			participant.abandon();
		}
		return settle(decision.transactionId(), slot, () -> resolveTwoPhase(decision, decisionKnown, slot));
	}

	/**
	 * Takes over a one-phase transaction whose {@code commitTransaction()} failed with an unknown
	 * outcome: the broker may have accepted the commit and complete it later, so it must never be
	 * reported as aborted on a guess. While the commit only times out, the same producer retries
	 * it (the KafkaProducer contract: a timed-out commit may be retried, and the retry waits for
	 * the same request); once the broker refuses it, a fresh producer's {@code initTransactions()}
	 * completes a commit the broker had accepted or aborts the transaction, and the participant's
	 * marker record then tells which, by one {@code read_committed} fetch. Tries once at once, then
	 * in the background every {@code recoveryInterval} (doubling up to 30 s); the slot stays taken
	 * until the outcome is known.
	 * @param failure what the first {@code commitTransaction()} threw
	 * @return the outcome: COMMITTED or ABORTED when known
	 */
	java.util.concurrent.CompletableFuture<TransactionState> leaveOnePhaseInDoubt(String transactionId,
			Participant participant, ParticipantRecord marker, ParticipantSlot slot, RuntimeException failure) {
		OnePhaseResolution resolution = new OnePhaseResolution(transactionId, participant, marker, failure);
		return settle(transactionId, slot, resolution::attempt);
	}

	private java.util.concurrent.CompletableFuture<TransactionState> settle(String transactionId, ParticipantSlot slot,
			java.util.function.Supplier<TransactionState> resolution) {
		PendingOutcome outcome = new PendingOutcome(transactionId, slot, resolution);
		this.pending.put(transactionId, outcome);
		this.inDoubt.incrementAndGet();
		attempt(outcome, this.recoveryInterval);
		return outcome.future;
	}

	/**
	 * Returns the eventual outcome of a transaction this instance left in-doubt.
	 * @param transactionId the transaction id
	 * @return a future completed with COMMITTED, ABORTED or HEURISTIC_MIXED, or null if the
	 *     transaction is not pending here
	 */
	public java.util.concurrent.@Nullable CompletableFuture<TransactionState> inDoubtOutcome(String transactionId) {
		PendingOutcome outcome = this.pending.get(transactionId);
		return (outcome != null) ? outcome.future : null;
	}

	/**
	 * Returns the heuristic outcome recovery found for a transaction of this instance (at start
	 * or in the background), if any.
	 * @param transactionId the transaction id
	 * @return the outcome or null
	 */
	public @Nullable HeuristicOutcome heuristicOutcome(String transactionId) {
		return this.heuristics.get(transactionId);
	}

	/**
	 * Returns the ids of the transactions this instance is still resolving.
	 * @return transaction ids
	 */
	public List<String> inDoubtTransactionIds() {
		return List.copyOf(this.pending.keySet());
	}

	private void attempt(PendingOutcome outcome, Duration nextDelay) {
		String id = outcome.transactionId;
		try {
			TransactionState result = outcome.resolution.get();
			this.pending.remove(id);
			this.inDoubt.decrementAndGet();
			release(outcome.slot);
			outcome.future.complete(result);
			logger.info("In-doubt transaction {} resolved: {}", id, result);
		}
		catch (RuntimeException ex) {
			if (this.lifecycle == Lifecycle.CLOSED || this.resolver.isShutdown()) {
				logger.warn("Transaction {} stays in-doubt; it is resolved at the next start of {}", id, owner());
				return;
			}
			logger.warn("Transaction {} still in-doubt ({}); retrying in {}", id, ex.toString(), nextDelay);
			Duration after = nextDelay.multipliedBy(2).compareTo(Duration.ofSeconds(30)) > 0 ? Duration.ofSeconds(30)
					: nextDelay.multipliedBy(2);
			try {
				this.resolver.schedule(() -> attempt(outcome, after), nextDelay.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (java.util.concurrent.RejectedExecutionException rejected) {
				logger.warn("Transaction {} stays in-doubt; it is resolved at the next start of {}", id, owner());
			}
		}
	}

	/**
	 * One attempt at a two-phase transaction left in-doubt.
	 * @return the outcome
	 * @throws RuntimeException to be tried again later
	 */
	private TransactionState resolveTwoPhase(Decision decision, boolean decisionKnown, ParticipantSlot slot) {
		String id = decision.transactionId();
		if (!decisionKnown) {
			DecisionState state = resolveUnknownDecision(decision);
			if (state == DecisionState.ABORTED) {
				// initTransactions() on each participant's id aborts what the abandoned producer left open.
				for (Participant participant : slot.participants.values()) {
					ensureOpen(participant);
				}
				this.listener.onAborted(id, new DecisionLogException("decision of " + id + " was not recorded"));
				return TransactionState.ABORTED;
			}
		}
		HeuristicOutcome heuristic = recover(decision);
		if (heuristic != null) {
			return TransactionState.HEURISTIC_MIXED;
		}
		this.listener.onRecovered(id);
		return TransactionState.COMMITTED;
	}

	/**
	 * Settles a one-phase commit with an unknown outcome; see {@link #leaveOnePhaseInDoubt}. Called
	 * by one thread at a time (the caller's first attempt, then the resolver thread).
	 */
	private final class OnePhaseResolution {

		private final String transactionId;

		private final Participant participant;

		private final ParticipantRecord marker;

		private RuntimeException lastFailure;

		private boolean refused;

		private boolean reinitialized;

		OnePhaseResolution(String transactionId, Participant participant, ParticipantRecord marker,
				RuntimeException failure) {
			this.transactionId = transactionId;
			this.participant = participant;
			this.marker = marker;
			this.lastFailure = failure;
			this.refused = !retriable(failure);
		}

		private static boolean retriable(RuntimeException failure) {
			// Only a commit that did not answer in time may be retried with the same producer.
			return failure instanceof org.apache.kafka.common.errors.TimeoutException
					|| failure instanceof org.apache.kafka.common.errors.InterruptException;
		}

		TransactionState attempt() {
			if (CrossClusterTransactionManager.this.lifecycle == Lifecycle.CLOSED) {
				throw new TandemException("Manager " + owner() + " is closed");
			}
			Participant p = this.participant;
			if (!this.refused) {
				try {
					p.commit(CrossClusterTransactionManager.this.commitTimeout);
					logger.info("One-phase commit of {} on cluster '{}' confirmed after a retry", p.transactionalId,
							p.cluster);
					CrossClusterTransactionManager.this.listener.onRecovered(this.transactionId);
					return TransactionState.COMMITTED;
				}
				catch (RuntimeException ex) {
					this.lastFailure = ex;
					if (retriable(ex)) {
						throw ex;
					}
					this.refused = true;
					logger.warn("Broker refused the retried one-phase commit of {} on cluster '{}' ({}); reading its marker",
							p.transactionalId, p.cluster, ex.toString());
				}
			}
			if (!this.reinitialized) {
				// A new producer's initTransactions() waits for a commit the broker accepted to complete,
				// or aborts the open transaction: afterwards the marker is no longer open.
				p.abandon();
				ensureOpen(p);
				this.reinitialized = true;
			}
			MarkerOutcome outcome = MarkerReader.read(this.marker,
					clusterConfig(p.cluster), CrossClusterTransactionManager.this.commitTimeout);
			switch (outcome) {
				case COMMITTED -> {
					logger.info("One-phase transaction {} of {} on cluster '{}' committed (its marker is visible)",
							this.transactionId, p.transactionalId, p.cluster);
					CrossClusterTransactionManager.this.listener.onRecovered(this.transactionId);
					return TransactionState.COMMITTED;
				}
				case ABORTED -> {
					logger.warn("One-phase transaction {} of {} on cluster '{}' was aborted by its broker (its marker is aborted)",
							this.transactionId, p.transactionalId, p.cluster);
					CrossClusterTransactionManager.this.listener.onAborted(this.transactionId, this.lastFailure);
					return TransactionState.ABORTED;
				}
				default -> throw new TandemException("Marker of one-phase transaction " + this.transactionId
						+ " on cluster '" + p.cluster + "' is still open");
			}
		}

	}

	private static final class PendingOutcome {

		final String transactionId;

		final ParticipantSlot slot;

		final java.util.function.Supplier<TransactionState> resolution;

		final java.util.concurrent.CompletableFuture<TransactionState> future = new java.util.concurrent.CompletableFuture<>();

		PendingOutcome(String transactionId, ParticipantSlot slot,
				java.util.function.Supplier<TransactionState> resolution) {
			this.transactionId = transactionId;
			this.slot = slot;
			this.resolution = resolution;
		}

	}

	/**
	 * Commits every participant of a decided transaction by resuming it, then records the
	 * completion. A participant the broker refuses is checked through its marker: visible means
	 * it had committed already; aborted means a heuristic outcome.
	 * @return the heuristic outcome, or null if every participant committed
	 * @throws TandemException if a participant's outcome could not be established
	 */
	private @Nullable HeuristicOutcome recover(Decision decision) {
		List<String> committed = new ArrayList<>();
		List<String> aborted = new ArrayList<>();
		for (ParticipantRecord participant : decision.participants()) {
			Map<String, Object> config = producerConfig(participant.cluster());
			if (this.participantProtocol.commitPrepared(participant, config, this.commitTimeout)) {
				committed.add(participant.cluster());
				continue;
			}
			MarkerOutcome outcome = MarkerReader.read(participant, clusterConfig(participant.cluster()), this.commitTimeout);
			switch (outcome) {
				case COMMITTED -> committed.add(participant.cluster());
				case ABORTED -> aborted.add(participant.cluster());
				case OPEN -> throw new TandemException("Participant " + participant.transactionalId() + " of "
						+ decision.transactionId() + " refused the resumed commit and its marker is still open");
			}
		}
		complete(decision.transactionId());
		if (aborted.isEmpty()) {
			logger.info("Recovered transaction {}: committed on {}", decision.transactionId(), committed);
			return null;
		}
		HeuristicOutcome outcome = new HeuristicOutcome(decision.transactionId(), committed, aborted,
				System.currentTimeMillis());
		this.heuristics.put(decision.transactionId(), outcome);
		logger.error("HEURISTIC OUTCOME: decided transaction {} committed on {} but the broker aborted it on {}; "
				+ "data on those clusters must be repaired", decision.transactionId(), committed, aborted);
		this.listener.onHeuristicOutcome(outcome);
		return outcome;
	}

	/**
	 * Closes every producer WITHOUT aborting open transactions and without touching the decision
	 * log, as a crashed process would leave them. For crash tests and demos; after it, start a
	 * new manager with the same id prefix and instance id to recover.
	 */
	public synchronized void abandon() {
		this.lifecycle = Lifecycle.CLOSED;
		for (ParticipantSlot slot : this.slots) {
			for (Participant participant : slot.participants.values()) {
				participant.abandon();
			}
		}
		this.resolver.shutdownNow();
		this.executor.shutdownNow();
	}

	/**
	 * Closes every producer gracefully (an open transaction is aborted). Does not close the
	 * decision log, which the caller owns. Idempotent.
	 */
	@Override
	public synchronized void close() {
		if (this.lifecycle == Lifecycle.CLOSED) {
			return;
		}
		this.lifecycle = Lifecycle.CLOSED;
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
		this.resolver.shutdownNow();
		this.executor.shutdown();
	}

	/**
	 * Tells every listener, isolating each from the others' failures.
	 */
	private static final class CompositeListener implements TransactionListener {

		private final List<TransactionListener> listeners;

		CompositeListener(List<TransactionListener> listeners) {
			this.listeners = listeners;
		}

		private void each(java.util.function.Consumer<TransactionListener> call) {
			for (TransactionListener listener : this.listeners) {
				try {
					call.accept(listener);
				}
				catch (RuntimeException ex) {
					logger.warn("Transaction listener {} failed", listener, ex);
				}
			}
		}

		@Override
		public void onCommitted(String transactionId, int participants, Duration commitLatency) {
			each((l) -> l.onCommitted(transactionId, participants, commitLatency));
		}

		@Override
		public void onAborted(String transactionId, Throwable cause) {
			each((l) -> l.onAborted(transactionId, cause));
		}

		@Override
		public void onInDoubt(String transactionId, Throwable cause) {
			each((l) -> l.onInDoubt(transactionId, cause));
		}

		@Override
		public void onRecovered(String transactionId) {
			each((l) -> l.onRecovered(transactionId));
		}

		@Override
		public void onHeuristicOutcome(HeuristicOutcome outcome) {
			each((l) -> l.onHeuristicOutcome(outcome));
		}

	}

	/**
	 * Builds a {@link CrossClusterTransactionManager}.
	 *
	 * @since 0.1.0
	 */
	public static final class Builder {

		private final Map<String, Map<String, Object>> clusters = new LinkedHashMap<>();

		private @Nullable String idPrefix;

		private @Nullable String instanceId;

		private @Nullable DecisionLog decisionLog;

		private String markerTopic = DEFAULT_MARKER_TOPIC;

		private int slots = 1;

		private Duration transactionTimeout = Duration.ofMinutes(15);

		private Duration commitTimeout = Duration.ofSeconds(30);

		private Duration decisionTimeout = Duration.ofSeconds(5);

		private ProtocolHook hook = ProtocolHook.NONE;

		private final List<TransactionListener> listeners = new ArrayList<>();

		private ParticipantProtocol participantProtocol = new ResumeByEpochProtocol();

		private Duration recoveryInterval = Duration.ofSeconds(1);

		private java.util.function.BiConsumer<String, org.apache.kafka.clients.producer.Producer<?, ?>> producerCreated = (
				cluster, producer) -> {
		};

		private Builder() {
		}

		/**
		 * Adds a cluster.
		 * @param name the cluster's name, used in transactional ids: letters, digits, '-' and '_'
		 * @param clientConfig Kafka client properties (at least {@code bootstrap.servers}); each
		 *     client type takes the keys it knows
		 * @return this builder
		 * @throws IllegalArgumentException if the name is invalid or {@code bootstrap.servers}
		 *     is missing, or {@code transactional.id} is set
		 */
		public Builder cluster(String name, Map<String, ?> clientConfig) {
			if (!name.matches("[A-Za-z0-9_-]+")) {
				throw new IllegalArgumentException("Cluster name '" + name + "' must match [A-Za-z0-9_-]+");
			}
			if (!clientConfig.containsKey(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
				throw new IllegalArgumentException("Cluster '" + name + "' needs bootstrap.servers");
			}
			if (clientConfig.containsKey(ProducerConfig.TRANSACTIONAL_ID_CONFIG)) {
				throw new IllegalArgumentException("Cluster '" + name + "': transactional.id is set by Tandem "
						+ "(<id-prefix>.<cluster>.<instance-id>.<slot>); remove it");
			}
			this.clusters.put(name, new HashMap<>(clientConfig));
			return this;
		}

		/**
		 * Sets the prefix of transactional ids and owner ids; stable across restarts.
		 * @param idPrefix the prefix
		 * @return this builder
		 */
		public Builder idPrefix(String idPrefix) {
			this.idPrefix = idPrefix;
			return this;
		}

		/**
		 * Sets this app instance's id; stable across restarts of the same instance, unique among
		 * instances running at once (a restarted instance recovers the transactions of its id).
		 * @param instanceId the instance id
		 * @return this builder
		 */
		public Builder instanceId(String instanceId) {
			this.instanceId = instanceId;
			return this;
		}

		/**
		 * Sets the decision log (required).
		 * @param decisionLog the log
		 * @return this builder
		 */
		public Builder decisionLog(DecisionLog decisionLog) {
			this.decisionLog = decisionLog;
			return this;
		}

		/**
		 * Sets the marker topic, created on every cluster if missing.
		 * @param markerTopic the topic name
		 * @return this builder
		 */
		public Builder markerTopic(String markerTopic) {
			this.markerTopic = markerTopic;
			return this;
		}

		/**
		 * Sets how many transactions may run at once (one producer per cluster each).
		 * @param slots 1 or more
		 * @return this builder
		 */
		public Builder slots(int slots) {
			if (slots < 1) {
				throw new IllegalArgumentException("slots must be 1 or more");
			}
			this.slots = slots;
			return this;
		}

		/**
		 * Sets the producers' {@code transaction.timeout.ms}: how long a broker keeps a
		 * transaction open before aborting it. A decided transaction whose owner is down longer
		 * than this ends as a heuristic outcome; an undecided one left by a crash blocks
		 * {@code read_committed} readers of its partitions until the owner restarts or this passes.
		 * Must not exceed the brokers' {@code transaction.max.timeout.ms} (15 min by default).
		 * @param transactionTimeout the timeout
		 * @return this builder
		 */
		public Builder transactionTimeout(Duration transactionTimeout) {
			this.transactionTimeout = transactionTimeout;
			return this;
		}

		/**
		 * Sets how long flush, commit and abort calls may take per participant.
		 * @param commitTimeout the timeout
		 * @return this builder
		 */
		public Builder commitTimeout(Duration commitTimeout) {
			this.commitTimeout = commitTimeout;
			return this;
		}

		/**
		 * Sets how long one decision-log call may take.
		 * @param decisionTimeout the timeout
		 * @return this builder
		 */
		public Builder decisionTimeout(Duration decisionTimeout) {
			this.decisionTimeout = decisionTimeout;
			return this;
		}

		/**
		 * Sets a hook called at each protocol step (fault-injection tests).
		 * @param hook the hook
		 * @return this builder
		 */
		public Builder protocolHook(ProtocolHook hook) {
			this.hook = hook;
			return this;
		}

		/**
		 * Adds a listener told of outcomes; may be called several times.
		 * @param listener the listener
		 * @return this builder
		 */
		public Builder listener(TransactionListener listener) {
			this.listeners.add(Objects.requireNonNull(listener, "listener"));
			return this;
		}

		/**
		 * Sets the first delay between background attempts to resolve an in-doubt transaction;
		 * it doubles after each failed attempt, up to 30 s.
		 * @param recoveryInterval the delay, positive
		 * @return this builder
		 */
		public Builder recoveryInterval(Duration recoveryInterval) {
			if (recoveryInterval.isNegative() || recoveryInterval.isZero()) {
				throw new IllegalArgumentException("recoveryInterval must be positive");
			}
			this.recoveryInterval = recoveryInterval;
			return this;
		}

		/**
		 * Sets a callback told of every participant producer created (after
		 * {@code initTransactions()}), with its cluster name: for example to bind a leader cache.
		 * Called on the creating thread; must be fast and must not close the producer.
		 * @param producerCreated the callback
		 * @return this builder
		 */
		public Builder producerCreated(
				java.util.function.BiConsumer<String, org.apache.kafka.clients.producer.Producer<?, ?>> producerCreated) {
			this.producerCreated = Objects.requireNonNull(producerCreated, "producerCreated");
			return this;
		}

		/**
		 * Sets how recovery completes prepared participants.
		 * @param participantProtocol the protocol
		 * @return this builder
		 */
		public Builder participantProtocol(ParticipantProtocol participantProtocol) {
			this.participantProtocol = participantProtocol;
			return this;
		}

		/**
		 * Builds the manager; call {@link CrossClusterTransactionManager#start()} next.
		 * @return the manager
		 * @throws NullPointerException if the id prefix, instance id or decision log is missing
		 * @throws IllegalArgumentException if no cluster is configured
		 */
		public CrossClusterTransactionManager build() {
			return new CrossClusterTransactionManager(this);
		}

	}

}
