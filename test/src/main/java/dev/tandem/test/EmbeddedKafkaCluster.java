package dev.tandem.test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

import kafka.server.BrokerServer;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.test.JaasUtils;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.metadata.BrokerState;
import org.apache.kafka.metadata.LeaderAndIsr;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.test.EmbeddedKafkaClusters.ClusterSpec;

/**
 * One running embedded Kafka cluster of an {@link EmbeddedKafkaClusters}: a KRaft cluster
 * with one controller and {@code N} in-process brokers with ids {@code 0..N-1}.
 * <p>
 * Besides addresses and client properties it offers the operations failover tests need:
 * creating topics and waiting until they are usable, reading partition leaders and ISRs,
 * gracefully stopping and restarting single brokers, and moving partition leadership to a
 * chosen broker. Every waiting operation gives up after the operation timeout of the owning
 * {@link EmbeddedKafkaClusters.Builder#operationTimeout(Duration) builder} with an
 * {@link EmbeddedKafkaClusterException}. Instances are thread-safe; broker stops and restarts
 * are serialized per cluster.
 *
 * @author Tandem
 * @since 0.1.0
 */
public final class EmbeddedKafkaCluster {

	/**
	 * Broker id returned by {@link #leader(TopicPartition)} when a partition has no leader,
	 * as in Kafka's {@code Node.noNode()}.
	 * @since 0.1.0
	 */
	public static final int NO_LEADER = -1;

	/**
	 * User name of the only (super) user of a cluster declared with
	 * {@link EmbeddedKafkaClusters.Builder#saslPlainCluster(String, int)}.
	 * @since 0.1.0
	 */
	public static final String SASL_USERNAME = JaasUtils.KAFKA_PLAIN_ADMIN;

	/**
	 * Password of {@link #SASL_USERNAME}.
	 * @since 0.1.0
	 */
	public static final String SASL_PASSWORD = JaasUtils.KAFKA_PLAIN_ADMIN_PASSWORD;

	private static final Logger logger = LoggerFactory.getLogger(EmbeddedKafkaCluster.class);

	private static final Duration ADMIN_CLOSE_TIMEOUT = Duration.ofSeconds(10);

	private final String name;

	private final KafkaClusterTestKit testKit;

	private final String bootstrapServers;

	private final Duration operationTimeout;

	private final boolean saslPlain;

	private final Object adminMonitor = new Object();

	private @Nullable Admin admin;

	private boolean adminClosed;

	private final Object brokerMonitor = new Object();

	private final Set<Integer> stoppedBrokers = new TreeSet<>();

	/** Why broker stops and restarts are refused (the cluster is shared), or null. */
	private volatile @Nullable String brokerChangesRefused;

	private EmbeddedKafkaCluster(String name, KafkaClusterTestKit testKit, String bootstrapServers,
			Duration operationTimeout, boolean saslPlain) {
		this.name = name;
		this.saslPlain = saslPlain;
		this.testKit = testKit;
		this.bootstrapServers = bootstrapServers;
		this.operationTimeout = operationTimeout;
	}

	static EmbeddedKafkaCluster start(ClusterSpec spec, Path directory, Duration operationTimeout) {
		long started = System.nanoTime();
		KafkaClusterTestKit testKit = null;
		try {
			// A separate controller: in combined mode the kit's concurrent start-up can hit a
			// fatal Raft error.
			TestKitNodes.Builder nodesBuilder = new TestKitNodes.Builder(productionBootstrapMetadata()).setCombined(false)
				.setNumControllerNodes(1)
				.setNumBrokerNodes(spec.brokers())
				.setBaseDirectory(directory);
			if (spec.saslPlain()) {
				nodesBuilder.setBrokerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT)
					.setControllerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT);
			}
			TestKitNodes nodes = nodesBuilder.build();
			KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes);
			spec.brokerProperties().forEach(builder::setConfigProp);
			testKit = builder.build();
			testKit.format();
			testKit.startup();
			testKit.waitForReadyBrokers();
			EmbeddedKafkaCluster cluster = new EmbeddedKafkaCluster(spec.name(), testKit, testKit.bootstrapServers(),
					operationTimeout, spec.saslPlain());
			logger.info("Started embedded Kafka cluster '{}' ({} brokers, cluster id {}) at {} in {} ms", spec.name(),
					spec.brokers(), nodes.clusterId(), cluster.bootstrapServers,
					Duration.ofNanos(System.nanoTime() - started).toMillis());
			return cluster;
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			if (testKit != null) {
				try {
					testKit.close();
				}
				catch (Exception closeFailure) {
					ex.addSuppressed(closeFailure);
				}
			}
			throw new EmbeddedKafkaClusterException("Failed to start embedded Kafka cluster '" + spec.name() + "'", ex);
		}
	}

	/**
	 * The kit defaults to the latest <em>testing</em> metadata version and feature levels;
	 * tests of client behaviour should run against what a production broker runs.
	 */
	private static BootstrapMetadata productionBootstrapMetadata() {
		MetadataVersion version = MetadataVersion.latestProduction();
		Map<String, Short> featureLevels = new HashMap<>();
		for (Feature feature : Feature.PRODUCTION_FEATURES) {
			featureLevels.put(feature.featureName(), feature.defaultLevel(version));
		}
		return BootstrapMetadata.fromVersions(version, featureLevels, "tandem-test");
	}

	/**
	 * Return the cluster name.
	 * @return the name given to {@link EmbeddedKafkaClusters.Builder#cluster(String, int)}
	 * @since 0.1.0
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Return the brokers' addresses; stable for the cluster's lifetime, including across
	 * broker restarts.
	 * @return {@code localhost:port} entries separated by commas, for
	 * {@code bootstrap.servers}
	 * @since 0.1.0
	 */
	public String bootstrapServers() {
		return this.bootstrapServers;
	}

	/**
	 * Return the ids of all brokers of the cluster, running or stopped.
	 * @return the broker ids in ascending order
	 * @since 0.1.0
	 */
	public List<Integer> brokerIds() {
		return List.copyOf(new TreeSet<>(this.testKit.brokers().keySet()));
	}

	/**
	 * Return the ids of the brokers not stopped with {@link #stopBroker(int)}.
	 * @return the running broker ids in ascending order
	 * @since 0.1.0
	 */
	public List<Integer> runningBrokerIds() {
		synchronized (this.brokerMonitor) {
			return brokerIds().stream().filter((id) -> !this.stoppedBrokers.contains(id)).toList();
		}
	}

	/**
	 * Create a topic with the brokers' default topic configuration and wait until every
	 * partition has a leader, all replicas are in sync and every running broker knows the
	 * topic.
	 * @param topic the topic name
	 * @param partitions the number of partitions, 1 or more
	 * @param replicationFactor the replication factor, at most the number of running brokers
	 * @throws EmbeddedKafkaClusterException if the topic cannot be created (it exists, or the
	 * replication factor is too high) or is not ready within the operation timeout
	 * @since 0.1.0
	 */
	public void createTopic(String topic, int partitions, short replicationFactor) {
		createTopic(topic, partitions, replicationFactor, Map.of());
	}

	/**
	 * Create a topic with the given topic configuration and wait until every partition has a
	 * leader, all replicas are in sync, every running broker knows the topic and each leader's
	 * replica manager leads its partitions. The last condition matters: a broker's metadata
	 * cache learns the topic before its replica manager creates the partitions, and an
	 * idempotent producer whose first batch got {@code NOT_LEADER_OR_FOLLOWER} in that window
	 * can be left retrying that batch with an out-of-order sequence until its delivery timeout
	 * (seen in the mirror's tests: a partition's records stuck for 120 s).
	 * @param topic the topic name
	 * @param partitions the number of partitions, 1 or more
	 * @param replicationFactor the replication factor, at most the number of running brokers
	 * @param configs topic configuration such as {@code min.insync.replicas} or
	 * {@code retention.ms}
	 * @throws EmbeddedKafkaClusterException if the topic cannot be created (it exists, or the
	 * replication factor is too high) or is not ready within the operation timeout
	 * @since 0.1.0
	 */
	public void createTopic(String topic, int partitions, short replicationFactor, Map<String, String> configs) {
		NewTopic newTopic = new NewTopic(topic, partitions, replicationFactor).configs(configs);
		get(admin().createTopics(List.of(newTopic)).all(), () -> "create topic '" + topic + "'");
		Awaits.until(this.operationTimeout,
				() -> "all " + partitions + " partitions of topic '" + topic + "' on cluster '" + this.name
						+ "' have a leader and a full ISR on every running broker",
				() -> {
					List<TopicPartitionInfo> infos = describeTopic(topic).partitions();
					return infos.size() == partitions && infos.stream()
						.allMatch((info) -> leaderId(info) != NO_LEADER && info.isr().size() == info.replicas().size())
							&& runningBrokers().stream()
								.allMatch((broker) -> infos.stream()
									.allMatch((info) -> broker.metadataCache()
										.contains(new TopicPartition(topic, info.partition()))))
							&& infos.stream().allMatch((info) -> leads(leaderId(info), new TopicPartition(topic, info.partition())));
				});
		logger.debug("Created topic '{}' with {} partitions, replication factor {} on cluster '{}'", topic, partitions,
				replicationFactor, this.name);
	}

	/**
	 * Return the current leader of a partition as the cluster reports it.
	 * @param partition the partition
	 * @return the leader's broker id, or {@link #NO_LEADER} if the partition has none
	 * @throws EmbeddedKafkaClusterException if the topic does not exist or the cluster cannot
	 * be queried
	 * @throws IllegalArgumentException if the topic has no such partition
	 * @since 0.1.0
	 */
	public int leader(TopicPartition partition) {
		return leaderId(partitionInfo(partition));
	}

	/**
	 * Return the replicas of a partition in preference order (the first is the preferred
	 * leader).
	 * @param partition the partition
	 * @return the replica broker ids
	 * @throws EmbeddedKafkaClusterException if the topic does not exist or the cluster cannot
	 * be queried
	 * @throws IllegalArgumentException if the topic has no such partition
	 * @since 0.1.0
	 */
	public List<Integer> replicas(TopicPartition partition) {
		return ids(partitionInfo(partition).replicas());
	}

	/**
	 * Return the in-sync replicas of a partition.
	 * @param partition the partition
	 * @return the broker ids in the ISR, in the order the cluster reports them
	 * @throws EmbeddedKafkaClusterException if the topic does not exist or the cluster cannot
	 * be queried
	 * @throws IllegalArgumentException if the topic has no such partition
	 * @since 0.1.0
	 */
	public List<Integer> inSyncReplicas(TopicPartition partition) {
		return ids(partitionInfo(partition).isr());
	}

	/**
	 * Gracefully shut down one broker: a controlled shutdown that moves its leaderships to
	 * other in-sync replicas and removes it from every ISR, then closes its sockets and log
	 * manager. Returns when the other running brokers consider it gone. Does nothing if the
	 * broker is already stopped.
	 * @param brokerId the broker id
	 * @throws IllegalArgumentException if the cluster has no such broker
	 * @throws EmbeddedKafkaClusterException if the broker does not stop within the operation
	 * timeout
	 * @throws IllegalStateException if the cluster is shared by several test classes (see
	 * {@link EmbeddedKafkaClustersExtension})
	 * @since 0.1.0
	 */
	public void stopBroker(int brokerId) {
		checkBrokerChangesAllowed("stop");
		BrokerServer broker = broker(brokerId);
		synchronized (this.brokerMonitor) {
			if (this.stoppedBrokers.contains(brokerId)) {
				logger.debug("Broker {} of cluster '{}' is already stopped", brokerId, this.name);
				return;
			}
			long started = System.nanoTime();
			broker.shutdown();
			broker.awaitShutdown();
			this.stoppedBrokers.add(brokerId);
			Awaits.until(this.operationTimeout,
					() -> "the running brokers of cluster '" + this.name + "' see broker " + brokerId + " as gone",
					() -> runningBrokers().stream().noneMatch((other) -> other.metadataCache().hasAliveBroker(brokerId)));
			logger.info("Stopped broker {} of cluster '{}' in {} ms", brokerId, this.name,
					Duration.ofNanos(System.nanoTime() - started).toMillis());
		}
	}

	/**
	 * Start a broker stopped with {@link #stopBroker(int)} again, on the same port and log
	 * directories; a running broker is stopped first. Returns when the broker is registered
	 * and unfenced and every running broker knows it is alive. It catches up on its
	 * partitions in the background: await {@link #inSyncReplicas(TopicPartition)} if a test
	 * needs it back in the ISR.
	 * <p>
	 * Timing: the controller refuses the new incarnation of a broker
	 * ({@code DUPLICATE_BROKER_REGISTRATION}) until the old one's session has expired, so a
	 * broker restarted right after {@link #stopBroker(int)} takes up to
	 * {@code broker.session.timeout.ms} (about 2 seconds with the default 2000 ms); one that
	 * has been down longer than that is back in about 0.2 seconds.
	 * @param brokerId the broker id
	 * @throws IllegalArgumentException if the cluster has no such broker
	 * @throws EmbeddedKafkaClusterException if the broker fails to start or is not unfenced
	 * within the operation timeout
	 * @throws IllegalStateException if the cluster is shared by several test classes (see
	 * {@link EmbeddedKafkaClustersExtension})
	 * @since 0.1.0
	 */
	public void restartBroker(int brokerId) {
		checkBrokerChangesAllowed("restart");
		BrokerServer broker = broker(brokerId);
		synchronized (this.brokerMonitor) {
			if (!this.stoppedBrokers.contains(brokerId)) {
				stopBroker(brokerId);
			}
			long started = System.nanoTime();
			try {
				// BrokerServer supports startup() after shutdown(): its SharedServer restarts the
				// Raft client and the kit's socket factory binds the same port again.
				broker.startup();
			}
			catch (RuntimeException ex) {
				throw new EmbeddedKafkaClusterException(
						"Failed to restart broker " + brokerId + " of cluster '" + this.name + "'", ex);
			}
			this.stoppedBrokers.remove(brokerId);
			Awaits.until(this.operationTimeout,
					() -> "broker " + brokerId + " of cluster '" + this.name + "' is running and unfenced",
					() -> broker.brokerState() == BrokerState.RUNNING && runningBrokers().stream()
						.allMatch((other) -> other.metadataCache().hasAliveBroker(brokerId)));
			logger.info("Restarted broker {} of cluster '{}' in {} ms", brokerId, this.name,
					Duration.ofNanos(System.nanoTime() - started).toMillis());
		}
	}

	/**
	 * Make the given broker the leader of a partition, the way an operator would: reorder the
	 * partition's replicas with {@code Admin.alterPartitionReassignments} so that broker is
	 * first (the same replica set, so no data moves), then run a preferred leader election.
	 * Returns when every running broker sees the new leader. Does nothing if the broker
	 * already leads the partition.
	 * @param partition the partition
	 * @param newLeaderBrokerId the broker to lead it; must be one of its replicas and
	 * running, and becomes leader as soon as it is in the ISR
	 * @throws IllegalArgumentException if the topic has no such partition or the broker is
	 * not a replica of it
	 * @throws EmbeddedKafkaClusterException if the leadership does not move within the
	 * operation timeout
	 * @since 0.1.0
	 */
	public void moveLeadership(TopicPartition partition, int newLeaderBrokerId) {
		leadershipMoves().move(Map.of(partition, newLeaderBrokerId));
	}

	/**
	 * Move the leadership of every partition of a topic to another in-sync replica: the next
	 * one after the current leader in replica order. Partitions are moved together, with one
	 * reassignment and one election.
	 * @param topic the topic, with a replication factor of 2 or more
	 * @return the new leader of each partition, by partition
	 * @throws IllegalArgumentException if the topic has a replication factor of 1
	 * @throws EmbeddedKafkaClusterException if a partition has no other in-sync replica or
	 * the leaderships do not move within the operation timeout
	 * @since 0.1.0
	 */
	public Map<TopicPartition, Integer> moveLeadership(String topic) {
		return leadershipMoves().moveTopic(topic);
	}

	/**
	 * Refuse broker stops and restarts from now on: the cluster is shared by test classes that
	 * each expect every broker running.
	 * @param reason the exception message, naming the way out
	 */
	void refuseBrokerChanges(String reason) {
		this.brokerChangesRefused = reason;
	}

	private void checkBrokerChangesAllowed(String change) {
		String refused = this.brokerChangesRefused;
		if (refused != null) {
			throw new IllegalStateException("Cannot " + change + " a broker of cluster '" + this.name + "': " + refused);
		}
	}

	private LeadershipMoves leadershipMoves() {
		return new LeadershipMoves(this.name, this.operationTimeout, this::admin, (partition,
				leader) -> runningBrokers().stream().allMatch((broker) -> isLeader(broker, partition, leader)));
	}

	/** Whether the broker's replica manager has the partition online as its leader. */
	private boolean leads(int brokerId, TopicPartition partition) {
		BrokerServer broker = broker(brokerId);
		scala.Option<kafka.cluster.Partition> online = broker.replicaManager().onlinePartition(partition);
		return online.isDefined() && online.get().isLeader();
	}

	private static boolean isLeader(BrokerServer broker, TopicPartition partition, int brokerId) {
		return broker.metadataCache()
			.getLeaderAndIsr(partition.topic(), partition.partition())
			.map(LeaderAndIsr::leader)
			.filter((leader) -> leader == brokerId)
			.isPresent();
	}

	/**
	 * Return this cluster's shared admin client, created on first use and closed with the
	 * cluster. Callers must not close it.
	 * @return the admin client
	 * @throws IllegalStateException if the cluster is closed
	 * @since 0.1.0
	 */
	public Admin admin() {
		synchronized (this.adminMonitor) {
			if (this.adminClosed) {
				throw new IllegalStateException("Embedded Kafka cluster '" + this.name + "' is closed");
			}
			Admin admin = this.admin;
			if (admin == null) {
				Map<String, Object> properties = new HashMap<>();
				properties.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, this.bootstrapServers);
				properties.put(AdminClientConfig.CLIENT_ID_CONFIG, "tandem-test-admin-" + this.name);
				properties.putAll(clientSecurityProperties());
				admin = Admin.create(properties);
				this.admin = admin;
			}
			return admin;
		}
	}

	/**
	 * Return new, mutable producer properties for this cluster: {@code bootstrap.servers}
	 * and {@code String} key and value serializers.
	 * @return a new map the caller may change
	 * @since 0.1.0
	 */
	public Map<String, Object> producerProperties() {
		Map<String, Object> properties = new HashMap<>();
		properties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, this.bootstrapServers);
		properties.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
		properties.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
		properties.putAll(clientSecurityProperties());
		return properties;
	}

	/**
	 * Return new, mutable consumer properties for this cluster: {@code bootstrap.servers},
	 * {@code String} key and value deserializers and {@code auto.offset.reset=earliest}; no
	 * {@code group.id}.
	 * @return a new map the caller may change
	 * @since 0.1.0
	 */
	public Map<String, Object> consumerProperties() {
		Map<String, Object> properties = new HashMap<>();
		properties.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, this.bootstrapServers);
		properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
		properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
		properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		properties.putAll(clientSecurityProperties());
		return properties;
	}

	/**
	 * Return the client properties this cluster's listeners require: for a cluster declared
	 * with {@link EmbeddedKafkaClusters.Builder#saslPlainCluster(String, int)},
	 * {@code security.protocol=SASL_PLAINTEXT}, {@code sasl.mechanism=PLAIN} and a
	 * {@code sasl.jaas.config} for {@link #SASL_USERNAME}; otherwise nothing.
	 * @return a new, mutable map
	 * @since 0.1.0
	 */
	public Map<String, Object> clientSecurityProperties() {
		Map<String, Object> properties = new HashMap<>();
		if (this.saslPlain) {
			properties.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, SecurityProtocol.SASL_PLAINTEXT.name);
			properties.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
			properties.put(SaslConfigs.SASL_JAAS_CONFIG, saslJaasConfig());
		}
		return properties;
	}

	/**
	 * Return the {@code sasl.jaas.config} value that logs in as {@link #SASL_USERNAME}.
	 * @return the JAAS configuration line of {@code PlainLoginModule}
	 * @since 0.1.0
	 */
	public static String saslJaasConfig() {
		return "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + SASL_USERNAME
				+ "\" password=\"" + SASL_PASSWORD + "\";";
	}

	void closeAdmin() {
		Admin admin;
		synchronized (this.adminMonitor) {
			this.adminClosed = true;
			admin = this.admin;
			this.admin = null;
		}
		if (admin != null) {
			admin.close(ADMIN_CLOSE_TIMEOUT);
		}
	}

	void closeTestKit() throws Exception {
		long started = System.nanoTime();
		this.testKit.close();
		logger.debug("Closed embedded Kafka cluster '{}' in {} ms", this.name,
				Duration.ofNanos(System.nanoTime() - started).toMillis());
	}

	private BrokerServer broker(int brokerId) {
		BrokerServer broker = this.testKit.brokers().get(brokerId);
		if (broker == null) {
			throw new IllegalArgumentException(
					"Cluster '" + this.name + "' has no broker " + brokerId + "; brokers are " + brokerIds());
		}
		return broker;
	}

	private List<BrokerServer> runningBrokers() {
		synchronized (this.brokerMonitor) {
			return this.testKit.brokers()
				.entrySet()
				.stream()
				.filter((entry) -> !this.stoppedBrokers.contains(entry.getKey()))
				.map(Map.Entry::getValue)
				.toList();
		}
	}

	private TopicPartitionInfo partitionInfo(TopicPartition partition) {
		return AdminQueries.partitionInfo(admin(), this.operationTimeout, this.name, partition);
	}

	private TopicDescription describeTopic(String topic) {
		return AdminQueries.describeTopic(admin(), this.operationTimeout, this.name, topic);
	}

	private static int leaderId(TopicPartitionInfo info) {
		return AdminQueries.leaderId(info);
	}

	private static List<Integer> ids(List<Node> nodes) {
		return AdminQueries.ids(nodes);
	}

	private <T> T get(KafkaFuture<T> future, Supplier<String> action) {
		return AdminQueries.get(future, this.operationTimeout, this.name, action);
	}

	@Override
	public String toString() {
		return "EmbeddedKafkaCluster '" + this.name + "' at " + this.bootstrapServers;
	}

}
