package dev.tandem.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.autoconfigure.transaction.FailedRecordPolicy;
import dev.tandem.autoconfigure.transaction.ListenerPipelines;
import dev.tandem.text.DurationText;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;
import dev.tandem.transaction.HangingTransactionsCheck;
import dev.tandem.transaction.TransactionSizing;

/**
 * Configuration properties for Tandem ({@code tandem.*}). Defaults the library declares (the
 * {@code CrossClusterTransactionManagerBuilder.DEFAULT_*} constants, {@link FailedRecordPolicy#DEFAULT})
 * are read from there, not repeated; the configuration metadata gets them from
 * {@code additional-spring-configuration-metadata.json}.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("tandem")
public class TandemProperties {

	/**
	 * Kafka clusters by name. Names appear in bean names, transactional ids and metrics: letters,
	 * digits, '-' and '_'.
	 */
	private final Map<String, Cluster> clusters = new LinkedHashMap<>();

	/**
	 * Databases taking part in cross-cluster transactions, by name (issue 28): each becomes a
	 * CrossClusterDataSource bean named {@code <name>DataSource} whose writes inside a
	 * cross-cluster transaction commit or roll back with its records. The name is part of
	 * Tandem's prepared-branch ids: letters, digits, '-' and '_', stable across restarts.
	 */
	private final Map<String, Datasource> datasources = new LinkedHashMap<>();

	private final Transaction transaction = new Transaction();

	private final Coordinator coordinator = new Coordinator();

	private final Failover failover = new Failover();

	private final Listener listener = new Listener();

	public Map<String, Cluster> getClusters() {
		return this.clusters;
	}

	public Map<String, Datasource> getDatasources() {
		return this.datasources;
	}

	public Transaction getTransaction() {
		return this.transaction;
	}

	public Coordinator getCoordinator() {
		return this.coordinator;
	}

	public Failover getFailover() {
		return this.failover;
	}

	public Listener getListener() {
		return this.listener;
	}

	/**
	 * One database participant ({@code tandem.datasources.<name>.*}): the driver's XA data source
	 * for the transactions' branches, and a connection pool of the same database for work outside
	 * cross-cluster transactions.
	 */
	public static class Datasource {

		/**
		 * JDBC URL of the database, such as jdbc:postgresql://db:5432/orders.
		 */
		private @Nullable String url;

		/**
		 * Login user of the database.
		 */
		private @Nullable String username;

		/**
		 * Login password of the database.
		 */
		private @Nullable String password;

		/**
		 * The driver's javax.sql.XADataSource class; derived from the URL for PostgreSQL
		 * (org.postgresql.xa.PGXADataSource), MySQL (com.mysql.cj.jdbc.MysqlXADataSource) and
		 * MariaDB (org.mariadb.jdbc.MariaDbDataSource).
		 */
		private @Nullable String xaDataSourceClassName;

		/**
		 * Properties of the XA data source, such as socket-timeout and connect-timeout (seconds,
		 * PostgreSQL): they bound every call Tandem makes on the database.
		 */
		private final Map<String, String> xaProperties = new LinkedHashMap<>();

		/**
		 * Properties of the connection pool used outside cross-cluster transactions (HikariCP's
		 * when present, such as maximum-pool-size).
		 */
		private final Map<String, String> pool = new LinkedHashMap<>();

		/**
		 * Whether this data source is the primary DataSource bean (the one JdbcTemplate and Spring
		 * Data JDBC use when the application has several).
		 */
		private boolean primary;

		public @Nullable String getUrl() {
			return this.url;
		}

		public void setUrl(@Nullable String url) {
			this.url = url;
		}

		public @Nullable String getUsername() {
			return this.username;
		}

		public void setUsername(@Nullable String username) {
			this.username = username;
		}

		public @Nullable String getPassword() {
			return this.password;
		}

		public void setPassword(@Nullable String password) {
			this.password = password;
		}

		public @Nullable String getXaDataSourceClassName() {
			return this.xaDataSourceClassName;
		}

		public void setXaDataSourceClassName(@Nullable String xaDataSourceClassName) {
			this.xaDataSourceClassName = xaDataSourceClassName;
		}

		public Map<String, String> getXaProperties() {
			return this.xaProperties;
		}

		public Map<String, String> getPool() {
			return this.pool;
		}

		public boolean isPrimary() {
			return this.primary;
		}

		public void setPrimary(boolean primary) {
			this.primary = primary;
		}

	}

	/**
	 * One Kafka cluster.
	 */
	public static class Cluster {

		/**
		 * Bootstrap servers (host:port) of the cluster; a TandemClusterConnectionDetails bean for
		 * the cluster wins.
		 */
		private List<String> bootstrapServers = new ArrayList<>();

		/**
		 * Client properties passed to every client of this cluster (security, SASL, SSL...).
		 */
		private final Map<String, String> properties = new HashMap<>();

		/**
		 * Producer properties of this cluster, over the common ones.
		 */
		private final Map<String, String> producer = new HashMap<>();

		/**
		 * Consumer properties of this cluster, over the common ones.
		 */
		private final Map<String, String> consumer = new HashMap<>();

		/**
		 * Admin client properties of this cluster, over the common ones.
		 */
		private final Map<String, String> admin = new HashMap<>();

		private final Ssl ssl = new Ssl();

		public List<String> getBootstrapServers() {
			return this.bootstrapServers;
		}

		public void setBootstrapServers(List<String> bootstrapServers) {
			this.bootstrapServers = bootstrapServers;
		}

		public Map<String, String> getProperties() {
			return this.properties;
		}

		public Map<String, String> getProducer() {
			return this.producer;
		}

		public Map<String, String> getConsumer() {
			return this.consumer;
		}

		public Map<String, String> getAdmin() {
			return this.admin;
		}

		public Ssl getSsl() {
			return this.ssl;
		}

		/**
		 * SSL of one cluster.
		 */
		public static class Ssl {

			/**
			 * Name of the SSL bundle (spring.ssl.bundle.*) for every client of this cluster,
			 * instead of the one inherited from spring.kafka.ssl.bundle.
			 */
			private @Nullable String bundle;

			public @Nullable String getBundle() {
				return this.bundle;
			}

			public void setBundle(@Nullable String bundle) {
				this.bundle = bundle;
			}

		}

	}

	/**
	 * Cross-cluster transactions.
	 */
	public static class Transaction {

		/**
		 * Whether cross-cluster transactions are enabled.
		 */
		private boolean enabled = true;

		/**
		 * Prefix of transactional ids and transaction owner ids; stable across restarts. Defaults
		 * to spring.application.name.
		 */
		private @Nullable String idPrefix;

		/**
		 * Id of this app instance: stable across its restarts and unique among running instances
		 * (for example the StatefulSet pod name). A restarted instance recovers the in-doubt
		 * transactions of its id.
		 */
		private @Nullable String instanceId;

		/**
		 * Producers' transaction.timeout.ms: how long a broker keeps a transaction open. A decided
		 * transaction whose instance stays down longer ends as a heuristic outcome. At most the
		 * brokers' transaction.max.timeout.ms.
		 */
		private Duration timeout = CrossClusterTransactionManagerBuilder.DEFAULT_TRANSACTION_TIMEOUT;

		/**
		 * Maximum time of a flush, commit or abort per cluster.
		 */
		private Duration commitTimeout = CrossClusterTransactionManagerBuilder.DEFAULT_COMMIT_TIMEOUT;

		/**
		 * Maximum time of one write or read of the decision log.
		 */
		private Duration decisionTimeout = CrossClusterTransactionManagerBuilder.DEFAULT_DECISION_TIMEOUT;

		/**
		 * Number of transactions that may run at once on this instance (one producer per cluster
		 * each). At least the deepest REQUIRES_NEW nesting plus the listener concurrency.
		 */
		private int slots = CrossClusterTransactionManagerBuilder.DEFAULT_SLOTS;

		/**
		 * Topic for marker records, created on every cluster when missing.
		 */
		private String markerTopic = CrossClusterTransactionManager.DEFAULT_MARKER_TOPIC;

		/**
		 * How long this instance's lease in the decision log lasts unless renewed (renewed every
		 * third of it). With the remote coordinator, when it expires another instance of the app
		 * commits this instance's decided transactions and aborts its open ones; a restart after a
		 * crash waits at most this long; a second running instance with the same instance id is
		 * refused at start-up. 0 turns leases off.
		 */
		private Duration leaseTimeout = CrossClusterTransactionManagerBuilder.DEFAULT_LEASE_TIMEOUT;

		/**
		 * Age past which a decided but not completed transaction of any instance of this app (same id prefix) is reported as
		 * stale: a WARN, the tandem.transaction.decisions.stale gauge and the kafkatransactions
		 * endpoint.
		 */
		private Duration staleDecisionAge = CrossClusterTransactionManagerBuilder.DEFAULT_STALE_DECISION_AGE;

		/**
		 * How often the app's Kafka transactions open on a broker with nobody to end them are
		 * counted for the tandem.transaction.hanging gauge (an Admin listTransactions per
		 * cluster); needs Micrometer. 0 turns the check off.
		 */
		private Duration hangingCheckInterval = HangingTransactionsCheck.DEFAULT_INTERVAL;

		public Duration getHangingCheckInterval() {
			return this.hangingCheckInterval;
		}

		public void setHangingCheckInterval(Duration hangingCheckInterval) {
			this.hangingCheckInterval = hangingCheckInterval;
		}

		/**
		 * Whether every cluster must answer at start-up. By default the app starts without a
		 * cluster that is down (its health is DOWN, its marker topic and in-doubt transactions are
		 * recovered in the background, and transactions that need it fail fast until it is back).
		 */
		private boolean requireAllClustersAtStart;

		public boolean isRequireAllClustersAtStart() {
			return this.requireAllClustersAtStart;
		}

		public void setRequireAllClustersAtStart(boolean requireAllClustersAtStart) {
			this.requireAllClustersAtStart = requireAllClustersAtStart;
		}

		public Duration getLeaseTimeout() {
			return this.leaseTimeout;
		}

		public void setLeaseTimeout(Duration leaseTimeout) {
			this.leaseTimeout = leaseTimeout;
		}

		public Duration getStaleDecisionAge() {
			return this.staleDecisionAge;
		}

		public void setStaleDecisionAge(Duration staleDecisionAge) {
			this.staleDecisionAge = staleDecisionAge;
		}

		/**
		 * Checks the settings before anything is started with them (the embedded coordinator
		 * included, so that a bad start leaves no data directory behind). Durations in the
		 * messages are written as in {@code application.yml}.
		 * @throws TandemConfigurationException naming the property, if slots are below 1, a
		 *     timeout or the stale-decision age is not positive, the lease timeout is negative or
		 *     below 300 ms (0 turns leases off), the transaction timeout exceeds what Kafka holds,
		 *     or the marker topic is not a valid topic name
		 */
		public void validate() {
			if (this.slots < 1) {
				throw new TandemConfigurationException("tandem.transaction.slots", "tandem.transaction.slots is "
						+ this.slots + "; at least one transaction slot is needed.",
						"Set tandem.transaction.slots to 1 or more (listener concurrency plus REQUIRES_NEW nesting depth).");
			}
			positive("tandem.transaction.commit-timeout", this.commitTimeout);
			positive("tandem.transaction.decision-timeout", this.decisionTimeout);
			positive("tandem.transaction.timeout", this.timeout);
			positive("tandem.transaction.stale-decision-age", this.staleDecisionAge);
			Duration lease = this.leaseTimeout;
			if (lease == null || lease.isNegative()
					|| (!lease.isZero() && lease.compareTo(CrossClusterTransactionManagerBuilder.MIN_LEASE_TIMEOUT) < 0)) {
				throw new TandemConfigurationException("tandem.transaction.lease-timeout", "tandem.transaction.lease-timeout "
						+ DurationText.of(lease) + " is too short: the lease is renewed every third of it.",
						"Set tandem.transaction.lease-timeout to "
								+ DurationText.of(CrossClusterTransactionManagerBuilder.MIN_LEASE_TIMEOUT) + " or more ("
								+ DurationText.of(CrossClusterTransactionManagerBuilder.DEFAULT_LEASE_TIMEOUT) + " by default), or 0 to turn leases off.");
			}
			if (this.timeout.toMillis() > Integer.MAX_VALUE) {
				throw new TandemConfigurationException("tandem.transaction.timeout", "tandem.transaction.timeout "
						+ DurationText.of(this.timeout) + " exceeds what Kafka's transaction.timeout.ms can hold.",
						"Set tandem.transaction.timeout to at most the brokers' transaction.max.timeout.ms (15m by default).");
			}
			if (this.hangingCheckInterval == null || this.hangingCheckInterval.isNegative()) {
				throw new TandemConfigurationException("tandem.transaction.hanging-check-interval",
						"tandem.transaction.hanging-check-interval is " + DurationText.of(this.hangingCheckInterval)
								+ "; it must not be negative.",
						"Set tandem.transaction.hanging-check-interval to a duration such as 1m, or 0 to turn the check off.");
			}
			if (this.markerTopic == null || !this.markerTopic.matches("[a-zA-Z0-9._-]{1,249}")) {
				throw new TandemConfigurationException("tandem.transaction.marker-topic", "'" + this.markerTopic
						+ "' is not a valid Kafka topic name.", "Use letters, digits, '.', '_' and '-' (at most 249).");
			}
		}

		private static void positive(String property, @Nullable Duration value) {
			if (value == null || value.isNegative() || value.isZero()) {
				throw new TandemConfigurationException(property, property + " is " + DurationText.of(value)
						+ "; it must be positive.", "Set " + property + " to a positive duration such as 5s.");
			}
		}

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable String getIdPrefix() {
			return this.idPrefix;
		}

		public void setIdPrefix(@Nullable String idPrefix) {
			this.idPrefix = idPrefix;
		}

		public @Nullable String getInstanceId() {
			return this.instanceId;
		}

		public void setInstanceId(@Nullable String instanceId) {
			this.instanceId = instanceId;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public Duration getCommitTimeout() {
			return this.commitTimeout;
		}

		public void setCommitTimeout(Duration commitTimeout) {
			this.commitTimeout = commitTimeout;
		}

		public Duration getDecisionTimeout() {
			return this.decisionTimeout;
		}

		public void setDecisionTimeout(Duration decisionTimeout) {
			this.decisionTimeout = decisionTimeout;
		}

		public int getSlots() {
			return this.slots;
		}

		public void setSlots(int slots) {
			this.slots = slots;
		}

		public String getMarkerTopic() {
			return this.markerTopic;
		}

		public void setMarkerTopic(String markerTopic) {
			this.markerTopic = markerTopic;
		}

	}

	/**
	 * The decision log (coordinator).
	 */
	public static class Coordinator {

		/**
		 * Where the decision log runs: in this app (one Ratis peer) or in a remote coordinator
		 * service.
		 */
		private Mode mode = Mode.EMBEDDED;

		/**
		 * Directory of the embedded peer's Raft log and snapshots; must be writable and survive
		 * restarts.
		 */
		private Path dataDir = Path.of("tandem-data/coordinator");

		/**
		 * Remote coordinator peers as id=host:port (for example n0=tandem-0.tandem:9870).
		 */
		private List<String> peers = new ArrayList<>();

		/**
		 * Whether the app may talk to remote coordinator peers in plain text when no SSL
		 * bundle is set; anyone on the network path can then read and forge decisions. The
		 * embedded coordinator is always plain text on the loopback interface.
		 */
		private boolean plaintextAllowed;

		private final Ssl ssl = new Ssl();

		public boolean isPlaintextAllowed() {
			return this.plaintextAllowed;
		}

		public void setPlaintextAllowed(boolean plaintextAllowed) {
			this.plaintextAllowed = plaintextAllowed;
		}

		public Ssl getSsl() {
			return this.ssl;
		}

		public Mode getMode() {
			return this.mode;
		}

		public void setMode(Mode mode) {
			this.mode = mode;
		}

		public Path getDataDir() {
			return this.dataDir;
		}

		public void setDataDir(Path dataDir) {
			this.dataDir = dataDir;
		}

		public List<String> getPeers() {
			return this.peers;
		}

		public void setPeers(List<String> peers) {
			this.peers = peers;
		}

		/**
		 * Coordinator deployment mode.
		 */
		/**
		 * Mutual TLS towards the remote coordinator.
		 */
		public static class Ssl {

			/**
			 * Name of the Spring Boot SSL bundle (spring.ssl.bundle.*) whose key store holds
			 * this app's client certificate (its common name is the app's identity for the
			 * coordinator's authorization) and whose trust store holds the coordinator's CA.
			 */
			private @Nullable String bundle;

			public @Nullable String getBundle() {
				return this.bundle;
			}

			public void setBundle(@Nullable String bundle) {
				this.bundle = bundle;
			}

		}

		public enum Mode {

			/** One Ratis peer inside this app, log on disk. */
			EMBEDDED,

			/** A remote 3- or 5-peer coordinator service; this app is a client. */
			REMOTE

		}

	}

	/**
	 * Fast-failover client settings.
	 */
	public static class Failover {

		/**
		 * Whether Tandem's failover client profile is applied to every client of every cluster
		 * (cluster properties still win).
		 */
		private boolean enabled = true;

		/**
		 * How often every client's reachability is checked from its own metadata (no broker
		 * request), so that a client that lost all its brokers is logged, counted and shown
		 * in health even while it sends or polls nothing. Zero disables the background check
		 * (producers still check on send).
		 */
		private Duration reachabilityCheckInterval = Duration.ofSeconds(1);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getReachabilityCheckInterval() {
			return this.reachabilityCheckInterval;
		}

		public void setReachabilityCheckInterval(Duration reachabilityCheckInterval) {
			// checked while binding, before any bean connects to a cluster
			if (reachabilityCheckInterval == null || reachabilityCheckInterval.isNegative()) {
				throw new IllegalArgumentException("tandem.failover.reachability-check-interval must not be empty or negative but was "
						+ DurationText.of(reachabilityCheckInterval) + "; set a positive interval such as 1s (the default), "
						+ "or 0 to check only when producers send and when /actuator/kafkaleaders or health is read");
			}
			this.reachabilityCheckInterval = reachabilityCheckInterval;
		}

	}

	/**
	 * {@code @CrossClusterTransactional} listeners on Tandem's listener containers: what happens
	 * to a record whose processing keeps failing.
	 */
	public static class Listener {

		/**
		 * Times a failing record is processed, the first included, before it is given up: then
		 * failed-record applies. A failing batch is first narrowed to its failing record (by the
		 * index of a BatchListenerFailedException, else by bisection in smaller transactions).
		 */
		private int attempts = FailedRecordPolicy.DEFAULT.attempts();

		/**
		 * Pause between two attempts of a failing record, and between retries of a delivery
		 * whose transaction failed for a reason other than the listener (a cluster that cannot
		 * commit), which is retried until it succeeds.
		 */
		private Duration backOff = FailedRecordPolicy.DEFAULT.backOff();

		/**
		 * What happens to a record that failed every attempt.
		 */
		private FailedRecordAction failedRecord = FailedRecordPolicy.DEFAULT.action();

		/**
		 * Transactions in flight per batch listener consumer: with 2 or more, a delivery's
		 * transaction commits while the container delivers the next records (in order; a
		 * failed commit rewinds the consumer and delivers again). 1 commits each delivery
		 * before the listener returns. At most tandem.transaction.slots.
		 */
		private int pipelineDepth = ListenerPipelines.DEFAULT_DEPTH;

		/**
		 * Records at which a pipelined batch listener's transaction, which spans deliveries (the
		 * listener returns and the next delivery joins it), is closed and committed, unless the
		 * previous transaction is still preparing: then it keeps taking deliveries, up to growth
		 * times as many.
		 */
		private int maxRecords = TransactionSizing.DEFAULT.maxRecords();

		/**
		 * How many times max-records a pipelined batch listener's transaction may hold while the
		 * previous one still prepares (its offset commit, a round trip to the source). 1 closes
		 * it at max-records.
		 */
		private int growth = TransactionSizing.DEFAULT.growth();

		/**
		 * Age at which a pipelined batch listener's transaction is closed and committed whatever
		 * its size, also when no records come. Below tandem.transaction.timeout.
		 */
		private Duration maxInterval = TransactionSizing.DEFAULT.maxInterval();

		/**
		 * How long records delivered to a listener of a Tandem container may wait without a
		 * commit of its group before the container is reported stalled (health DOWN, an ERROR
		 * line, the tandem.listener.containers meter). Checked in the background every quarter
		 * of it, at most every 10 seconds. 0 turns the check off.
		 */
		private Duration stallThreshold = Duration.ofMinutes(2);

		private final DeadLetter deadLetter = new DeadLetter();

		public Duration getStallThreshold() {
			return this.stallThreshold;
		}

		public void setStallThreshold(Duration stallThreshold) {
			this.stallThreshold = stallThreshold;
		}

		public int getMaxRecords() {
			return this.maxRecords;
		}

		public void setMaxRecords(int maxRecords) {
			this.maxRecords = maxRecords;
		}

		public int getGrowth() {
			return this.growth;
		}

		public void setGrowth(int growth) {
			this.growth = growth;
		}

		public Duration getMaxInterval() {
			return this.maxInterval;
		}

		public void setMaxInterval(Duration maxInterval) {
			this.maxInterval = maxInterval;
		}

		public int getPipelineDepth() {
			return this.pipelineDepth;
		}

		public void setPipelineDepth(int pipelineDepth) {
			this.pipelineDepth = pipelineDepth;
		}

		public int getAttempts() {
			return this.attempts;
		}

		public void setAttempts(int attempts) {
			this.attempts = attempts;
		}

		public Duration getBackOff() {
			return this.backOff;
		}

		public void setBackOff(Duration backOff) {
			this.backOff = backOff;
		}

		public FailedRecordAction getFailedRecord() {
			return this.failedRecord;
		}

		public void setFailedRecord(FailedRecordAction failedRecord) {
			this.failedRecord = failedRecord;
		}

		public DeadLetter getDeadLetter() {
			return this.deadLetter;
		}

		/**
		 * Dead-letter topics of failed records.
		 */
		public static class DeadLetter {

			/**
			 * Cluster of the dead-letter topics. Defaults to the listener's own cluster (then the
			 * record and its offset commit in one Kafka transaction).
			 */
			private @Nullable String cluster;

			/**
			 * Suffix appended to a record's topic to name its dead-letter topic. With
			 * failed-record=dead-letter, the dead-letter topic of every topic a Tandem listener
			 * consumes is checked at start-up: a missing one fails start-up unless
			 * create-topics is set.
			 */
			private String topicSuffix = FailedRecordPolicy.DEFAULT.deadLetterSuffix();

			/**
			 * Whether missing dead-letter topics are created at start-up, with the partition
			 * count of their source topic and the dead-letter cluster's default replication
			 * factor.
			 */
			private boolean createTopics;

			public boolean isCreateTopics() {
				return this.createTopics;
			}

			public void setCreateTopics(boolean createTopics) {
				this.createTopics = createTopics;
			}

			public @Nullable String getCluster() {
				return this.cluster;
			}

			public void setCluster(@Nullable String cluster) {
				this.cluster = cluster;
			}

			public String getTopicSuffix() {
				return this.topicSuffix;
			}

			public void setTopicSuffix(String topicSuffix) {
				this.topicSuffix = topicSuffix;
			}

		}

		/**
		 * What happens to a listener record that failed every attempt.
		 */
		public enum FailedRecordAction {

			/**
			 * Stop the listener's container, the record's offset not committed: it is delivered
			 * again when the container is started. Nothing is lost.
			 */
			STOP,

			/**
			 * Publish the record to its dead-letter topic and commit its offset in the same
			 * cross-cluster transaction; the listener goes on with the next record.
			 */
			DEAD_LETTER

		}

	}

}
