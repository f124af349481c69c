package dev.tandem.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;

import javax.sql.XADataSource;

import org.apache.kafka.clients.producer.Producer;
import org.jspecify.annotations.Nullable;

import dev.tandem.clients.ClusterClients;
import dev.tandem.text.DurationText;

/**
 * Builds a {@link CrossClusterTransactionManager}. Its defaults are the {@code DEFAULT_*}
 * constants, which the Spring Boot properties ({@code tandem.transaction.*}) read too, so that each
 * default is declared here only.
 *
 * @since 0.1.0
 */
public final class CrossClusterTransactionManagerBuilder {

	/**
	 * Default {@link #slots(int)}: room for a pipeline of the default depth
	 * ({@link CrossClusterProcessor#DEFAULT_DEPTH}) and as many slots again, so that a slot comes back
	 * to a pipeline only after the transactions of the other slots ran (a transactional id reused
	 * at once waits for its previous commit's markers: {@code docs/architecture.md}, "Pipelining").
	 */
	public static final int DEFAULT_SLOTS = 8;

	/** Default {@link #transactionTimeout(Duration)}: the brokers' default {@code transaction.max.timeout.ms}. */
	public static final Duration DEFAULT_TRANSACTION_TIMEOUT = Duration.ofMinutes(15);

	/** Default {@link #commitTimeout(Duration)}. */
	public static final Duration DEFAULT_COMMIT_TIMEOUT = Duration.ofSeconds(30);

	/** Default {@link #decisionTimeout(Duration)}. */
	public static final Duration DEFAULT_DECISION_TIMEOUT = Duration.ofSeconds(5);

	/** Default {@link #recoveryInterval(Duration)}. */
	public static final Duration DEFAULT_RECOVERY_INTERVAL = Duration.ofSeconds(1);

	/** Default {@link #leaseTimeout(Duration)}. */
	public static final Duration DEFAULT_LEASE_TIMEOUT = Duration.ofSeconds(10);

	/**
	 * Shortest {@link #leaseTimeout(Duration)} other than zero: the lease is renewed every third of
	 * it, and a renewal is a decision-log write.
	 */
	public static final Duration MIN_LEASE_TIMEOUT = Duration.ofMillis(300);

	/** Default {@link #staleDecisionAge(Duration)}. */
	public static final Duration DEFAULT_STALE_DECISION_AGE = Duration.ofMinutes(1);

	private static final Pattern DATABASE_NAME = Pattern.compile("[A-Za-z0-9_-]{1,200}");

	final ClusterClients.Builder clusters = ClusterClients.builder();

	final Map<String, XADataSource> databases = new LinkedHashMap<>();

	@Nullable String idPrefix;

	@Nullable String instanceId;

	@Nullable DecisionLog decisionLog;

	String markerTopic = CrossClusterTransactionManager.DEFAULT_MARKER_TOPIC;

	int slots = DEFAULT_SLOTS;

	Duration transactionTimeout = DEFAULT_TRANSACTION_TIMEOUT;

	Duration commitTimeout = DEFAULT_COMMIT_TIMEOUT;

	Duration decisionTimeout = DEFAULT_DECISION_TIMEOUT;

	ProtocolHook hook = ProtocolHook.NONE;

	final List<TransactionListener> listeners = new ArrayList<>();

	final List<TransactionThreadBinding> threadBindings = new ArrayList<>();

	ParticipantProtocol participantProtocol = new ResumeByEpochProtocol();

	Duration recoveryInterval = DEFAULT_RECOVERY_INTERVAL;

	Duration leaseTimeout = DEFAULT_LEASE_TIMEOUT;

	Duration staleDecisionAge = DEFAULT_STALE_DECISION_AGE;

	boolean requireAllClustersAtStart;

	/** Null: decided by the decision log ({@link DecisionLog#sharedByInstances()}). */
	@Nullable Boolean duplicateCheckThroughKafka;

	ClusterReachability clusterReachability = ClusterReachability.UNKNOWN;

	BiConsumer<String, Producer<?, ?>> producerCreated = (cluster, producer) -> {
	};

	CrossClusterTransactionManagerBuilder() {
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
	public CrossClusterTransactionManagerBuilder cluster(String name, Map<String, ?> clientConfig) {
		this.clusters.cluster(name, clientConfig);
		return this;
	}

	/**
	 * Adds a cluster with a configuration per client type (as Spring Boot's {@code spring.kafka}
	 * or {@code tandem.clusters} resolve them).
	 * @param name the cluster's name, used in transactional ids: letters, digits, '-' and '_'
	 * @param producer properties of the transactional producers
	 * @param consumer properties of the consumers {@link CrossClusterTransactionManager#createConsumer}
	 *     creates and of Tandem's marker reads
	 * @param admin properties of Tandem's admin clients
	 * @return this builder
	 * @throws IllegalArgumentException if the name is invalid, {@code bootstrap.servers} is
	 *     missing from one of them, or {@code transactional.id} is set
	 */
	public CrossClusterTransactionManagerBuilder cluster(String name, Map<String, ?> producer, Map<String, ?> consumer, Map<String, ?> admin) {
		this.clusters.cluster(name, producer, consumer, admin);
		return this;
	}

	/**
	 * Adds a database participant: a transaction's {@link CrossClusterTransaction#database(String)}
	 * connection commits or rolls back with its records, through XA (the branch is prepared before
	 * the decision, committed after it, and recovered from the decision log after a crash;
	 * {@code docs/architecture.md}, "Database participants"). At {@link CrossClusterTransactionManager#start()}
	 * the database must answer and be able to prepare transactions (PostgreSQL:
	 * {@code max_prepared_transactions} above zero), and Tandem creates its marker table
	 * {@code tandem_markers} there if missing. Each slot keeps one XA connection to each database
	 * it used, so the data source need not pool connections.
	 * @param name the database's name, stable across restarts (prepared branches are found by it):
	 *     1 to 200 letters, digits, '-' and '_'
	 * @param dataSource the driver's XA data source (PostgreSQL's {@code PGXADataSource}, MySQL's
	 *     {@code MysqlXADataSource}), configured with the connect and socket timeouts that bound
	 *     every call Tandem makes on it
	 * @return this builder
	 * @throws IllegalArgumentException if the name is invalid or already used
	 * @since 0.1.0
	 */
	public CrossClusterTransactionManagerBuilder database(String name, XADataSource dataSource) {
		Objects.requireNonNull(dataSource, "dataSource");
		if (name == null || !DATABASE_NAME.matcher(name).matches()) {
			throw new IllegalArgumentException("Invalid database name '" + name
					+ "': use 1 to 200 letters, digits, '-' and '_'");
		}
		if (this.databases.putIfAbsent(name, dataSource) != null) {
			throw new IllegalArgumentException("Database '" + name + "' is configured twice");
		}
		return this;
	}

	/**
	 * Sets the prefix of transactional ids and owner ids; stable across restarts.
	 * @param idPrefix the prefix
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder idPrefix(String idPrefix) {
		this.idPrefix = idPrefix;
		return this;
	}

	/**
	 * Sets this app instance's id; stable across restarts of the same instance, unique among
	 * instances running at once (a restarted instance recovers the transactions of its id).
	 * @param instanceId the instance id
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder instanceId(String instanceId) {
		this.instanceId = instanceId;
		return this;
	}

	/**
	 * Sets the decision log (required).
	 * @param decisionLog the log
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder decisionLog(DecisionLog decisionLog) {
		this.decisionLog = decisionLog;
		return this;
	}

	/**
	 * Sets the marker topic, created on every cluster if missing.
	 * @param markerTopic the topic name, default
	 *     {@link CrossClusterTransactionManager#DEFAULT_MARKER_TOPIC}
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder markerTopic(String markerTopic) {
		this.markerTopic = markerTopic;
		return this;
	}

	/**
	 * Sets how many transactions may run at once (one producer per cluster each). Free slots
	 * are taken in the order they were released, so back-to-back transactions use different
	 * transactional ids and do not wait for the previous one's commit markers
	 * ({@code CONCURRENT_TRANSACTIONS}); a {@link TransactionPipeline} needs one slot per
	 * transaction in flight.
	 * @param slots 1 or more, default {@value #DEFAULT_SLOTS}
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder slots(int slots) {
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
	 * @param transactionTimeout the timeout, default {@link #DEFAULT_TRANSACTION_TIMEOUT}
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder transactionTimeout(Duration transactionTimeout) {
		this.transactionTimeout = transactionTimeout;
		return this;
	}

	/**
	 * Sets how long flush, commit and abort calls may take per participant.
	 * @param commitTimeout the timeout, default {@link #DEFAULT_COMMIT_TIMEOUT}
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder commitTimeout(Duration commitTimeout) {
		this.commitTimeout = commitTimeout;
		return this;
	}

	/**
	 * Sets how long one decision-log call may take.
	 * @param decisionTimeout the timeout, default {@link #DEFAULT_DECISION_TIMEOUT}
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder decisionTimeout(Duration decisionTimeout) {
		this.decisionTimeout = decisionTimeout;
		return this;
	}

	/**
	 * Sets a hook called at each protocol step (fault-injection tests).
	 * @param hook the hook
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder protocolHook(ProtocolHook hook) {
		this.hook = hook;
		return this;
	}

	/**
	 * Adds a listener told of outcomes; may be called several times.
	 * @param listener the listener
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder listener(TransactionListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
		return this;
	}

	/**
	 * Adds a binding told whenever {@link CrossClusterTransactionTemplate} binds a transaction of
	 * this manager to a thread (a framework's thread-bound resources, such as a JPA entity manager);
	 * may be called several times, bindings run in the order added.
	 * @param binding the binding
	 * @return this builder
	 * @since 0.1.0
	 */
	public CrossClusterTransactionManagerBuilder threadBinding(TransactionThreadBinding binding) {
		this.threadBindings.add(Objects.requireNonNull(binding, "binding"));
		return this;
	}

	/**
	 * Sets the first delay between background attempts to resolve an in-doubt transaction;
	 * it doubles after each failed attempt, up to 30 s.
	 * @param recoveryInterval the delay, positive; default {@link #DEFAULT_RECOVERY_INTERVAL}
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder recoveryInterval(Duration recoveryInterval) {
		if (recoveryInterval.isNegative() || recoveryInterval.isZero()) {
			throw new IllegalArgumentException("recoveryInterval must be positive");
		}
		this.recoveryInterval = recoveryInterval;
		return this;
	}

	/**
	 * Sets how long this instance's lease in the decision log lasts unless renewed (it is renewed
	 * every third of it). When it expires, a live instance of the same app (same id prefix, on the
	 * same decision log) claims it, commits the instance's decided transactions and aborts its open
	 * ones; a restart after a crash waits at most this long for the previous run's lease to expire,
	 * and a second running instance with the same instance id is refused at start-up. Shorter
	 * means faster takeover and restart, longer tolerates longer pauses of the instance (GC, a
	 * partition from the coordinator). Zero turns leases off; a decision log that keeps no leases
	 * turns them off too ({@link DecisionLog#supportsLeases()}).
	 * @param leaseTimeout zero, or at least {@link #MIN_LEASE_TIMEOUT} (300 ms); default
	 *     {@link #DEFAULT_LEASE_TIMEOUT}
	 * @return this builder
	 * @throws IllegalArgumentException if negative or between zero and 300 ms
	 */
	public CrossClusterTransactionManagerBuilder leaseTimeout(Duration leaseTimeout) {
		if (leaseTimeout.isNegative() || (!leaseTimeout.isZero() && leaseTimeout.compareTo(MIN_LEASE_TIMEOUT) < 0)) {
			throw new IllegalArgumentException("leaseTimeout must be zero (off) or at least "
					+ DurationText.of(MIN_LEASE_TIMEOUT) + ": " + DurationText.of(leaseTimeout));
		}
		this.leaseTimeout = leaseTimeout;
		return this;
	}

	/**
	 * Sets the age past which a decided but not completed transaction of any instance of this app is reported as
	 * stale (a WARN once per transaction, {@link CrossClusterTransactionManager#staleDecisions()}):
	 * its owner is down or cannot reach a cluster, and its brokers will abort it at
	 * {@code transaction.timeout.ms} unless it is committed first. Checked with the lease renewals.
	 * @param staleDecisionAge positive, default {@link #DEFAULT_STALE_DECISION_AGE}
	 * @return this builder
	 * @throws IllegalArgumentException if not positive
	 */
	public CrossClusterTransactionManagerBuilder staleDecisionAge(Duration staleDecisionAge) {
		if (staleDecisionAge.isNegative() || staleDecisionAge.isZero()) {
			throw new IllegalArgumentException("staleDecisionAge must be positive: " + DurationText.of(staleDecisionAge));
		}
		this.staleDecisionAge = staleDecisionAge;
		return this;
	}

	/**
	 * Sets whether every cluster must be available at start-up. By default an instance starts without
	 * a cluster that does not answer: the cluster's marker topic and its in-doubt transactions are
	 * recovered in the background, and a transaction that needs it fails
	 * ({@link ClusterUnavailableException}) until it is back. With {@code true}, {@link
	 * CrossClusterTransactionManager#start()} fails instead.
	 * @param requireAllClustersAtStart whether every cluster is required at start-up
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder requireAllClustersAtStart(boolean requireAllClustersAtStart) {
		this.requireAllClustersAtStart = requireAllClustersAtStart;
		return this;
	}

	/**
	 * Sets whether a second running instance with this instance id is also detected through Kafka.
	 * By default it is whenever the decision log is not {@link DecisionLog#sharedByInstances()
	 * shared by every instance} (the embedded coordinator: each instance has its own log, so the
	 * lease in the log cannot see the other instance), and not with a shared log, whose leases do.
	 * Each instance then writes a heartbeat every third of the lease timeout to the compacted topic
	 * {@code tandem-instances} on the first cluster (created where missing: the app needs the right
	 * to create it, or an operator creates it, one partition, compacted). A start-up that finds
	 * another run's heartbeat renewed, or another run that claimed the id while it started, fails
	 * with {@link DuplicateInstanceException}; a running instance that sees another run renew a
	 * heartbeat begins no transaction any more. Off when the lease timeout is zero.
	 * <p>
	 * Turning it off with a log of each instance's own is at the caller's risk: two running
	 * instances with one id then fence each other's producers and, since neither log sees the
	 * other's decisions, leave transactions committed on some clusters only (reported as heuristic
	 * outcomes); only do so where something else guarantees one running instance per id.
	 * @param duplicateCheckThroughKafka whether to check through Kafka, whatever the decision log
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder duplicateCheckThroughKafka(boolean duplicateCheckThroughKafka) {
		this.duplicateCheckThroughKafka = duplicateCheckThroughKafka;
		return this;
	}

	/**
	 * Sets what tells that a cluster is unreachable now, so that a transaction needing it fails at
	 * once instead of after the producer's {@code max.block.ms}.
	 * @param clusterReachability the reachability, cheap and thread-safe
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder clusterReachability(ClusterReachability clusterReachability) {
		this.clusterReachability = Objects.requireNonNull(clusterReachability, "clusterReachability");
		return this;
	}

	/**
	 * Sets a callback told of every participant producer created (after
	 * {@code initTransactions()}), with its cluster name: for example to bind a leader cache.
	 * Called on the creating thread; must be fast and must not close the producer.
	 * @param producerCreated the callback
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder producerCreated(
			BiConsumer<String, Producer<?, ?>> producerCreated) {
		this.producerCreated = Objects.requireNonNull(producerCreated, "producerCreated");
		return this;
	}

	/**
	 * Sets how recovery completes prepared participants.
	 * @param participantProtocol the protocol
	 * @return this builder
	 */
	public CrossClusterTransactionManagerBuilder participantProtocol(ParticipantProtocol participantProtocol) {
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
