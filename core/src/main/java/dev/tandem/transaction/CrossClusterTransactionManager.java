package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.Deserializer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.ClusterClients;
import dev.tandem.text.DurationText;
import dev.tandem.transaction.HeuristicOutcomeException.HeuristicOutcome;
import dev.tandem.transaction.internals.ProducerInternals;

/**
 * Runs cross-cluster transactions for one app instance: starts its collaborators, begins
 * transactions, and shows what is in flight. The jobs live in their own classes
 * ({@code docs/architecture.md}, "{@code dev.tandem.transaction}, class by class"): the
 * clusters' client configurations ({@link ClusterClients}), the participant slots and their
 * producers ({@code ParticipantPool}), recovery and takeover ({@code TransactionRecovery}), the
 * retry queue of in-doubt outcomes ({@code InDoubtQueue}), an operator's settlement
 * ({@code OperatorSettlement}), the listener fan-out; each transaction gets a narrow
 * {@code TransactionContext} of what it uses.
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

	/** Default control topic for marker records, created on every cluster. */
	public static final String DEFAULT_MARKER_TOPIC = "tandem-markers";

	private enum Lifecycle {
		/** Built; {@link #start()} not called yet, or failed before it took the lease (it may be called again). */
		NEW,
		RUNNING,
		/**
		 * {@link #start()} failed after it took (or tried to take) the lease: the lease is released or left to
		 * expire as the failure requires, and this manager never starts; {@link #close()} frees its resources
		 * without touching the lease.
		 */
		START_FAILED,
		CLOSED
	}

	private final ClusterClients clients;

	private final String idPrefix;

	private final String instanceId;

	private final Duration commitTimeout;

	private final ParticipantPool pool;

	private final BackgroundRetries retries;

	private final InDoubtQueue inDoubt;

	private final TransactionRecovery recovery;

	private final OperatorSettlement settlement;

	private final @Nullable InstanceLeaseKeeper leases;

	private final HangingTransactions hanging;

	private final Databases databases;

	private final @Nullable KafkaInstanceGuard guard;

	private final boolean requireAllClustersAtStart;

	/** Clusters that did not answer at start-up and have not since: transactions needing them fail at once. */
	private final Set<String> unavailableSinceStart = ConcurrentHashMap.newKeySet();

	private final RegisteredConsumers consumers = new RegisteredConsumers();

	private final TransactionContext context;

	private final ExecutorService executor;

	private final Map<String, CrossClusterTransaction> active = new ConcurrentHashMap<>();

	private volatile Lifecycle lifecycle = Lifecycle.NEW;

	private final Duration transactionTimeout;

	private final List<TransactionThreadBinding> threadBindings;

	CrossClusterTransactionManager(CrossClusterTransactionManagerBuilder builder) {
		if (builder.clusters.isEmpty()) {
			throw new IllegalArgumentException("At least one cluster must be configured");
		}
		this.clients = builder.clusters.build();
		this.idPrefix = Objects.requireNonNull(builder.idPrefix, "idPrefix");
		this.instanceId = Objects.requireNonNull(builder.instanceId, "instanceId");
		DecisionLog decisionLog = Objects.requireNonNull(builder.decisionLog, "decisionLog");
		this.commitTimeout = builder.commitTimeout;
		this.transactionTimeout = builder.transactionTimeout;
		this.threadBindings = List.copyOf(builder.threadBindings);
		TransactionListener listener = new CompositeTransactionListener(builder.listeners);
		PendingRecoveries pendingRecoveries = new PendingRecoveries();
		this.requireAllClustersAtStart = builder.requireAllClustersAtStart;
		boolean leased = !builder.leaseTimeout.isZero() && decisionLog.supportsLeases();
		// one id per run: its lease's incarnation, its heartbeat's, and (with a lease) part of its transactional ids
		String incarnation = UUID.randomUUID().toString();
		this.pool = new ParticipantPool(this.clients, this.idPrefix, this.instanceId, leased ? incarnation : null,
				builder.slots,
				builder.transactionTimeout, builder.commitTimeout, builder.producerCreated, pendingRecoveries,
				builder.markerTopic);
		this.retries = new BackgroundRetries(owner(), builder.recoveryInterval);
		this.databases = new Databases(builder.databases, owner(), builder.commitTimeout, builder.slots, this.retries);
		TransactionRecovery.Settings recoverySettings = new TransactionRecovery.Settings(owner(), this.clients,
				decisionLog, builder.participantProtocol, listener, builder.commitTimeout, builder.decisionTimeout,
				builder.recoveryInterval, this.databases);
		this.inDoubt = new InDoubtQueue(owner(), this.pool, this.retries);
		this.recovery = new TransactionRecovery(recoverySettings, this.pool, pendingRecoveries, this.inDoubt);
		this.settlement = new OperatorSettlement(recoverySettings, this.recovery);
		this.hanging = new HangingTransactions(this.clients, this.idPrefix, owner(), decisionLog,
				builder.transactionTimeout);
		this.leases = leased ? new InstanceLeaseKeeper(decisionLog, this.idPrefix, this.instanceId, incarnation,
				builder.leaseTimeout,
				builder.staleDecisionAge, builder.decisionTimeout, this.recovery, System::currentTimeMillis) : null;
		boolean duplicateCheck = (builder.duplicateCheckThroughKafka != null) ? builder.duplicateCheckThroughKafka
				: !decisionLog.sharedByInstances();
		this.guard = (duplicateCheck && !builder.leaseTimeout.isZero())
				? new KafkaInstanceGuard(this.clients, this.clients.names().get(0), KafkaInstanceGuard.DEFAULT_TOPIC, owner(),
						incarnation, builder.leaseTimeout, builder.commitTimeout, System::currentTimeMillis)
				: null;
		AtomicInteger threads = new AtomicInteger();
		this.executor = Executors.newCachedThreadPool((runnable) -> {
			Thread thread = new Thread(runnable, "tandem-commit-" + this.instanceId + "-" + threads.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
		this.context = new TransactionContext(owner(), builder.markerTopic, builder.commitTimeout,
				builder.decisionTimeout, decisionLog, builder.hook, listener, this.executor, this.pool, this.recovery,
				this.consumers, (cluster) -> this.unavailableSinceStart.contains(cluster)
						|| builder.clusterReachability.isUnreachable(cluster),
				(this.leases != null) ? this.leases.incarnation() : null, this.databases);
	}

	/**
	 * Binds what the thread bindings keep for a transaction to the calling thread
	 * ({@link TransactionThreadBinding}).
	 * @return what undoes it, in reverse order
	 */
	Runnable bindToThread(CrossClusterTransaction transaction) {
		if (this.threadBindings.isEmpty()) {
			return () -> {
			};
		}
		List<Runnable> undo = new ArrayList<>(this.threadBindings.size());
		try {
			for (TransactionThreadBinding binding : this.threadBindings) {
				undo.add(0, binding.bind(transaction));
			}
		}
		catch (RuntimeException ex) {
			undo.forEach(Runnable::run);
			throw ex;
		}
		return () -> undo.forEach(Runnable::run);
	}

	/**
	 * Returns the {@code transaction.timeout.ms} of the participants' producers: a Kafka
	 * transaction open longer than this is aborted by its broker (and its producer fenced).
	 * @return the timeout, positive
	 */
	public Duration transactionTimeout() {
		return this.transactionTimeout;
	}

	/**
	 * Returns a new builder.
	 * @return the builder
	 */
	public static CrossClusterTransactionManagerBuilder builder() {
		return new CrossClusterTransactionManagerBuilder();
	}

	/**
	 * Creates the marker topic where missing and checks every database, then takes this instance's
	 * lease in the decision log (waiting at most one lease timeout for a previous run's lease to
	 * expire), recovers this instance's in-doubt transactions, then aborts what previous runs left
	 * open and creates and initializes every participant producer (with a lease, on transactional
	 * ids of this run's own; without, on the ids every run shares, which fences its zombies); then
	 * renews the lease and takes over expired instances of the app in the background. A start-up
	 * that fails before taking the lease leaves it as it was; one that fails after taking it from a
	 * run that died, before fencing that run, leaves it to expire (a live instance claims it and
	 * fences the dead runs, or the next run does after the expiry); otherwise it releases it. A
	 * start-up that failed before taking the lease may be retried on this manager; one that failed
	 * after (also with an {@link Error}) is final: build a new manager, and {@link #close()} this one
	 * (which then leaves the lease as the failure left it).
	 * @throws DuplicateInstanceException if another running instance holds this instance id
	 * @throws TandemException if a cluster is unreachable, or an in-doubt transaction cannot be
	 *     recovered within the commit timeout
	 * @throws HeuristicOutcomeException never: heuristic outcomes found by recovery are reported
	 *     to the listener and logged at ERROR
	 * @throws IllegalStateException if already started or closed, or if an earlier start-up of
	 *     this manager failed after taking the lease
	 */
	public synchronized void start() {
		if (this.lifecycle == Lifecycle.START_FAILED) {
			throw new IllegalStateException("Manager " + owner() + " cannot start: its start-up failed after it took "
					+ "the instance's lease, which it then released or left to expire; build a new manager to start again");
		}
		if (this.lifecycle != Lifecycle.NEW) {
			throw new IllegalStateException("Manager is " + this.lifecycle);
		}
		ProducerInternals.verify();
		// What can fail without the lease fails before it is taken (a cluster or a database that does not answer,
		// a database that cannot prepare): a start-up that fails there leaves the lease, and its run history,
		// exactly as it found them, however often it is retried (issue 26).
		Set<String> unavailable = ensureMarkerTopics();
		this.databases.start();
		try {
			if (this.guard != null) {
				this.guard.acquire();
			}
			if (this.leases != null) {
				this.leases.acquire();
			}
			Set<String> previousRuns = (this.leases != null) ? this.leases.previousRuns() : Set.of();
			List<Decision> inDoubt = this.recovery.inDoubtAtStart();
			// the undecided transactions the previous runs left open first: one may hold back the marker
			// of a decided transaction that committed, which the recovery must see to tell it committed
			this.pool.abortUndecidedLeftOpen(unavailable, previousRuns, TransactionRecovery.participantIds(inDoubt));
			this.recovery.recoverAtStart(inDoubt, this.requireAllClustersAtStart);
			this.recovery.recoverPreparedBranches(owner());
			this.pool.start(unavailable, this.requireAllClustersAtStart, previousRuns);
		}
		catch (RuntimeException | Error ex) {
			// A start that failed holds no heartbeat, and no lease unless it took the lease from a dead run whose
			// transactions it did not fence: that lease is left to expire, so that a live instance claims it and
			// fences them, or the next run does (InstanceLeaseKeeper.closeAfterFailedStart). An Error too (a
			// driver's NoClassDefFoundError in the branches' recovery): a lease renewed on would look alive forever.
			// Final: a later close() must not release a lease left to expire, and the keeper cannot acquire again.
			this.lifecycle = Lifecycle.START_FAILED;
			closeInstanceIdentity(null);
			throw ex;
		}
		if (this.leases != null) {
			this.leases.start();
		}
		this.lifecycle = Lifecycle.RUNNING;
		logger.info("Tandem transaction manager {} started: clusters {}, databases {}, {} slot(s)", owner(),
				this.clients.names(), this.databases.names(), this.pool.slotCount());
	}

	/**
	 * Writes the heartbeat tombstone and releases the lease, where this run holds them, or leaves the
	 * lease to expire so that a live instance claims it: after a failed start-up that has not fenced
	 * the runs before it ({@code unresolved} null), or at a close with transactions still unresolved.
	 */
	private void closeInstanceIdentity(@Nullable List<String> unresolved) {
		if (this.leases != null) {
			if (unresolved == null) {
				this.leases.closeAfterFailedStart();
			}
			else {
				this.leases.closeLeavingUnresolved(unresolved);
			}
		}
		if (this.guard != null) {
			this.guard.close();
		}
	}

	/**
	 * Creates the marker topic on every cluster, all clusters at once. A cluster that does not
	 * answer fails the start if every cluster is required at start-up; otherwise it is retried in
	 * the background and returned.
	 */
	private Set<String> ensureMarkerTopics() {
		Map<String, CompletableFuture<Void>> markers = new LinkedHashMap<>();
		for (String cluster : this.clients.names()) {
			markers.put(cluster, CompletableFuture.runAsync(
					() -> ControlTopics.ensureMarkerTopic(this.clients, cluster, this.context.markerTopic(), this.commitTimeout),
					this.executor));
		}
		Set<String> unavailable = new LinkedHashSet<>();
		markers.forEach((cluster, marker) -> {
			try {
				marker.join();
			}
			catch (CompletionException ex) {
				RuntimeException cause = (ex.getCause() instanceof RuntimeException runtime) ? runtime : ex;
				if (this.requireAllClustersAtStart) {
					throw new ClusterUnavailableException(cluster, cause.getMessage() + " (every cluster is required at "
							+ "start-up)");
				}
				unavailable.add(cluster);
				this.unavailableSinceStart.add(cluster);
				logger.warn("Cluster '{}' is not available at start-up ({}): starting without it; transactions that need "
						+ "it fail at once (ClusterUnavailableException) until it answers again", cluster, cause.getMessage());
				this.retries.untilDone("Creating marker topic '" + this.context.markerTopic() + "' on cluster '" + cluster
						+ "'", () -> {
							ControlTopics.ensureMarkerTopic(this.clients, cluster, this.context.markerTopic(),
									this.commitTimeout);
							this.unavailableSinceStart.remove(cluster); // it answers again
							logger.info("Cluster '{}' answers again: its marker topic is in place", cluster);
						});
			}
		});
		return unavailable;
	}

	/** Throws unless the manager is running, saying what to do. */
	private void requireRunning() {
		if (this.lifecycle == Lifecycle.START_FAILED) {
			throw new IllegalStateException("Manager " + owner() + " is not running: its start-up failed; build a new "
					+ "manager and start it");
		}
		if (this.lifecycle != Lifecycle.RUNNING) {
			throw new IllegalStateException("Manager is " + this.lifecycle + "; call start() first");
		}
	}

	/**
	 * Begins a cross-cluster transaction, waiting for a free slot up to the commit timeout.
	 * @return the transaction
	 * @throws IllegalStateException if the manager is not running
	 * @throws TandemException if no slot became free in time
	 */
	public CrossClusterTransaction begin() {
		requireRunning();
		String duplicate = (this.guard != null) ? this.guard.duplicateOf() : null;
		if (duplicate != null) {
			throw new DuplicateInstanceException(owner(), "Another running instance (incarnation " + duplicate
					+ ") uses the instance id of " + owner() + "; this one begins no transaction any more");
		}
		String lostTo = (this.leases != null) ? this.leases.lostTo() : null;
		if (lostTo != null) {
			throw new LeaseClaimedException("Instance " + owner() + " lost its lease to " + lostTo
					+ " (it was taken for dead) and begins no transaction; restart it");
		}
		try {
			ParticipantSlot slot = this.pool.take(this.commitTimeout);
			if (slot == null) {
				throw new TandemException("No free transaction slot within " + DurationText.of(this.commitTimeout) + " ("
						+ this.pool.slotCount() + " slot(s) configured)");
			}
			this.active.values().removeIf((txn) -> txn.state().isTerminal());
			CrossClusterTransaction transaction = new CrossClusterTransaction(this.context, slot,
					TransactionIds.newId(owner()));
			this.active.put(transaction.transactionId(), transaction);
			return transaction;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted while waiting for a transaction slot", ex);
		}
	}

	/**
	 * Creates a pipeline: transactions begun on it commit in order on its own thread while the
	 * caller already executes the next ones ({@link TransactionPipeline}).
	 * @param depth how many of its transactions may be open or committing at once, 1 to the
	 *     number of slots; 2 overlaps one transaction's execution with the previous one's commit
	 * @return the pipeline, confined to the calling thread; close it before the manager
	 * @throws IllegalArgumentException if depth is below 1 or above the slot count
	 * @throws IllegalStateException if the manager is not running
	 */
	public TransactionPipeline pipeline(int depth) {
		if (depth < 1 || depth > this.pool.slotCount()) {
			throw new IllegalArgumentException("Pipeline depth " + depth + " is outside 1.." + this.pool.slotCount()
					+ ": each transaction in flight needs its own slot; raise the slots (tandem.transaction.slots) or "
					+ "lower the depth");
		}
		requireRunning();
		return new TransactionPipeline(this, depth, this.commitTimeout);
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
		KafkaConsumer<K, V> consumer = new KafkaConsumer<>(this.clients.readCommittedConsumerConfig(cluster, overrides),
				keyDeserializer, valueDeserializer);
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
		this.clients.bootstrapServers(cluster);
		this.consumers.register(consumer, cluster);
	}

	/**
	 * Forgets a registered consumer (call before closing it).
	 * @param consumer the consumer
	 */
	public void unregisterConsumer(Consumer<?, ?> consumer) {
		this.consumers.unregister(consumer);
	}

	/**
	 * Returns the configured database names ({@link CrossClusterTransactionManagerBuilder#database}).
	 * @return database names in configuration order, possibly empty
	 * @since 0.1.0
	 */
	public List<String> databases() {
		return this.databases.names();
	}

	/**
	 * Returns the configured cluster names.
	 * @return cluster names in configuration order
	 */
	public List<String> clusters() {
		return this.clients.names();
	}

	/**
	 * Returns the clusters' client configurations.
	 * @return the immutable cluster clients
	 */
	public ClusterClients clusterClients() {
		return this.clients;
	}

	/**
	 * Returns the owner id of this instance's transactions, {@code <id-prefix>.<instance-id>}.
	 * @return the owner id
	 */
	public String owner() {
		return this.idPrefix + "." + this.instanceId;
	}

	/**
	 * Lists this app's Kafka transactions that are open on a broker with nobody to end them: their
	 * instance holds no live lease and nobody claimed it, or they are older than the transaction
	 * timeout (see {@link HangingTransactions}). Reads every cluster and the decision log.
	 * @param timeout the bound of each cluster's reads and of the lease read
	 * @return the hanging transactions, oldest first, and what could not be read
	 */
	public HangingTransactions.Report hangingTransactions(Duration timeout) {
		return this.hanging.find(timeout);
	}

	/**
	 * Aborts one of {@link #hangingTransactions(Duration)} by fencing its transactional id, an
	 * operator's decision (logged at WARN); refused for a participant of a decided transaction.
	 * @param cluster the cluster it is open on
	 * @param transactionalId its transactional id
	 * @param timeout the bound of each read and of the fencing
	 * @return the transaction as it was listed before the abort
	 * @throws IllegalArgumentException if it is not a hanging transaction of this app
	 * @throws IllegalStateException if a decided transaction names it as a participant
	 * @throws TandemException if a cluster or the decision log cannot be read, or the fencing fails
	 */
	public HangingTransactions.Hanging abortHanging(String cluster, String transactionalId, Duration timeout) {
		HangingTransactions.Hanging aborted = this.hanging.abort(cluster, transactionalId, timeout);
		logger.warn("Aborted hanging transaction {} on cluster '{}' of {} by hand ({}; open {} ms, {} partition(s))",
				transactionalId, cluster, aborted.owner(), aborted.reason(), aborted.ageMs(), aborted.partitions());
		return aborted;
	}

	/**
	 * Returns the app's id prefix: instances with the same prefix may take over each other.
	 * @return the id prefix
	 * @since 0.1.0
	 */
	public String idPrefix() {
		return this.idPrefix;
	}

	/**
	 * Returns the transactions begun and not yet ended (an in-doubt one until it is resolved),
	 * oldest first.
	 * @return descriptors of the in-flight transactions
	 */
	public List<TransactionInfo> activeTransactions() {
		this.active.values().removeIf((txn) -> txn.state().isTerminal());
		return this.active.values().stream()
			.map(TransactionInfo::of)
			.sorted(Comparator.comparingLong(TransactionInfo::startedAtMs))
			.toList();
	}

	/**
	 * Returns one in-flight transaction.
	 * @param transactionId the transaction id
	 * @return its descriptor, or null if it is not in flight on this instance
	 */
	public @Nullable TransactionInfo activeTransaction(String transactionId) {
		CrossClusterTransaction txn = this.active.get(transactionId);
		return (txn != null) ? TransactionInfo.of(txn) : null;
	}

	/**
	 * An in-flight transaction.
	 *
	 * @param transactionId the transaction id
	 * @param state its state
	 * @param clusters the clusters it has touched
	 * @param startedAtMs when it began, epoch milliseconds
	 * @param databases the databases it has touched (database participants)
	 * @since 0.1.0
	 */
	public record TransactionInfo(String transactionId, TransactionState state, List<String> clusters,
			long startedAtMs, List<String> databases) {

		static TransactionInfo of(CrossClusterTransaction txn) {
			return new TransactionInfo(txn.transactionId(), txn.state(), txn.enlistedClusters(), txn.startedAtMs(),
					txn.enlistedDatabases());
		}

	}

	/**
	 * Returns the number of transactions currently left in-doubt by a failed commit and awaiting
	 * recovery.
	 * @return the count, 0 or more
	 */
	public int inDoubtCount() {
		return this.inDoubt.pendingCount();
	}

	/**
	 * Returns the transactional id of a participant of this run: with a lease in the decision log,
	 * {@code <id-prefix>.<cluster>.<instance-id>.<slot>.<run-id>} (the run id is the lease's
	 * incarnation, a UUID: every run has ids of its own); without, the legacy
	 * {@code <id-prefix>.<cluster>.<instance-id>.<slot>} every run shares. See
	 * {@code docs/architecture.md}, "Transactional ids".
	 * @param cluster the cluster name
	 * @param slot the slot number, 0 or more
	 * @return the transactional id
	 */
	public String transactionalId(String cluster, int slot) {
		return this.pool.transactionalId(cluster, slot);
	}

	/**
	 * Returns the eventual outcome of a transaction this instance left in-doubt.
	 * @param transactionId the transaction id
	 * @return a future completed with COMMITTED, ABORTED or HEURISTIC_MIXED, or null if the
	 *     transaction is not pending here
	 */
	public @Nullable CompletableFuture<TransactionState> inDoubtOutcome(String transactionId) {
		return this.inDoubt.outcome(transactionId);
	}

	/**
	 * Returns the heuristic outcome recovery found for a transaction of this instance (at start
	 * or in the background), if any.
	 * @param transactionId the transaction id
	 * @return the outcome or null
	 */
	public @Nullable HeuristicOutcome heuristicOutcome(String transactionId) {
		return this.recovery.heuristicOutcome(transactionId);
	}

	/**
	 * Returns the ids of the transactions this instance is still resolving.
	 * @return transaction ids
	 */
	public List<String> inDoubtTransactionIds() {
		return this.inDoubt.pendingIds();
	}

	/**
	 * Returns the decided but not completed transactions of every instance of this app (same id prefix) that
	 * are older than the stale-decision age, as the last background check saw them (every third of
	 * the lease timeout); empty when leases are off.
	 * @return the stale decisions, oldest first
	 */
	public List<StaleDecision> staleDecisions() {
		if (this.leases == null) {
			return List.of();
		}
		return this.leases.staleDecisions();
	}

	/**
	 * Settles a stuck transaction of any instance of this app by hand: an operator's decision,
	 * logged at WARN and told to the listeners ({@link TransactionListener#onSettled}).
	 * {@link Settlement#COMMIT} commits a decided-not-completed transaction by resuming its
	 * participants (what a takeover or the owner's restart would do); {@link Settlement#ABORT}
	 * records the abort of a transaction that has no decision. Blocks up to the commit timeout per
	 * participant.
	 * @param transactionId the transaction id
	 * @param action what to do
	 * @return COMMITTED (also when it had completed already), HEURISTIC_MIXED, or ABORTED
	 * @throws IllegalArgumentException if the id is not one of this app's ({@code <id-prefix>.<instance-id>-<uuid>}
	 *     with this app's id prefix, see {@link TransactionIds}): an app never settles another app's transactions
	 * @throws IllegalStateException for COMMIT of a transaction without a decision (it aborts:
	 *     presumed abort), or ABORT of a decided one (a decision is final)
	 * @throws TandemException if a participant's outcome cannot be established now
	 * @throws DecisionLogException if the decision log cannot be reached
	 */
	public TransactionState settle(String transactionId, Settlement action) {
		return this.settlement.settle(transactionId, action, this.idPrefix);
	}

	/**
	 * Returns who took this instance's lease (another instance that took it for dead), if anyone.
	 * @return the claimant, or null while this instance holds its lease or runs without one
	 */
	public @Nullable String leaseLostTo() {
		return (this.leases != null) ? this.leases.lostTo() : null;
	}

	/**
	 * Closes every producer WITHOUT aborting open transactions and without touching the decision
	 * log, as a crashed process would leave them. For crash tests and demos; after it, start a
	 * new manager with the same id prefix and instance id to recover.
	 */
	public synchronized void abandon() {
		this.lifecycle = Lifecycle.CLOSED;
		if (this.leases != null) {
			this.leases.abandon();
		}
		if (this.guard != null) {
			this.guard.abandon();
		}
		this.pool.abandon();
		this.databases.close();
		this.inDoubt.close();
		this.executor.shutdownNow();
	}

	/**
	 * Closes every producer gracefully (an open transaction is aborted) and releases the lease.
	 * With transactions still being resolved ({@link #inDoubtTransactionIds()}: decided ones a
	 * cluster could not commit yet), leaves the lease to expire instead, so that a live instance of
	 * the app claims it and completes them (a released lease is never claimed); a restart of this
	 * instance then waits up to one lease timeout. After a start-up that failed once it took the
	 * lease, frees what the start-up created and leaves the lease as the failure left it (released,
	 * or left to expire so that a live instance claims it). Does not close the decision log, which
	 * the caller owns. Idempotent.
	 */
	@Override
	public synchronized void close() {
		if (this.lifecycle == Lifecycle.CLOSED) {
			return;
		}
		boolean startFailed = this.lifecycle == Lifecycle.START_FAILED;
		this.lifecycle = Lifecycle.CLOSED;
		List<String> unresolved = this.inDoubt.pendingIds();
		this.pool.close();
		this.databases.close();
		if (!startFailed) {
			// after a failed start-up the lease is released or left to expire already: releasing it here would
			// hide the dead runs a failed start-up left to a survivor (a released lease is never claimed)
			closeInstanceIdentity(unresolved);
		}
		this.inDoubt.close();
		this.executor.shutdown();
	}

}
