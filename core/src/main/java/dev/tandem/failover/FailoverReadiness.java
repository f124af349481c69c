package dev.tandem.failover;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.AuthorizationException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.failover.ReadinessFinding.Severity;

/**
 * Reads the broker and topic settings that bound how fast clients can fail over, through
 * {@code Admin.describeConfigs}, and returns findings with recommendations.
 * <p>
 * The client profile cannot make failover fast on its own: after a leader change,
 * {@code acks=all} produce waits until the followers fetch from the new leader, and they first
 * back off {@code replica.fetch.backoff.ms} (1000 ms by default, a stall of about that much); and
 * a broker that dies without a controlled shutdown keeps its leaderships until the controller
 * fences it after {@code broker.session.timeout.ms} (9 s by default). The measurements behind the
 * recommendations are in {@code docs/benchmarks.md}, "Failover". Settings checked, per broker:
 * {@code replica.fetch.backoff.ms}, {@code broker.session.timeout.ms}, {@code broker.heartbeat.interval.ms},
 * {@code unclean.leader.election.enable}, {@code min.insync.replicas} (against
 * {@code default.replication.factor}), {@code replica.lag.time.max.ms},
 * {@code auto.leader.rebalance.enable}; per topic asked for: {@code min.insync.replicas}
 * against the topic's replication factor, and {@code unclean.leader.election.enable}.
 * <p>
 * Brokers report their own copy of the controller settings {@code broker.session.timeout.ms}
 * and {@code broker.heartbeat.interval.ms}; the controller's value governs, so keep them
 * equal on all nodes. Brokers sharing a value share a finding.
 * <p>
 * Instances are thread-safe if the {@code Admin} client is (kafka-clients' is). The admin
 * client is not closed by this class.
 *
 * @author Tandem
 * @since 0.1.0
 */
public final class FailoverReadiness {

	/**
	 * Highest {@code replica.fetch.backoff.ms} accepted without a warning: 100 ms.
	 * @since 0.1.0
	 */
	public static final long MAX_REPLICA_FETCH_BACKOFF_MS = 100;

	/**
	 * Recommended {@code replica.fetch.backoff.ms}: 50 ms: followers of a new leader start
	 * fetching almost at once, so {@code acks=all} produce resumes (see {@code docs/benchmarks.md}).
	 * @since 0.1.0
	 */
	public static final long RECOMMENDED_REPLICA_FETCH_BACKOFF_MS = 50;

	/**
	 * Highest {@code broker.session.timeout.ms} accepted without a warning: 3000 ms.
	 * @since 0.1.0
	 */
	public static final long MAX_BROKER_SESSION_TIMEOUT_MS = 3000;

	/**
	 * Highest {@code replica.lag.time.max.ms} reported as OK rather than INFO: 10000 ms.
	 * @since 0.1.0
	 */
	public static final long MAX_REPLICA_LAG_TIME_MS = 10_000;

	static final String REPLICA_FETCH_BACKOFF_MS = "replica.fetch.backoff.ms";

	static final String BROKER_SESSION_TIMEOUT_MS = "broker.session.timeout.ms";

	static final String BROKER_HEARTBEAT_INTERVAL_MS = "broker.heartbeat.interval.ms";

	static final String UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable";

	static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";

	static final String DEFAULT_REPLICATION_FACTOR = "default.replication.factor";

	static final String REPLICA_LAG_TIME_MAX_MS = "replica.lag.time.max.ms";

	static final String AUTO_LEADER_REBALANCE_ENABLE = "auto.leader.rebalance.enable";

	private static final List<String> BROKER_SETTINGS = List.of(REPLICA_FETCH_BACKOFF_MS, BROKER_SESSION_TIMEOUT_MS,
			BROKER_HEARTBEAT_INTERVAL_MS, UNCLEAN_LEADER_ELECTION_ENABLE, MIN_INSYNC_REPLICAS, REPLICA_LAG_TIME_MAX_MS,
			AUTO_LEADER_REBALANCE_ENABLE);

	private static final String KEEP = "keep";

	private static final Logger logger = LoggerFactory.getLogger(FailoverReadiness.class);

	private final String cluster;

	private final Admin admin;

	private final Clock clock;

	/**
	 * Create a readiness check for one cluster.
	 * @param cluster the cluster name, for reports and log messages
	 * @param admin an admin client of that cluster; it needs {@code DESCRIBE_CONFIGS} on the
	 * cluster (and on topics to check topics) and {@code DESCRIBE} on topics
	 * @since 0.1.0
	 */
	public FailoverReadiness(String cluster, Admin admin) {
		this(cluster, admin, Clock.systemUTC());
	}

	FailoverReadiness(String cluster, Admin admin, Clock clock) {
		this.cluster = Objects.requireNonNull(cluster, "cluster must not be null");
		this.admin = Objects.requireNonNull(admin, "admin must not be null");
		this.clock = clock;
	}

	/**
	 * Check the settings of every broker of the cluster.
	 * @param timeout how long to wait for the cluster, positive; the admin calls share it
	 * @return the report
	 * @throws FailoverReadinessException if the cluster cannot be described within the
	 * timeout
	 * @since 0.1.0
	 */
	public FailoverReadinessReport check(Duration timeout) {
		return check(List.of(), timeout);
	}

	/**
	 * Check the settings of every broker and of the given topics.
	 * @param topics the topics whose {@code min.insync.replicas} and unclean election setting
	 * to check against their replication factor; missing topics are reported as
	 * {@link Severity#UNKNOWN}
	 * @param timeout how long to wait for the cluster, positive; the admin calls share it
	 * @return the report
	 * @throws FailoverReadinessException if the cluster cannot be described within the
	 * timeout
	 * @since 0.1.0
	 */
	public FailoverReadinessReport check(Collection<String> topics, Duration timeout) {
		Objects.requireNonNull(topics, "topics must not be null");
		long deadline = System.nanoTime() + timeout.toNanos();
		Instant checkedAt = this.clock.instant();
		Collection<Node> nodes = get(this.admin.describeCluster(new DescribeClusterOptions().timeoutMs(remaining(deadline)))
			.nodes(), deadline, "describe the cluster");
		Map<ConfigResource, Integer> brokerResources = new LinkedHashMap<>();
		nodes.stream()
			.map(Node::id)
			.sorted()
			.forEach((id) -> brokerResources.put(new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(id)), id));
		Map<Integer, Map<String, String>> brokers = new TreeMap<>();
		String brokerError = null;
		try {
			Map<ConfigResource, Config> configs = get(this.admin.describeConfigs(brokerResources.keySet(),
					new DescribeConfigsOptions().timeoutMs(remaining(deadline))).all(), deadline, "describe broker configs");
			brokerResources.forEach((resource, id) -> brokers.put(id, values(configs.get(resource))));
		}
		catch (FailoverReadinessException ex) {
			if (!(ex.getCause() instanceof AuthorizationException)) {
				throw ex;
			}
			brokerError = ex.getCause().getMessage();
			brokerResources.values().forEach((id) -> brokers.put(id, Map.of()));
		}
		Map<String, TopicSettings> topicSettings = describeTopics(topics, deadline);
		FailoverReadinessReport report = evaluate(this.cluster, checkedAt, brokers, brokerError, topicSettings);
		logger.debug("Failover readiness of Kafka cluster '{}': {}", this.cluster, report.summary());
		return report;
	}

	private Map<String, TopicSettings> describeTopics(Collection<String> topics, long deadline) {
		Map<String, TopicSettings> settings = new LinkedHashMap<>();
		if (topics.isEmpty()) {
			return settings;
		}
		Map<String, KafkaFuture<TopicDescription>> descriptions = this.admin
			.describeTopics(topics, new DescribeTopicsOptions().timeoutMs(remaining(deadline)))
			.topicNameValues();
		Map<ConfigResource, String> resources = new LinkedHashMap<>();
		Map<String, Integer> replicationFactors = new HashMap<>();
		for (String topic : topics) {
			try {
				TopicDescription description = get(descriptions.get(topic), deadline, "describe topic '" + topic + "'");
				int replicationFactor = description.partitions()
					.stream()
					.mapToInt((partition) -> partition.replicas().size())
					.min()
					.orElse(0);
				replicationFactors.put(topic, replicationFactor);
				resources.put(new ConfigResource(ConfigResource.Type.TOPIC, topic), topic);
			}
			catch (FailoverReadinessException ex) {
				settings.put(topic, new TopicSettings(0, Map.of(), ex.getCause().getClass().getSimpleName() + ": "
						+ ex.getCause().getMessage()));
			}
		}
		if (!resources.isEmpty()) {
			Map<ConfigResource, KafkaFuture<Config>> configs = this.admin
				.describeConfigs(resources.keySet(), new DescribeConfigsOptions().timeoutMs(remaining(deadline)))
				.values();
			resources.forEach((resource, topic) -> {
				try {
					Config config = get(configs.get(resource), deadline, "describe configs of topic '" + topic + "'");
					settings.put(topic, new TopicSettings(replicationFactors.get(topic), values(config), null));
				}
				catch (FailoverReadinessException ex) {
					settings.put(topic, new TopicSettings(replicationFactors.get(topic), Map.of(),
							ex.getCause().getClass().getSimpleName() + ": " + ex.getCause().getMessage()));
				}
			});
		}
		return settings;
	}

	private static Map<String, String> values(@Nullable Config config) {
		Map<String, String> values = new HashMap<>();
		if (config != null) {
			for (ConfigEntry entry : config.entries()) {
				if (entry.value() != null) {
					values.put(entry.name(), entry.value());
				}
			}
		}
		return values;
	}

	private <T> T get(KafkaFuture<T> future, long deadline, String action) {
		try {
			return future.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new FailoverReadinessException("Interrupted while trying to " + action + " of Kafka cluster '"
					+ this.cluster + "'", ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new FailoverReadinessException("Cannot " + action + " of Kafka cluster '" + this.cluster + "'",
					cause);
		}
		catch (TimeoutException ex) {
			throw new FailoverReadinessException(
					"Timed out trying to " + action + " of Kafka cluster '" + this.cluster + "'", ex);
		}
	}

	private static int remaining(long deadline) {
		long millis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
		return (int) Math.max(1, Math.min(Integer.MAX_VALUE, millis));
	}

	/**
	 * Turn the settings read into findings; pure, for tests.
	 * @param cluster the cluster name
	 * @param checkedAt the time of reading
	 * @param brokers each broker's configuration values by broker id
	 * @param brokerError why broker configs could not be read, or {@code null}
	 * @param topics the settings of each topic asked for
	 */
	static FailoverReadinessReport evaluate(String cluster, Instant checkedAt, Map<Integer, Map<String, String>> brokers,
			@Nullable String brokerError, Map<String, TopicSettings> topics) {
		List<ReadinessFinding> findings = new ArrayList<>();
		for (String setting : BROKER_SETTINGS) {
			Map<Verdict, List<Integer>> groups = new LinkedHashMap<>();
			brokers.forEach((id, values) -> groups
				.computeIfAbsent(brokerVerdict(setting, values, brokerError, brokers.size()), (verdict) -> new ArrayList<>())
				.add(id));
			groups.forEach((verdict, ids) -> findings.add(verdict.finding(setting,
					"broker" + ((ids.size() > 1) ? "s " : " ")
							+ ids.stream().map(String::valueOf).collect(Collectors.joining(",")))));
		}
		topics.forEach((topic, settings) -> {
			findings.add(topicMinInsyncReplicas(settings).finding(MIN_INSYNC_REPLICAS, "topic " + topic));
			findings.add(uncleanElection(settings.configs().get(UNCLEAN_LEADER_ELECTION_ENABLE), settings.error())
				.finding(UNCLEAN_LEADER_ELECTION_ENABLE, "topic " + topic));
		});
		return new FailoverReadinessReport(cluster, checkedAt, findings);
	}

	private static Verdict brokerVerdict(String setting, Map<String, String> values, @Nullable String error,
			int brokerCount) {
		String value = values.get(setting);
		if (value == null) {
			String reason = (error != null) ? "Broker configs are not readable: " + error
					: "Not reported by the broker";
			if (setting.equals(BROKER_SESSION_TIMEOUT_MS) || setting.equals(BROKER_HEARTBEAT_INTERVAL_MS)) {
				reason += "; it is a controller setting, readable with an admin client using bootstrap.controllers";
			}
			return new Verdict(Severity.UNKNOWN, null, "check it on the brokers' configuration", reason);
		}
		return switch (setting) {
			case REPLICA_FETCH_BACKOFF_MS -> replicaFetchBackoff(value);
			case BROKER_SESSION_TIMEOUT_MS -> sessionTimeout(value);
			case BROKER_HEARTBEAT_INTERVAL_MS -> heartbeatInterval(value, values.get(BROKER_SESSION_TIMEOUT_MS));
			case UNCLEAN_LEADER_ELECTION_ENABLE -> uncleanElection(value, null);
			case MIN_INSYNC_REPLICAS -> (brokerCount == 1) ? singleBrokerMinInsyncReplicas(value)
					: brokerMinInsyncReplicas(value, values.get(DEFAULT_REPLICATION_FACTOR));
			case REPLICA_LAG_TIME_MAX_MS -> replicaLagTime(value);
			case AUTO_LEADER_REBALANCE_ENABLE -> autoLeaderRebalance(value);
			default -> throw new IllegalStateException("No rule for " + setting);
		};
	}

	private static Verdict replicaFetchBackoff(String value) {
		String reason = "After a leader change the followers back off this long before fetching from the new "
				+ "leader, and acks=all produce waits for them: measured ~1 s stalls with 1000 ms (the default); "
				+ "with 50 ms the median worst produce latency after a leader move fell from 1048 to 151 ms";
		long millis = parse(value);
		if (millis > MAX_REPLICA_FETCH_BACKOFF_MS) {
			return new Verdict(Severity.WARNING, value, "set " + RECOMMENDED_REPLICA_FETCH_BACKOFF_MS, reason);
		}
		return new Verdict(Severity.OK, value, KEEP, reason);
	}

	private static Verdict sessionTimeout(String value) {
		String reason = "A broker that dies without a controlled shutdown (kill -9, power loss) keeps its "
				+ "leaderships until the controller fences it after this long, and its partitions stall meanwhile: "
				+ "measured max produce latency 9.2 s with 9000 ms (the default), 3.2 s with 2000 ms";
		long millis = parse(value);
		if (millis > MAX_BROKER_SESSION_TIMEOUT_MS) {
			return new Verdict(Severity.WARNING, value, "set 2000-3000 on the controllers and brokers, with "
					+ BROKER_HEARTBEAT_INTERVAL_MS + " at most a third of it, if GC pauses and the network allow", reason);
		}
		return new Verdict(Severity.OK, value, KEEP, reason);
	}

	private static Verdict heartbeatInterval(String value, @Nullable String sessionTimeout) {
		String reason = "Brokers heartbeat to the controller this often; fewer than three heartbeats per "
				+ BROKER_SESSION_TIMEOUT_MS + " risks fencing healthy brokers, which moves their leaderships";
		if (sessionTimeout != null && parse(value) * 3 > parse(sessionTimeout)) {
			return new Verdict(Severity.WARNING, value, "set at most a third of " + BROKER_SESSION_TIMEOUT_MS + " ("
					+ parse(sessionTimeout) / 3 + ")", reason);
		}
		return new Verdict(Severity.OK, value, KEEP, reason);
	}

	private static Verdict uncleanElection(@Nullable String value, @Nullable String error) {
		String reason = "An unclean election makes an out-of-sync replica leader: failover is faster but "
				+ "acknowledged records are lost, and producers and Tandem's exactly-once checks cannot tell";
		if (value == null) {
			return new Verdict(Severity.UNKNOWN, null, "check it", (error != null) ? error : "Not reported");
		}
		if (Boolean.parseBoolean(value.trim())) {
			return new Verdict(Severity.WARNING, value, "set false", reason);
		}
		return new Verdict(Severity.OK, value, KEEP, reason);
	}

	/**
	 * A cluster of one broker (a demo's, a test's) has no replica to fail over to: 1 is the only
	 * value that lets acks=all produce, so it is worth knowing, not a warning.
	 */
	private static Verdict singleBrokerMinInsyncReplicas(String value) {
		if (parse(value) > 1) {
			return new Verdict(Severity.WARNING, value, "set 1 or add brokers",
					"A cluster of one broker cannot hold more than one in-sync replica: acks=all produce fails "
							+ "(NOT_ENOUGH_REPLICAS)");
		}
		return new Verdict(Severity.INFO, value, KEEP,
				"A cluster of one broker has no replica to fail over to (fine for a demo or a test, not for failover)");
	}

	private static Verdict brokerMinInsyncReplicas(String value, @Nullable String defaultReplicationFactor) {
		int minIsr = (int) parse(value);
		if (minIsr < 2) {
			return new Verdict(Severity.WARNING, value, "set 2 (with replication factor 3)",
					"With min.insync.replicas=1 an acks=all record acknowledged by the leader alone is lost when "
							+ "that leader fails over before a follower copied it");
		}
		if (defaultReplicationFactor != null && minIsr >= parse(defaultReplicationFactor)) {
			return new Verdict(Severity.WARNING, value,
					"set " + (parse(defaultReplicationFactor) - 1) + " or raise " + DEFAULT_REPLICATION_FACTOR,
					"With min.insync.replicas equal to the replication factor (" + defaultReplicationFactor
							+ ") any one broker down blocks acks=all produce (NOT_ENOUGH_REPLICAS) until it "
							+ "returns: there is no failover");
		}
		return new Verdict(Severity.OK, value, KEEP,
				"acks=all records survive the loss of a leader, and one broker may be down without blocking produce");
	}

	private static Verdict topicMinInsyncReplicas(TopicSettings settings) {
		String value = settings.configs().get(MIN_INSYNC_REPLICAS);
		if (value == null || settings.replicationFactor() < 1) {
			return new Verdict(Severity.UNKNOWN, value, "check it",
					(settings.error() != null) ? settings.error() : "Not reported");
		}
		return brokerMinInsyncReplicas(value, Integer.toString(settings.replicationFactor()));
	}

	private static Verdict replicaLagTime(String value) {
		String reason = "A follower that stops fetching without being fenced (stuck disk, long GC) holds acks=all "
				+ "produce until it is dropped from the ISR after this long; a crashed follower is removed sooner, "
				+ "when fenced";
		if (parse(value) > MAX_REPLICA_LAG_TIME_MS) {
			return new Verdict(Severity.INFO, value, "consider " + MAX_REPLICA_LAG_TIME_MS
					+ " if followers keep up reliably (lower values shrink the ISR on short hiccups)", reason);
		}
		return new Verdict(Severity.OK, value, KEEP, reason);
	}

	private static Verdict autoLeaderRebalance(String value) {
		if (Boolean.parseBoolean(value.trim())) {
			return new Verdict(Severity.INFO, value, KEEP,
					"Leaderships move back to preferred replicas every leader.imbalance.check.interval.seconds; "
							+ "each move is a short failover for clients, as fast as a leadership move");
		}
		return new Verdict(Severity.OK, value, KEEP,
				"Leaderships stay where failover put them until an operator moves them");
	}

	private static long parse(String value) {
		try {
			return Long.parseLong(value.trim());
		}
		catch (NumberFormatException ex) {
			return Long.MAX_VALUE;
		}
	}

	/**
	 * Settings of one topic as read: replication factor (smallest over partitions, 0 if
	 * unknown), configuration values, and why they could not be read, if so.
	 */
	record TopicSettings(int replicationFactor, Map<String, String> configs, @Nullable String error) {

	}

	/**
	 * The verdict on one value, before it gets a scope.
	 */
	private record Verdict(Severity severity, @Nullable String value, String recommendation, String reason) {

		ReadinessFinding finding(String setting, String scope) {
			return new ReadinessFinding(this.severity, setting, this.value, scope, this.recommendation, this.reason);
		}

	}

}
