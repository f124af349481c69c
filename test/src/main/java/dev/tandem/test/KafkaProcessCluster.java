package dev.tandem.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A KRaft Kafka cluster whose controller(s) and brokers each run in a JVM of their own, for
 * tests and benchmarks that need what an in-process cluster cannot give: a broker killed with
 * {@code SIGKILL} (no controlled shutdown, no flush, sockets dropped by the operating
 * system), brokers whose garbage collection and JIT do not pause the client under test, or
 * every broker moved to new ports.
 * <pre class="code">
 * try (KafkaProcessCluster kafka = KafkaProcessCluster.builder().brokers(3).build().start()) {
 * 	kafka.createTopic("orders", 6, (short) 3);
 * 	int leader = kafka.leader(new TopicPartition("orders", 0));
 * 	kafka.kill(leader);                 // kill -9: fenced after broker.session.timeout.ms
 * 	...
 * 	kafka.restart(leader);              // same id, port and log directory
 * }
 * </pre>
 * <p>
 * Each node is started with this JVM's {@code java} executable and class path (override with
 * {@link Builder#classPath(String)}): its log directory is formatted with Kafka's storage
 * tool ({@code kafka.tools.StorageTool}) and Kafka's own {@code kafka.Kafka} main runs a
 * generated {@code server.properties}, so the {@code kafka_2.13} and {@code kafka-server}
 * jars (which {@code tandem-test} depends on) must be on that class path. Controllers have
 * ids {@code 3000, 3001, ...} and form a static quorum ({@code controller.quorum.voters});
 * brokers have ids {@code 0..N-1} and listen on {@code localhost}, each on a port chosen at
 * start and kept across {@link #stop(int)}, {@link #kill(int)} and {@link #restart(int)}.
 * Ports are taken below the operating system's ephemeral range, so client connections of
 * other processes cannot take them while a broker is down. Brokers get the same settings as
 * {@link EmbeddedKafkaClusters} (replicated internal topics, {@code min.insync.replicas} 2,
 * {@code broker.session.timeout.ms=2000}, {@code replica.fetch.backoff.ms=50}, ...) unless
 * {@link Builder#brokerProperty(String, Object) overridden}. A node's output goes to
 * {@code <node>.log} in the cluster's directory (WARN and above, plus start-up and shutdown
 * lines).
 * <p>
 * A usable 1 + 3 cluster took 9 to 47 seconds to start on this project's shared two-core
 * machine at load averages of 10 to 35 (four JVMs start in parallel); a broker restart 6 to 46
 * seconds. {@link #close()} kills every node and deletes the directory; a JVM
 * shutdown hook does the same if the cluster is not closed, and every node halts by itself
 * when this JVM ends abnormally (it watches its standard input, a pipe from this JVM).
 * <p>
 * With {@link Builder#latencyProxies(boolean)} every broker also has a client listener behind a
 * {@link LatencyProxy}: clients that bootstrap from {@link #clientBootstrapServers()} pay a
 * round trip time set with {@link #clientLatency(Duration, Duration)}, while replication and
 * the controller's traffic stay direct, as in a cluster whose clients are in another zone or
 * region than its brokers.
 * <p>
 * Every waiting operation gives up after the {@link Builder#operationTimeout(Duration)
 * operation timeout} with an {@link EmbeddedKafkaClusterException} that quotes the end of
 * the node's log if the node died. Instances are thread-safe; operations that start or stop
 * nodes are serialized.
 *
 * @author Tandem
 * @since 0.1.0
 * @see EmbeddedKafkaClusters
 */
public final class KafkaProcessCluster implements AutoCloseable {

	/**
	 * Broker id returned by {@link #leader(TopicPartition)} when a partition has no leader,
	 * as in Kafka's {@code Node.noNode()}.
	 * @since 0.1.0
	 */
	public static final int NO_LEADER = -1;

	/** Id of the first controller; brokers are numbered from 0. */
	private static final int FIRST_CONTROLLER_ID = 3000;

	private static final int START_ATTEMPTS = 3;

	private static final Duration POLL_INTERVAL = Duration.ofMillis(100);

	private static final Duration ADMIN_CLOSE_TIMEOUT = Duration.ofSeconds(5);

	private static final int LOG_TAIL_LINES = 40;

	private static final List<String> DEFAULT_JVM_OPTIONS = List.of("-Xms64m", "-Xmx512m", "-XX:+UseSerialGC",
			"-XX:TieredStopAtLevel=1", "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true");

	private static final Logger logger = LoggerFactory.getLogger(KafkaProcessCluster.class);

	private final String name;

	private final Map<String, String> properties;

	private final List<String> jvmOptions;

	private final String classPath;

	private final Duration operationTimeout;

	private final boolean latencyProxies;

	private final String clusterId = Uuid.randomUuid().toString();

	private final Map<Integer, KafkaNode> brokers = new TreeMap<>();

	private final List<KafkaNode> controllers = new ArrayList<>();

	private final Object lifecycleMonitor = new Object();

	private final Object adminMonitor = new Object();

	private final Set<Integer> usedPorts = new HashSet<>();

	private volatile State state = State.CREATED;

	private volatile @Nullable Path directory;

	private @Nullable Admin admin;

	private @Nullable Thread shutdownHook;

	private KafkaProcessCluster(Builder builder) {
		this.name = builder.name;
		this.jvmOptions = List.copyOf(builder.jvmOptions);
		this.classPath = builder.classPath;
		this.operationTimeout = builder.operationTimeout;
		this.latencyProxies = builder.latencyProxies;
		Map<String, String> properties = new LinkedHashMap<>();
		BrokerDefaults.of(builder.brokers, null).forEach((key, value) -> properties.put(key, String.valueOf(value)));
		builder.brokerProperties.forEach((key, value) -> properties.put(key, String.valueOf(value)));
		this.properties = properties;
		for (int i = 0; i < builder.controllers; i++) {
			KafkaNode controller = new KafkaNode(FIRST_CONTROLLER_ID + i, true);
			this.controllers.add(controller);
		}
		for (int id = 0; id < builder.brokers; id++) {
			this.brokers.put(id, new KafkaNode(id, false));
		}
	}

	/**
	 * Return a new builder: one controller and three brokers by default.
	 * @return a builder
	 * @since 0.1.0
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Start every node, controllers and brokers in parallel, and wait until every broker is
	 * registered, unfenced and answering requests. If a chosen port turns out to be taken,
	 * the start is retried on other ports (up to three attempts).
	 * @return this instance, for chaining
	 * @throws IllegalStateException if {@code start()} was already called or the cluster is
	 * closed
	 * @throws EmbeddedKafkaClusterException if the cluster does not start within the
	 * operation timeout; every node started is killed and the directory deleted first
	 * @since 0.1.0
	 */
	public KafkaProcessCluster start() {
		synchronized (this.lifecycleMonitor) {
			transition(State.CREATED, State.STARTING);
			long started = System.nanoTime();
			try {
				Path directory = Files.createTempDirectory("tandem-kafka-" + this.name + "-");
				this.directory = directory;
				writeLoggingConfiguration(directory);
				for (int attempt = 1;; attempt++) {
					try {
						startAllNodes(directory);
						break;
					}
					catch (EmbeddedKafkaClusterException ex) {
						boolean portTaken = allNodes().stream().anyMatch((node) -> node.logContains("Address already in use"));
						killAll();
						if (!portTaken || attempt == START_ATTEMPTS) {
							throw ex;
						}
						logger.warn("A port of Kafka cluster '{}' was taken; retrying on other ports", this.name);
						for (KafkaNode node : allNodes()) {
							node.port = 0;
							node.closeProxy();
							Directories.deleteRecursively(node.dataDirectory(directory));
						}
					}
				}
			}
			catch (IOException | RuntimeException ex) {
				killAll();
				allNodes().forEach(KafkaNode::closeProxy);
				deleteDirectoryQuietly();
				this.state = State.CLOSED;
				throw (ex instanceof EmbeddedKafkaClusterException clusterException) ? clusterException
						: new EmbeddedKafkaClusterException("Failed to start Kafka cluster '" + this.name + "'", ex);
			}
			Thread hook = new Thread(this::killAll, "tandem-kafka-" + this.name + "-shutdown");
			Runtime.getRuntime().addShutdownHook(hook);
			this.shutdownHook = hook;
			transition(State.STARTING, State.RUNNING);
			logger.info("Started Kafka cluster '{}' ({} controller(s), {} brokers in separate processes) at {} in {} ms",
					this.name, this.controllers.size(), this.brokers.size(), bootstrapServers(),
					Duration.ofNanos(System.nanoTime() - started).toMillis());
			return this;
		}
	}

	private void startAllNodes(Path directory) {
		for (KafkaNode node : allNodes()) {
			node.port = freePort();
			if (this.latencyProxies && !node.controller) {
				node.openProxy(Duration.ZERO, Duration.ZERO);
			}
		}
		String voters = this.controllers.stream()
			.map((controller) -> controller.id + "@localhost:" + controller.port)
			.collect(Collectors.joining(","));
		for (KafkaNode node : allNodes()) {
			node.voters = voters;
			node.launch(directory);
		}
		awaitBrokers("every broker of cluster '" + this.name + "' is registered, unfenced and answering");
	}

	/**
	 * Return the cluster name, used in log and error messages and in the directory name.
	 * @return the name
	 * @since 0.1.0
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Return the addresses of all brokers, running or not, for {@code bootstrap.servers}.
	 * Stable across {@link #stop(int)}, {@link #kill(int)} and {@link #restart(int)};
	 * changed only by {@link #replaceAllBrokers(List)}.
	 * @return {@code localhost:port} entries in broker id order, separated by commas
	 * @throws IllegalStateException if the cluster is not running
	 * @since 0.1.0
	 */
	public String bootstrapServers() {
		assertStarted();
		return this.brokers.values().stream().map(KafkaNode::address).collect(Collectors.joining(","));
	}

	/**
	 * Return the addresses clients should bootstrap from: with
	 * {@link Builder#latencyProxies(boolean) latency proxies}, each broker's proxy, which every
	 * broker also advertises in the metadata it gives to clients connected through it (so the
	 * clients' whole traffic pays {@link #clientLatency(Duration, Duration) the delay});
	 * without, the same as {@link #bootstrapServers()}. {@link #bootstrapServers()} and
	 * {@link #admin()} always reach the brokers directly, as brokers reach each other.
	 * @return {@code localhost:port} entries in broker id order, separated by commas
	 * @throws IllegalStateException if the cluster is not running
	 * @since 0.1.0
	 */
	public String clientBootstrapServers() {
		assertStarted();
		if (!this.latencyProxies) {
			return bootstrapServers();
		}
		return this.brokers.values()
			.stream()
			.map((node) -> "localhost:" + Objects.requireNonNull(node.proxy).port())
			.collect(Collectors.joining(","));
	}

	/**
	 * Return the latency proxy in front of a broker's client listener, for per-broker delays
	 * and faults ({@link LatencyProxy#stall()}, {@link LatencyProxy#dropConnections()}, ...).
	 * It keeps its port across {@link #stop(int)}, {@link #kill(int)} and
	 * {@link #restart(int)}; while its broker is down it accepts connections and closes them
	 * at once. {@link #replaceAllBrokers(List)} replaces it with a new one on a new port.
	 * @param brokerId the broker id
	 * @return the broker's proxy
	 * @throws IllegalArgumentException if the cluster has no such broker
	 * @throws IllegalStateException if the cluster is not running or was built without
	 * {@link Builder#latencyProxies(boolean) latency proxies}
	 * @since 0.1.0
	 */
	public LatencyProxy latencyProxy(int brokerId) {
		assertStarted();
		KafkaNode broker = broker(brokerId);
		LatencyProxy proxy = broker.proxy;
		if (proxy == null) {
			throw new IllegalStateException("Kafka cluster '" + this.name
					+ "' has no latency proxies; build it with KafkaProcessCluster.builder().latencyProxies(true)");
		}
		return proxy;
	}

	/**
	 * Set the delay of every broker's latency proxy: each direction of every client
	 * connection is delayed by {@code oneWay} plus up to {@code jitter}, so a request and its
	 * response take at least {@code 2 * oneWay} more (a round trip time, RTT, of
	 * {@code 2 * oneWay}); traffic between brokers and to the controller is not delayed. See
	 * {@link LatencyProxy#delay(Duration, Duration)}.
	 * @param oneWay the one-way delay, {@code 0} to {@link LatencyProxy#MAX_DELAY}
	 * @param jitter the jitter bound, {@code 0} to {@link LatencyProxy#MAX_DELAY}
	 * @throws IllegalArgumentException if either is negative or too long
	 * @throws IllegalStateException if the cluster is not running or has no latency proxies
	 * @since 0.1.0
	 */
	public void clientLatency(Duration oneWay, Duration jitter) {
		for (int id : this.brokers.keySet()) {
			latencyProxy(id).delay(oneWay, jitter);
		}
	}

	/**
	 * Return the port a broker listens on, or will listen on when restarted.
	 * @param brokerId the broker id
	 * @return the TCP port on {@code localhost}
	 * @throws IllegalArgumentException if the cluster has no such broker
	 * @throws IllegalStateException if the cluster is not running
	 * @since 0.1.0
	 */
	public int port(int brokerId) {
		assertStarted();
		return broker(brokerId).port;
	}

	/**
	 * Return the directory holding every node's properties, log and data, or {@code null}
	 * before {@link #start()}.
	 */
	@Nullable Path directory() {
		return this.directory;
	}

	/**
	 * Return the ids of all brokers, running or not.
	 * @return the broker ids in ascending order
	 * @since 0.1.0
	 */
	public List<Integer> brokerIds() {
		return List.copyOf(this.brokers.keySet());
	}

	/**
	 * Return the ids of the brokers whose process is alive.
	 * @return the running broker ids in ascending order
	 * @since 0.1.0
	 */
	public List<Integer> runningBrokerIds() {
		return this.brokers.values().stream().filter(KafkaNode::isAlive).map((node) -> node.id).toList();
	}

	/**
	 * Return this cluster's shared admin client, created on first use and closed with the
	 * cluster or when {@link #replaceAllBrokers(List)} moves the brokers. Callers must not
	 * close it.
	 * @return the admin client
	 * @throws IllegalStateException if the cluster is not running
	 * @since 0.1.0
	 */
	public Admin admin() {
		String bootstrapServers = bootstrapServers();
		synchronized (this.adminMonitor) {
			Admin admin = this.admin;
			if (admin == null) {
				Map<String, Object> config = new HashMap<>();
				config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
				config.put(AdminClientConfig.CLIENT_ID_CONFIG, "tandem-process-admin-" + this.name);
				config.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
				admin = Admin.create(config);
				this.admin = admin;
			}
			return admin;
		}
	}

	/**
	 * Create a topic with the brokers' default topic configuration and wait until every
	 * partition has a leader and a full ISR and every running broker hosts its replicas.
	 * @param topic the topic name
	 * @param partitions the number of partitions, 1 or more
	 * @param replicationFactor the replication factor, at most the number of running brokers
	 * @throws EmbeddedKafkaClusterException if the topic cannot be created or is not ready
	 * within the operation timeout
	 * @since 0.1.0
	 */
	public void createTopic(String topic, int partitions, short replicationFactor) {
		createTopic(topic, partitions, replicationFactor, Map.of());
	}

	/**
	 * Create a topic with the given topic configuration and wait until every partition has a
	 * leader and a full ISR and every running broker hosts its replicas.
	 * @param topic the topic name
	 * @param partitions the number of partitions, 1 or more
	 * @param replicationFactor the replication factor, at most the number of running brokers
	 * @param configs topic configuration such as {@code min.insync.replicas}
	 * @throws EmbeddedKafkaClusterException if the topic cannot be created or is not ready
	 * within the operation timeout
	 * @since 0.1.0
	 */
	public void createTopic(String topic, int partitions, short replicationFactor, Map<String, String> configs) {
		NewTopic newTopic = new NewTopic(topic, partitions, replicationFactor).configs(configs);
		get(admin().createTopics(List.of(newTopic)).all(), () -> "create topic '" + topic + "'");
		awaitUntil(() -> "all " + partitions + " partitions of topic '" + topic + "' on cluster '" + this.name
				+ "' have a leader, a full ISR and their replicas on every broker", () -> {
					List<TopicPartitionInfo> infos = describeTopic(topic).partitions();
					if (infos.size() != partitions || !infos.stream()
						.allMatch((info) -> leaderId(info) != NO_LEADER && info.isr().size() == info.replicas().size())) {
						return false;
					}
					return hostsReplicas(topic, infos);
				});
	}

	/**
	 * Whether every running broker has a log for each replica it is assigned, as its own
	 * answer to DescribeLogDirs (sent to each broker) says.
	 */
	private boolean hostsReplicas(String topic, List<TopicPartitionInfo> infos) {
		List<Integer> running = runningBrokerIds();
		Map<Integer, Map<String, LogDirDescription>> logDirs = get(admin().describeLogDirs(running).allDescriptions(), () -> "describe log directories");
		for (TopicPartitionInfo info : infos) {
			TopicPartition partition = new TopicPartition(topic, info.partition());
			for (Node replica : info.replicas()) {
				Map<String, LogDirDescription> dirs = logDirs.get(replica.id());
				if (dirs != null && dirs.values().stream().noneMatch((dir) -> dir.replicaInfos().containsKey(partition))) {
					return false;
				}
			}
		}
		return true;
	}

	/**
	 * Return the current leader of a partition as the cluster reports it.
	 * @param partition the partition
	 * @return the leader's broker id, or {@link #NO_LEADER} if the partition has none
	 * @throws EmbeddedKafkaClusterException if the topic does not exist or the cluster cannot
	 * be queried within the operation timeout
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
	 * be queried within the operation timeout
	 * @throws IllegalArgumentException if the topic has no such partition
	 * @since 0.1.0
	 */
	public List<Integer> replicas(TopicPartition partition) {
		return partitionInfo(partition).replicas().stream().map(Node::id).toList();
	}

	/**
	 * Return the in-sync replicas of a partition.
	 * @param partition the partition
	 * @return the broker ids in the ISR
	 * @throws EmbeddedKafkaClusterException if the topic does not exist or the cluster cannot
	 * be queried within the operation timeout
	 * @throws IllegalArgumentException if the topic has no such partition
	 * @since 0.1.0
	 */
	public List<Integer> inSyncReplicas(TopicPartition partition) {
		return partitionInfo(partition).isr().stream().map(Node::id).toList();
	}

	/**
	 * Kill a broker's process with {@code SIGKILL} ({@code Process.destroyForcibly()}), as
	 * {@code kill -9} does: no controlled shutdown, nothing flushed, its connections reset.
	 * Returns as soon as the process is gone; the controller fences the broker and elects
	 * new leaders for its partitions only after {@code broker.session.timeout.ms} (2000 ms by
	 * default here, 9000 ms in Kafka's default configuration). Does nothing if the broker is
	 * not running.
	 * @param brokerId the broker id
	 * @throws IllegalArgumentException if the cluster has no such broker
	 * @throws IllegalStateException if the cluster is not running
	 * @throws EmbeddedKafkaClusterException if the process does not end within the operation
	 * timeout
	 * @since 0.1.0
	 */
	public void kill(int brokerId) {
		synchronized (this.lifecycleMonitor) {
			assertRunning();
			KafkaNode broker = broker(brokerId);
			if (!broker.isAlive()) {
				return;
			}
			broker.kill(this.operationTimeout);
			logger.info("Killed broker {} of Kafka cluster '{}' (SIGKILL)", brokerId, this.name);
		}
	}

	/**
	 * Stop a broker gracefully: {@code SIGTERM}, on which Kafka runs a controlled shutdown
	 * that moves the broker's leaderships to other in-sync replicas before it exits. Returns
	 * when the process has ended and the cluster no longer lists the broker. Does nothing if
	 * the broker is not running.
	 * @param brokerId the broker id
	 * @throws IllegalArgumentException if the cluster has no such broker
	 * @throws IllegalStateException if the cluster is not running
	 * @throws EmbeddedKafkaClusterException if the broker does not stop within the operation
	 * timeout (it is then killed)
	 * @since 0.1.0
	 */
	public void stop(int brokerId) {
		synchronized (this.lifecycleMonitor) {
			assertRunning();
			KafkaNode broker = broker(brokerId);
			if (!broker.isAlive()) {
				return;
			}
			long started = System.nanoTime();
			broker.stop(this.operationTimeout);
			awaitBrokers("the brokers of cluster '" + this.name + "' no longer list stopped broker " + brokerId);
			logger.info("Stopped broker {} of Kafka cluster '{}' in {} ms", brokerId, this.name,
					Duration.ofNanos(System.nanoTime() - started).toMillis());
		}
	}

	/**
	 * Start a broker again with the same id, port and log directory, after {@link #stop(int)}
	 * or {@link #kill(int)}; a running broker is {@link #stop(int) stopped} first. Returns
	 * when the broker is registered, unfenced and answering requests; it catches up on its
	 * partitions in the background (await {@link #inSyncReplicas(TopicPartition)} if needed).
	 * After a kill, the controller accepts the new incarnation only once the old one's
	 * session has expired, so this takes at least what remains of
	 * {@code broker.session.timeout.ms}, plus log recovery.
	 * @param brokerId the broker id
	 * @throws IllegalArgumentException if the cluster has no such broker
	 * @throws IllegalStateException if the cluster is not running
	 * @throws EmbeddedKafkaClusterException if the broker is not back within the operation
	 * timeout
	 * @since 0.1.0
	 */
	public void restart(int brokerId) {
		synchronized (this.lifecycleMonitor) {
			assertRunning();
			KafkaNode broker = broker(brokerId);
			if (broker.isAlive()) {
				stop(brokerId);
			}
			long started = System.nanoTime();
			broker.launch(Objects.requireNonNull(this.directory));
			awaitBrokers("broker " + brokerId + " of cluster '" + this.name + "' is registered, unfenced and answering");
			logger.info("Restarted broker {} of Kafka cluster '{}' on port {} in {} ms", brokerId, this.name,
					broker.port, Duration.ofNanos(System.nanoTime() - started).toMillis());
		}
	}

	/**
	 * Make the given broker the leader of a partition, the way an operator would: reorder
	 * the partition's replicas with {@code Admin.alterPartitionReassignments} so that broker
	 * is first (the same replica set, so no data moves), then run a preferred leader
	 * election. Returns when the cluster reports the new leader. Does nothing if the broker
	 * already leads the partition.
	 * @param partition the partition
	 * @param newLeaderBrokerId the broker to lead it; one of its in-sync replicas
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
	 * Move the leadership of every partition of a topic to another in-sync replica (the next
	 * one after the current leader in replica order), all partitions together with one
	 * reassignment and one preferred leader election: the leadership move of KIP-951's
	 * benchmark.
	 * @param topic the topic, with a replication factor of 2 or more
	 * @return the new leader of each partition
	 * @throws IllegalArgumentException if a partition of the topic has a single replica
	 * @throws EmbeddedKafkaClusterException if a partition has no other in-sync replica or the
	 * leaderships do not move within the operation timeout
	 * @since 0.1.0
	 */
	public Map<TopicPartition, Integer> moveLeadership(String topic) {
		return leadershipMoves().moveTopic(topic);
	}

	private LeadershipMoves leadershipMoves() {
		return new LeadershipMoves(this.name, this.operationTimeout, this::admin, (partition, leader) -> true);
	}

	/**
	 * Restart every node, one after another, optionally with changed server properties: the
	 * controllers first, then each broker, waiting after each broker until it is back and
	 * every partition of the cluster has a full ISR again (an operator's rolling restart, or
	 * a rolling reconfiguration such as stock versus tuned {@code replica.fetch.backoff.ms}).
	 * Each node is stopped gracefully and keeps its port and log directory.
	 * @param propertyChanges server properties to set on every node from now on (as
	 * {@link Builder#brokerProperty(String, Object)}); empty for a plain rolling restart
	 * @throws IllegalStateException if the cluster is not running
	 * @throws EmbeddedKafkaClusterException if a node does not come back or the ISRs do not
	 * fill within the operation timeout
	 * @since 0.1.0
	 */
	public void rollingRestart(Map<String, ?> propertyChanges) {
		synchronized (this.lifecycleMonitor) {
			assertRunning();
			long started = System.nanoTime();
			propertyChanges.forEach((key, value) -> this.properties.put(key, String.valueOf(value)));
			Path directory = Objects.requireNonNull(this.directory);
			for (KafkaNode controller : this.controllers) {
				controller.stop(this.operationTimeout);
				controller.launch(directory);
				awaitUntil(() -> controller.label() + " of cluster '" + this.name + "' accepts connections", () -> {
					controller.assertAlive(this.name);
					return controller.acceptsConnections();
				});
			}
			for (KafkaNode broker : this.brokers.values()) {
				if (broker.isAlive()) {
					broker.stop(this.operationTimeout);
				}
				broker.launch(directory);
				awaitBrokers("broker " + broker.id + " of cluster '" + this.name + "' is back after a rolling restart");
				awaitFullIsr();
			}
			logger.info("Rolling restart of Kafka cluster '{}' {} in {} ms", this.name,
					propertyChanges.isEmpty() ? "" : "with " + propertyChanges,
					Duration.ofNanos(System.nanoTime() - started).toMillis());
		}
	}

	private void awaitFullIsr() {
		awaitUntil(() -> "every partition of cluster '" + this.name + "' has a full ISR", () -> {
			Set<String> topics = get(admin().listTopics(new ListTopicsOptions().listInternal(true)).names(),
					() -> "list topics");
			Map<String, TopicDescription> descriptions = get(admin().describeTopics(topics).allTopicNames(),
					() -> "describe topics");
			return descriptions.values()
				.stream()
				.flatMap((description) -> description.partitions().stream())
				.allMatch((info) -> info.isr().size() == info.replicas().size());
		});
	}

	/**
	 * Replace every broker by a new process on a new port chosen here; see
	 * {@link #replaceAllBrokers(List)}.
	 * @return the new {@link #bootstrapServers()}
	 * @throws IllegalStateException if the cluster is not running
	 * @throws EmbeddedKafkaClusterException if a broker does not stop or start within the
	 * operation timeout
	 * @since 0.1.0
	 */
	public String replaceAllBrokers() {
		List<Integer> ports = new ArrayList<>();
		synchronized (this.lifecycleMonitor) {
			for (int i = 0; i < this.brokers.size(); i++) {
				ports.add(freePort());
			}
		}
		return replaceAllBrokers(ports);
	}

	/**
	 * Replace every broker by a new process listening on a new port, as when every pod of a
	 * Kafka deployment is rescheduled and comes back under a new address: all brokers are
	 * stopped gracefully, one after another, and then started together, each with its id and
	 * log directory (its persistent volume) on its new port. No broker runs on an old port
	 * afterwards, so a client that knows only the old addresses can reach the cluster again
	 * only through a bootstrap list that contains a new one (KIP-899 rebootstrap). Returns
	 * when every broker is registered, unfenced and answering; the shared {@link #admin()} is
	 * replaced by one for the new addresses.
	 * @param ports the new ports, one per broker in broker id order, for example from
	 * {@link #freePorts(int)}; none may be in use by this cluster
	 * @return the new {@link #bootstrapServers()}
	 * @throws IllegalArgumentException if the number of ports differs from the number of
	 * brokers, or a port is already used by this cluster
	 * @throws IllegalStateException if the cluster is not running
	 * @throws EmbeddedKafkaClusterException if a broker does not stop or start within the
	 * operation timeout
	 * @since 0.1.0
	 */
	public String replaceAllBrokers(List<Integer> ports) {
		synchronized (this.lifecycleMonitor) {
			assertRunning();
			if (ports.size() != this.brokers.size()) {
				throw new IllegalArgumentException("Cluster '" + this.name + "' has " + this.brokers.size()
						+ " brokers but " + ports.size() + " ports were given");
			}
			Set<Integer> current = allNodes().stream().map((node) -> node.port).collect(Collectors.toSet());
			if (ports.stream().anyMatch(current::contains) || new HashSet<>(ports).size() != ports.size()) {
				throw new IllegalArgumentException(
						"Ports " + ports + " must be distinct and unused by cluster '" + this.name + "' " + current);
			}
			long started = System.nanoTime();
			for (KafkaNode broker : this.brokers.values()) {
				if (broker.isAlive()) {
					broker.stop(this.operationTimeout);
				}
			}
			closeAdmin();
			int i = 0;
			for (KafkaNode broker : this.brokers.values()) {
				broker.port = ports.get(i++);
				this.usedPorts.add(broker.port);
				LatencyProxy old = broker.proxy;
				if (old != null) {
					broker.closeProxy();
					broker.openProxy(old.oneWayDelay(), old.jitter());
				}
				broker.launch(Objects.requireNonNull(this.directory));
			}
			awaitBrokers("the replaced brokers of cluster '" + this.name + "' are registered, unfenced and answering");
			logger.info("Replaced every broker of Kafka cluster '{}': now at {} ({} ms)", this.name, bootstrapServers(),
					Duration.ofNanos(System.nanoTime() - started).toMillis());
			return bootstrapServers();
		}
	}

	/**
	 * Return TCP ports on {@code localhost} that nothing listens on now, below the operating
	 * system's ephemeral port range; for {@link #replaceAllBrokers(List)}, or for a client's
	 * bootstrap list that must name brokers before they exist.
	 * @param count how many ports, 1 or more
	 * @return distinct free ports
	 * @throws IllegalArgumentException if {@code count < 1}
	 * @since 0.1.0
	 */
	public static List<Integer> freePorts(int count) {
		if (count < 1) {
			throw new IllegalArgumentException("count must be at least 1 but was " + count);
		}
		Set<Integer> ports = new LinkedHashSet<>();
		while (ports.size() < count) {
			ports.add(freePort(ports));
		}
		return List.copyOf(ports);
	}

	private int freePort() {
		int port = freePort(this.usedPorts);
		this.usedPorts.add(port);
		return port;
	}

	/**
	 * A port in [10000, 32000) that accepts a bind now: below Linux's default ephemeral range
	 * (32768-60999), so outgoing connections never take it while its broker is down.
	 */
	private static int freePort(Set<Integer> excluded) {
		for (int attempt = 0; attempt < 1000; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(10_000, 32_000);
			if (excluded.contains(port)) {
				continue;
			}
			try (ServerSocket socket = new ServerSocket()) {
				socket.setReuseAddress(false);
				socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
				return port;
			}
			catch (IOException ex) {
				// taken, try another
			}
		}
		throw new EmbeddedKafkaClusterException("Found no free port in [10000, 32000) after 1000 attempts");
	}

	/**
	 * Kill every node (brokers first, then controllers), close the admin client and delete
	 * the cluster's directory. Idempotent. Nothing is flushed: the cluster's data is thrown
	 * away anyway.
	 * @since 0.1.0
	 */
	@Override
	public void close() {
		synchronized (this.lifecycleMonitor) {
			if (this.state == State.CLOSED) {
				return;
			}
			this.state = State.CLOSED;
			closeAdmin();
			killAll();
			allNodes().forEach(KafkaNode::closeProxy);
			Thread hook = this.shutdownHook;
			if (hook != null) {
				try {
					Runtime.getRuntime().removeShutdownHook(hook);
				}
				catch (IllegalStateException ex) {
					// the JVM is shutting down
				}
			}
			deleteDirectoryQuietly();
			logger.info("Closed Kafka cluster '{}'", this.name);
		}
	}

	private void closeAdmin() {
		Admin admin;
		synchronized (this.adminMonitor) {
			admin = this.admin;
			this.admin = null;
		}
		if (admin != null) {
			admin.close(ADMIN_CLOSE_TIMEOUT);
		}
	}

	private void killAll() {
		List<KafkaNode> nodes = new ArrayList<>(this.brokers.values());
		nodes.addAll(this.controllers);
		for (KafkaNode node : nodes) {
			node.destroyForcibly();
		}
		for (KafkaNode node : nodes) {
			node.awaitExit(Duration.ofSeconds(30));
		}
	}

	private void deleteDirectoryQuietly() {
		Path directory = this.directory;
		if (directory != null) {
			try {
				Directories.deleteRecursively(directory);
			}
			catch (IOException | UncheckedIOException ex) {
				logger.warn("Could not delete the directory {} of Kafka cluster '{}'", directory, this.name, ex);
			}
		}
	}

	/**
	 * Wait until the cluster's view of its brokers is what the running processes say: each
	 * running broker listed at its port and answering a request sent to it, no other broker
	 * listed. Fails early, with the end of its log, if a broker process dies meanwhile.
	 */
	private void awaitBrokers(String description) {
		Map<Integer, Integer> expected = new TreeMap<>();
		List<KafkaNode> running = this.brokers.values().stream().filter(KafkaNode::isAlive).toList();
		running.forEach((node) -> expected.put(node.id, node.port));
		awaitUntil(() -> description, () -> {
			for (KafkaNode node : running) {
				node.assertAlive(this.name);
			}
			if (expected.isEmpty()) {
				return true;
			}
			// cheap first: an admin client polling closed ports only fills the log with warnings
			if (!running.stream().allMatch(KafkaNode::acceptsConnections)) {
				return false;
			}
			Map<Integer, Integer> listed = new TreeMap<>();
			for (Node node : get(admin().describeCluster().nodes(), () -> "describe the cluster")) {
				listed.put(node.id(), node.port());
			}
			if (!listed.equals(expected)) {
				return false;
			}
			// a request routed to each broker itself: it is serving, not only registered
			List<ConfigResource> resources = expected.keySet()
				.stream()
				.map((id) -> new ConfigResource(ConfigResource.Type.BROKER, Integer.toString(id)))
				.toList();
			get(admin().describeConfigs(resources).all(), () -> "describe the brokers' configs");
			return true;
		});
	}

	private void awaitUntil(Supplier<String> description, Awaits.Condition condition) {
		Awaits.until(this.operationTimeout, description, condition);
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

	private <T> T get(KafkaFuture<T> future, Supplier<String> action) {
		return AdminQueries.get(future, this.operationTimeout, this.name, action);
	}

	private KafkaNode broker(int brokerId) {
		KafkaNode broker = this.brokers.get(brokerId);
		if (broker == null) {
			throw new IllegalArgumentException(
					"Cluster '" + this.name + "' has no broker " + brokerId + "; brokers are " + this.brokers.keySet());
		}
		return broker;
	}

	private List<KafkaNode> allNodes() {
		List<KafkaNode> nodes = new ArrayList<>(this.controllers);
		nodes.addAll(this.brokers.values());
		return nodes;
	}

	private void transition(State from, State to) {
		if (this.state != from) {
			throw new IllegalStateException("Kafka cluster '" + this.name + "' is " + this.state + ", expected " + from);
		}
		this.state = to;
	}

	private void assertRunning() {
		if (this.state != State.RUNNING) {
			throw new IllegalStateException(
					"Kafka cluster '" + this.name + "' is " + this.state + ", not RUNNING; call start() first");
		}
	}

	private void assertStarted() {
		if (this.state != State.RUNNING && this.state != State.STARTING) {
			throw new IllegalStateException(
					"Kafka cluster '" + this.name + "' is " + this.state + ", not RUNNING; call start() first");
		}
	}

	private static void writeLoggingConfiguration(Path directory) throws IOException {
		String pattern = "%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n";
		StringBuilder logback = new StringBuilder("<configuration>\n"
				+ "  <appender name=\"OUT\" class=\"ch.qos.logback.core.ConsoleAppender\">\n"
				+ "    <encoder><pattern>" + pattern + "</pattern></encoder>\n  </appender>\n");
		StringBuilder log4j = new StringBuilder("status = warn\nappender.out.type = Console\nappender.out.name = OUT\n"
				+ "appender.out.layout.type = PatternLayout\nappender.out.layout.pattern = "
				+ pattern.replace("%-5level", "%-5p").replace("%thread", "%t").replace("%logger{36}", "%c") + "\n"
				+ "rootLogger.level = WARN\nrootLogger.appenderRef.out.ref = OUT\n");
		int i = 0;
		for (String category : List.of("kafka.server.KafkaRaftServer", "kafka.server.BrokerServer",
				"kafka.server.ControllerServer", "kafka.server.BrokerLifecycleManager")) {
			logback.append("  <logger name=\"").append(category).append("\" level=\"INFO\"/>\n");
			log4j.append("logger.l").append(i).append(".name = ").append(category).append('\n');
			log4j.append("logger.l").append(i).append(".level = INFO\n");
			i++;
		}
		logback.append("  <root level=\"WARN\"><appender-ref ref=\"OUT\"/></root>\n</configuration>\n");
		Files.writeString(directory.resolve("logback.xml"), logback);
		Files.writeString(directory.resolve("log4j2.properties"), log4j);
	}

	@Override
	public String toString() {
		synchronized (this.lifecycleMonitor) {
			String addresses = (this.state == State.RUNNING) ? " at " + bootstrapServers() : "";
			return "KafkaProcessCluster '" + this.name + "' " + this.state + addresses;
		}
	}

	/**
	 * One controller or broker: its id, port, files and current process.
	 */
	private final class KafkaNode {

		private final int id;

		private final boolean controller;

		private volatile int port;

		/** Port of the client listener behind {@link #proxy}; 0 without latency proxies. */
		private volatile int clientPort;

		private volatile @Nullable LatencyProxy proxy;

		private String voters = "";

		private volatile @Nullable Process process;

		private volatile @Nullable Path logFile;

		KafkaNode(int id, boolean controller) {
			this.id = id;
			this.controller = controller;
		}

		String address() {
			return "localhost:" + this.port;
		}

		String label() {
			return (this.controller ? "controller-" : "broker-") + this.id;
		}

		/**
		 * Choose a port for the client listener and start a proxy in front of it, on a port of
		 * its own.
		 */
		void openProxy(Duration oneWay, Duration jitter) {
			this.clientPort = freePort();
			int proxyPort = freePort();
			try {
				LatencyProxy proxy = LatencyProxy.start(new InetSocketAddress("localhost", this.clientPort), proxyPort);
				proxy.delay(oneWay, jitter);
				this.proxy = proxy;
			}
			catch (IOException ex) {
				throw new EmbeddedKafkaClusterException("Failed to start the latency proxy of " + label()
						+ " of Kafka cluster '" + KafkaProcessCluster.this.name + "' on port " + proxyPort, ex);
			}
		}

		void closeProxy() {
			LatencyProxy proxy = this.proxy;
			if (proxy != null) {
				proxy.close();
				this.proxy = null;
				this.clientPort = 0;
			}
		}

		Path dataDirectory(Path directory) {
			return directory.resolve(label());
		}

		boolean acceptsConnections() {
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress("localhost", this.port), 1000);
				return true;
			}
			catch (IOException ex) {
				return false;
			}
		}

		boolean isAlive() {
			Process process = this.process;
			return process != null && process.isAlive();
		}

		void launch(Path directory) {
			Path propertiesFile = directory.resolve(label() + ".properties");
			Path logFile = directory.resolve(label() + ".log");
			this.logFile = logFile;
			try {
				writeProperties(directory, propertiesFile);
				List<String> command = new ArrayList<>();
				command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
				command.addAll(KafkaProcessCluster.this.jvmOptions);
				command.add("-Dlogback.configurationFile=" + directory.resolve("logback.xml"));
				command.add("-Dlog4j2.configurationFile=" + directory.resolve("log4j2.properties"));
				command.add("-cp");
				command.add(KafkaProcessCluster.this.classPath);
				command.add(KafkaProcessMain.class.getName());
				command.add(KafkaProcessCluster.this.clusterId);
				command.add(propertiesFile.toString());
				this.process = new ProcessBuilder(command).redirectErrorStream(true)
					.redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
					.start();
			}
			catch (IOException ex) {
				throw new EmbeddedKafkaClusterException(
						"Failed to start " + label() + " of Kafka cluster '" + KafkaProcessCluster.this.name + "'", ex);
			}
		}

		private void writeProperties(Path directory, Path file) throws IOException {
			Properties server = new Properties();
			server.putAll(KafkaProcessCluster.this.properties);
			server.put("node.id", Integer.toString(this.id));
			server.put("controller.quorum.voters", this.voters);
			server.put("controller.listener.names", "CONTROLLER");
			server.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT");
			server.put("log.dirs", dataDirectory(directory).toString());
			LatencyProxy proxy = this.proxy;
			if (this.controller) {
				server.put("process.roles", "controller");
				server.put("listeners", "CONTROLLER://" + address());
			}
			else {
				server.put("process.roles", "broker");
				if (proxy != null) {
					// clients reach CLIENT through the proxy and get the proxy's address in metadata
					server.put("listener.security.protocol.map",
							"CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,CLIENT:PLAINTEXT");
					server.put("listeners", "PLAINTEXT://" + address() + ",CLIENT://localhost:" + this.clientPort);
					server.put("advertised.listeners",
							"PLAINTEXT://" + address() + ",CLIENT://localhost:" + proxy.port());
				}
				else {
					server.put("listeners", "PLAINTEXT://" + address());
					server.put("advertised.listeners", "PLAINTEXT://" + address());
				}
				server.put("inter.broker.listener.name", "PLAINTEXT");
			}
			try (Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
				server.store(writer, "Kafka cluster '" + KafkaProcessCluster.this.name + "', " + label());
			}
		}

		void kill(Duration timeout) {
			destroyForcibly();
			if (!awaitExit(timeout)) {
				throw new EmbeddedKafkaClusterException("Killed " + label() + " of Kafka cluster '"
						+ KafkaProcessCluster.this.name + "' but its process did not end within " + timeout.toMillis()
						+ " ms");
			}
		}

		void stop(Duration timeout) {
			Process process = this.process;
			if (process == null) {
				return;
			}
			process.destroy();
			if (!awaitExit(timeout)) {
				destroyForcibly();
				awaitExit(timeout);
				throw new EmbeddedKafkaClusterException(label() + " of Kafka cluster '" + KafkaProcessCluster.this.name
						+ "' did not stop within " + timeout.toMillis() + " ms of SIGTERM; killed it" + logTail());
			}
		}

		void destroyForcibly() {
			Process process = this.process;
			if (process != null) {
				process.destroyForcibly();
			}
		}

		boolean awaitExit(Duration timeout) {
			Process process = this.process;
			if (process == null) {
				return true;
			}
			try {
				return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
		}

		void assertAlive(String cluster) {
			Process process = this.process;
			if (process != null && !process.isAlive()) {
				throw new EmbeddedKafkaClusterException(label() + " of Kafka cluster '" + cluster
						+ "' exited with code " + process.exitValue() + logTail());
			}
		}

		boolean logContains(String text) {
			Path logFile = this.logFile;
			try {
				return logFile != null && Files.exists(logFile) && Files.readString(logFile).contains(text);
			}
			catch (IOException | UncheckedIOException ex) {
				return false;
			}
		}

		private String logTail() {
			Path logFile = this.logFile;
			if (logFile == null || !Files.exists(logFile)) {
				return "";
			}
			try {
				List<String> lines = Files.readAllLines(logFile, StandardCharsets.UTF_8);
				return "; end of " + logFile + ":\n"
						+ String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
			}
			catch (IOException | UncheckedIOException ex) {
				return "; see " + logFile;
			}
		}

	}

	/**
	 * Lifecycle of a {@link KafkaProcessCluster}.
	 */
	private enum State {

		CREATED, STARTING, RUNNING, CLOSED

	}

	/**
	 * Builder for {@link KafkaProcessCluster}. Not thread-safe; each {@link #build()} returns
	 * a new, unstarted cluster.
	 *
	 * @since 0.1.0
	 */
	public static final class Builder {

		private String name = "kafka";

		private int brokers = 3;

		private int controllers = 1;

		private final Map<String, Object> brokerProperties = new LinkedHashMap<>();

		private List<String> jvmOptions = DEFAULT_JVM_OPTIONS;

		private String classPath = System.getProperty("java.class.path");

		private Duration operationTimeout = Duration.ofSeconds(90);

		private boolean latencyProxies;

		private Builder() {
		}

		/**
		 * Set whether each broker gets a second listener for clients, {@code CLIENT}, behind a
		 * {@link LatencyProxy} in this JVM: clients that bootstrap from
		 * {@link KafkaProcessCluster#clientBootstrapServers()} reach every broker through its
		 * proxy (brokers advertise the proxies' addresses on that listener) and pay the delay
		 * set with {@link KafkaProcessCluster#clientLatency(Duration, Duration)}, while brokers
		 * replicate and talk to the controller directly on {@code PLAINTEXT}, as do
		 * {@link KafkaProcessCluster#admin()} and {@link KafkaProcessCluster#bootstrapServers()}.
		 * The proxies start with no delay. The proxies run in this JVM, so its garbage
		 * collection pauses delay client traffic too. {@link EmbeddedKafkaClusters} has no
		 * equivalent: Kafka's test kit binds and advertises its listeners itself.
		 * @param latencyProxies {@code true} for proxies; default {@code false}
		 * @return this builder
		 * @since 0.1.0
		 */
		public Builder latencyProxies(boolean latencyProxies) {
			this.latencyProxies = latencyProxies;
			return this;
		}

		/**
		 * Set the cluster name used in messages, log lines and the directory name.
		 * @param name letters, digits, {@code .}, {@code _} or {@code -}; default
		 * {@code kafka}
		 * @return this builder
		 * @throws IllegalArgumentException if the name is invalid
		 * @since 0.1.0
		 */
		public Builder name(String name) {
			if (!name.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
				throw new IllegalArgumentException("Invalid cluster name '" + name + "'");
			}
			this.name = name;
			return this;
		}

		/**
		 * Set the number of brokers; ids are {@code 0..brokers-1}.
		 * @param brokers 1 or more; default 3
		 * @return this builder
		 * @throws IllegalArgumentException if {@code brokers < 1}
		 * @since 0.1.0
		 */
		public Builder brokers(int brokers) {
			if (brokers < 1) {
				throw new IllegalArgumentException("A cluster needs at least 1 broker but " + brokers + " were requested");
			}
			this.brokers = brokers;
			return this;
		}

		/**
		 * Set the number of controllers (a static KRaft quorum); ids are {@code 3000, ...}.
		 * @param controllers 1 or more; default 1
		 * @return this builder
		 * @throws IllegalArgumentException if {@code controllers < 1}
		 * @since 0.1.0
		 */
		public Builder controllers(int controllers) {
			if (controllers < 1) {
				throw new IllegalArgumentException(
						"A cluster needs at least 1 controller but " + controllers + " were requested");
			}
			this.controllers = controllers;
			return this;
		}

		/**
		 * Set a Kafka server property on every node, controllers and brokers, overriding the
		 * default (see the class description); for example {@code replica.fetch.backoff.ms}
		 * (a broker setting) or {@code broker.session.timeout.ms} (read by the controller).
		 * Listener, role, id, quorum and log directory settings are set per node and cannot
		 * be overridden.
		 * @param key the property name
		 * @param value the value; its {@code toString()} is written
		 * @return this builder
		 * @since 0.1.0
		 */
		public Builder brokerProperty(String key, Object value) {
			this.brokerProperties.put(Objects.requireNonNull(key, "key must not be null"),
					Objects.requireNonNull(value, "value must not be null"));
			return this;
		}

		/**
		 * Set several Kafka server properties on every node; see
		 * {@link #brokerProperty(String, Object)}.
		 * @param properties the properties
		 * @return this builder
		 * @since 0.1.0
		 */
		public Builder brokerProperties(Map<String, ?> properties) {
			properties.forEach(this::brokerProperty);
			return this;
		}

		/**
		 * Replace the JVM options of every node. The default,
		 * {@code -Xms64m -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError},
		 * favours start-up time and low CPU use over peak throughput (tests on shared
		 * machines); a benchmark should pass production-like options such as
		 * {@code -Xms512m -Xmx512m -XX:+UseG1GC}.
		 * @param options the options, such as {@code -Xmx1g}
		 * @return this builder
		 * @since 0.1.0
		 */
		public Builder jvmOptions(List<String> options) {
			this.jvmOptions = List.copyOf(options);
			return this;
		}

		/**
		 * Set the class path of the nodes' JVMs; default this JVM's {@code java.class.path}.
		 * It must hold {@code tandem-test} and Kafka's server jars.
		 * @param classPath entries separated by the platform's path separator
		 * @return this builder
		 * @since 0.1.0
		 */
		public Builder classPath(String classPath) {
			this.classPath = Objects.requireNonNull(classPath, "classPath must not be null");
			return this;
		}

		/**
		 * Set how long start-up, restarts, stops and admin calls may take before failing.
		 * @param operationTimeout positive; default 90 seconds (JVM start-up is slow on a
		 * busy machine)
		 * @return this builder
		 * @throws IllegalArgumentException if the timeout is zero or negative
		 * @since 0.1.0
		 */
		public Builder operationTimeout(Duration operationTimeout) {
			if (operationTimeout.isZero() || operationTimeout.isNegative()) {
				throw new IllegalArgumentException("operationTimeout must be positive but was " + operationTimeout);
			}
			this.operationTimeout = operationTimeout;
			return this;
		}

		/**
		 * Build an unstarted cluster; call {@link KafkaProcessCluster#start()} next.
		 * @return the cluster
		 * @since 0.1.0
		 */
		public KafkaProcessCluster build() {
			return new KafkaProcessCluster(this);
		}

	}

}
