package dev.tandem.bench.coordinator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import dev.tandem.bench.BenchOptions;
import dev.tandem.coordinator.client.CoordinatorGroup;
import dev.tandem.coordinator.client.RatisDecisionLog;
import dev.tandem.coordinator.client.RatisDecisionLogBuilder;
import dev.tandem.coordinator.security.AccessPolicy;
import dev.tandem.coordinator.security.CoordinatorTls;
import dev.tandem.coordinator.server.CoordinatorServer;
import dev.tandem.coordinator.state.CoordinatorQuotas;
import dev.tandem.test.TestCertificates;
import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionLogException;
import dev.tandem.transaction.TransactionIds;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Coordinator benchmark: peers run in this JVM on loopback gRPC, clients are
 * {@link RatisDecisionLog}s shared by {@code --callers} threads that call back to back (closed
 * loop), as the threads of one app instance would.
 * <ul>
 * <li>writes: decisions/s and decide latency p50/p99 for 1 and 3 peers, with group commit
 * (the default client: up to 256 decisions per Raft entry, 1 entry in flight) and without
 * (1 decision per entry, as many entries in flight as callers), in the same run;</li>
 * <li>reads (3 peers): linearizable {@code state} reads/s and latency, served by the leader vs
 * spread over the followers ({@code readFromFollowers}).</li>
 * <li>each group once in plain text and once with mutual TLS and authorization (an app
 * identity whose grant is checked for every decision; test certificates made at start-up),
 * in the same run ({@code --transport plain,tls}).</li>
 * </ul>
 * Run from the repository root (one command: build the reactor, write the bench's class path,
 * run; the modules come from this working tree, not from the local Maven repository):
 * <pre>
 * mvn -B -q -Pbench -pl bench -am -DskipTests package dependency:build-classpath -Dmdep.outputFile=target/classpath.txt &amp;&amp; java -Xmx3g -cp bench/target/classes:$(cat bench/target/classpath.txt) dev.tandem.bench.coordinator.CoordinatorBench
 * </pre>
 * (3 GB of heap: three peers in one JVM keep every decision of the run, about 200,000 per
 * peer, and Ratis' log cache.)
 * <p>
 * Besides ops/s the table gives ops per CPU-second of this JVM and the machine's load average,
 * since other processes on a shared machine change ops/s far more than they change CPU cost.
 * <p>
 * Options: {@code --callers 64,256} (rows for each count of concurrent callers: a caller is one
 * transaction deciding at a time, so 256 stands for, say, 8 app instances of 32 slots),
 * {@code --warmup 10s} (per row; shorter leaves the JIT compiling during the measurement: C2
 * used 0.4 of a core 30 s into a run), {@code --duration 10s},
 * {@code --peers 1,3} (group sizes), {@code --reads true} (read scenarios on groups of more than
 * one), {@code --group-commit-only true} (skip the rows without group commit), {@code --raft key=value,key=value} (Ratis server
 * properties over the peers' defaults, to try a setting), {@code --in-flight N} (entries in flight with group commit; default the client's 1),
 * {@code --transport plain,tls} (rows in plain text, over mutual TLS, or both),
 * {@code --report <file>} (default {@code bench/target/coordinator-bench.txt}). On 2 shared
 * cores the numbers are noisy: compare rows of the same run.
 */
public final class CoordinatorBench {

	private static final Logger logger = LoggerFactory.getLogger(CoordinatorBench.class);

	private static final Duration CALL_TIMEOUT = Duration.ofSeconds(10);

	private final List<Integer> callerCounts;

	private final Duration warmup;

	private final Duration duration;

	private final List<Integer> groupSizes;

	private final boolean readsToo;

	private final int inFlight;

	private final boolean groupCommitOnly;

	private final Map<String, String> raft = new LinkedHashMap<>();

	private final List<Row> rows = new ArrayList<>();

	private List<String> transports = List.of("plain", "tls");

	private CoordinatorBench(List<Integer> callerCounts, Duration warmup, Duration duration, List<Integer> groupSizes,
			boolean readsToo, int inFlight, boolean groupCommitOnly) {
		this.inFlight = inFlight;
		this.groupCommitOnly = groupCommitOnly;
		this.callerCounts = callerCounts;
		this.warmup = warmup;
		this.duration = duration;
		this.groupSizes = groupSizes;
		this.readsToo = readsToo;
	}

	/**
	 * Runs every scenario and prints the table.
	 * @param args options, see the class documentation
	 * @throws Exception if a scenario fails
	 */
	public static void main(String[] args) throws Exception {
		// As the coordinator-server app does: peers in this JVM must not start a thread per append
		if (!CoordinatorServer.useCommonPoolForAsyncTasks()) {
			throw new IllegalStateException("CompletableFuture was initialized before main");
		}
		Map<String, String> options = BenchOptions.parse(args);
		CoordinatorBench bench = new CoordinatorBench(integers(options.getOrDefault("callers", "64,256")),
				BenchOptions.duration(options.getOrDefault("warmup", "10s")), BenchOptions.duration(options.getOrDefault("duration", "10s")),
				integers(options.getOrDefault("peers", "1,3")),
				Boolean.parseBoolean(options.getOrDefault("reads", "true")),
				Integer.parseInt(options.getOrDefault("in-flight", "0")),
				Boolean.parseBoolean(options.getOrDefault("group-commit-only", "false")));
		bench.transports = Arrays.stream(options.getOrDefault("transport", "plain,tls").split(","))
			.map(String::trim)
			.toList();
		for (String setting : options.getOrDefault("raft", "").split(",")) {
			if (setting.contains("=")) {
				bench.raft.put(setting.substring(0, setting.indexOf('=')).trim(),
						setting.substring(setting.indexOf('=') + 1).trim());
			}
		}
		Path report = Path.of(options.getOrDefault("report", "bench/target/coordinator-bench.txt"));
		Path dataDir = Files.createTempDirectory("tandem-coordinator-bench");
		try {
			bench.run(dataDir);
		}
		finally {
			BenchOptions.deleteRecursively(dataDir);
		}
		String table = bench.table();
		System.out.println(table);
		Files.createDirectories(report.toAbsolutePath().getParent());
		Files.writeString(report, table, StandardCharsets.UTF_8);
		System.out.println("Report written to " + report.toAbsolutePath());
		System.exit(0);
	}

	private static List<Integer> integers(String list) {
		return Arrays.stream(list.split(",")).map(String::trim).map(Integer::valueOf).toList();
	}

	private void run(Path dataDir) throws Exception {
		for (int peers : this.groupSizes) {
			for (String transport : this.transports) {
				boolean tls = switch (transport) {
					case "plain" -> false;
					case "tls" -> true;
					default -> throw new IllegalArgumentException("--transport takes plain and/or tls: " + transport);
				};
				try (Cluster cluster = Cluster.start(dataDir.resolve(peers + "-peers-" + transport), peers, this.raft,
						tls)) {
					run(cluster, peers);
				}
			}
		}
	}

	private void run(Cluster cluster, int peers) throws InterruptedException {
		for (int callers : this.callerCounts) {
			writes(cluster, callers, "group commit",
					(builder) -> (this.inFlight > 0) ? builder.maxInFlightBatches(this.inFlight) : builder);
			if (!this.groupCommitOnly) {
				writes(cluster, callers, "no group commit",
						(builder) -> builder.maxBatchSize(1).maxInFlightBatches(callers));
			}
		}
		if (peers > 1 && this.readsToo) {
			int callers = this.callerCounts.get(0);
			reads(cluster, callers, "leader", (builder) -> builder);
			reads(cluster, callers, "followers", (builder) -> builder.readFromFollowers(true));
		}
	}

	private void writes(Cluster cluster, int callers, String mode, Function<RatisDecisionLogBuilder, RatisDecisionLogBuilder> settings)
			throws InterruptedException {
		String prefix = "w" + this.rows.size();
		try (RatisDecisionLog client = settings.apply(cluster.clientBuilder()).build()) {
			AtomicLong sequence = new AtomicLong();
			long commandsBefore = client.commandsSent();
			long operationsBefore = client.operationsSent();
			Measurement measurement = measure(callers, (caller) -> {
				long n = sequence.incrementAndGet();
				client.decide(decision(TransactionIds.newId(prefix + ".i" + caller), prefix + ".i" + caller, n), CALL_TIMEOUT);
			});
			double perEntry = (double) (client.operationsSent() - operationsBefore)
					/ Math.max(1, client.commandsSent() - commandsBefore);
			this.rows.add(new Row(cluster.label(), callers, "decide", mode,
					measurement, String.format("%.1f decisions/entry", perEntry)));
		}
	}

	private void reads(Cluster cluster, int callers, String target, Function<RatisDecisionLogBuilder, RatisDecisionLogBuilder> settings)
			throws InterruptedException {
		int known = 1000;
		try (RatisDecisionLog writer = cluster.clientBuilder().build();
				RatisDecisionLog reader = settings.apply(cluster.clientBuilder()).build()) {
			for (int i = 0; i < known; i++) {
				writer.decide(decision(readerId(i), "reader.i0", i), CALL_TIMEOUT);
			}
			Measurement measurement = measure(callers, (caller) -> reader
				.state(readerId(ThreadLocalRandom.current().nextInt(known)), CALL_TIMEOUT));
			String served = reader.followerReads() + " by followers, " + reader.followerReadFallbacks() + " fell back";
			this.rows.add(new Row(cluster.label(), callers, "read state", target, measurement,
					(reader.followerReads() > 0) ? served : "leader (lease/heartbeat confirmed)"));
		}
	}

	/**
	 * Closed loop: every caller thread calls back to back; latencies are kept for calls that
	 * start after the warm-up and before the end.
	 */
	private Measurement measure(int callers, Call call) throws InterruptedException {
		long start = System.nanoTime();
		long measureFrom = start + this.warmup.toNanos();
		long measureTo = measureFrom + this.duration.toNanos();
		long[][] latencies = new long[callers][];
		int[] counts = new int[callers];
		AtomicLong failures = new AtomicLong();
		CountDownLatch done = new CountDownLatch(callers);
		for (int i = 0; i < callers; i++) {
			int caller = i;
			Thread thread = new Thread(() -> {
				long[] own = new long[1 << 12];
				int count = 0;
				try {
					while (true) {
						long before = System.nanoTime();
						if (before >= measureTo) {
							break;
						}
						try {
							call.run(caller);
						}
						catch (DecisionLogException ex) {
							failures.incrementAndGet();
							continue;
						}
						if (before >= measureFrom) {
							if (count == own.length) {
								own = Arrays.copyOf(own, count * 2);
							}
							own[count++] = System.nanoTime() - before;
						}
					}
				}
				finally {
					latencies[caller] = own;
					counts[caller] = count;
					done.countDown();
				}
			}, "bench-caller-" + i);
			thread.setDaemon(true);
			thread.start();
		}
		// Process CPU over the measured window: a figure less sensitive to other processes' load
		TimeUnit.NANOSECONDS.sleep(Math.max(0, measureFrom - System.nanoTime()));
		long cpuFrom = processCpuNanos();
		double loadFrom = os().getSystemLoadAverage();
		TimeUnit.NANOSECONDS.sleep(Math.max(0, measureTo - System.nanoTime()));
		long cpuTo = processCpuNanos();
		done.await();
		int total = Arrays.stream(counts).sum();
		long[] all = new long[total];
		int offset = 0;
		for (int i = 0; i < callers; i++) {
			System.arraycopy(latencies[i], 0, all, offset, counts[i]);
			offset += counts[i];
		}
		Arrays.sort(all);
		return new Measurement(total, this.duration, percentile(all, 0.50), percentile(all, 0.99), failures.get(),
				cpuTo - cpuFrom, Math.max(loadFrom, os().getSystemLoadAverage()));
	}

	private String table() {
		StringBuilder out = new StringBuilder();
		out.append(String.format("Tandem coordinator benchmark, %s, warm-up %d s, measured %d s per row, %d cores%s%n",
				Instant.now(), this.warmup.toSeconds(), this.duration.toSeconds(),
				Runtime.getRuntime().availableProcessors(), this.raft.isEmpty() ? "" : ", Ratis " + this.raft));
		out.append(String.format("%-12s %7s %-11s %-16s %9s %8s %8s %6s %11s %5s  %s%n", "group", "callers", "operation",
				"mode", "ops/s", "p50 ms", "p99 ms", "failed", "ops/CPU-s", "load", "notes"));
		for (Row row : this.rows) {
			Measurement m = row.measurement();
			out.append(String.format("%-12s %7d %-11s %-16s %9.0f %8.2f %8.2f %6d %11.0f %5.1f  %s%n", row.group(),
					row.callers(), row.operation(), row.mode(), m.perSecond(), m.p50Nanos() / 1e6, m.p99Nanos() / 1e6, m.failures(),
					m.perCpuSecond(), m.loadAverage(), row.notes()));
		}
		out.append("ops/CPU-s: operations per second of this JVM's CPU time (all peers and clients); load: the "
				+ "machine's 1-minute load average during the row; tls: mutual TLS on every connection and each "
				+ "command authorized by the client certificate's identity.\n");
		return out.toString();
	}

	private static long percentile(long[] sorted, double quantile) {
		if (sorted.length == 0) {
			return 0;
		}
		return sorted[Math.min(sorted.length - 1, (int) Math.ceil(quantile * sorted.length) - 1)];
	}

	/** The i-th transaction id of the reader's owner ({@code <owner>-<uuid>}, as the coordinator requires). */
	private static String readerId(long i) {
		return "reader.i0-" + new java.util.UUID(0, i);
	}

	private static Decision decision(String transactionId, String owner, long n) {
		return new Decision(transactionId, owner, System.currentTimeMillis(),
				List.of(new Decision.ParticipantRecord("east", owner + ".east.0", 1000 + n, (short) 1, "tandem-markers",
						(int) (n % 12), n),
						new Decision.ParticipantRecord("west", owner + ".west.0", 2000 + n, (short) 1, "tandem-markers",
								(int) (n % 12), n)));
	}

	@FunctionalInterface
	private interface Call {

		void run(int caller);

	}

	private record Measurement(long calls, Duration duration, long p50Nanos, long p99Nanos, long failures,
			long cpuNanos, double loadAverage) {

		double perSecond() {
			return this.calls / (this.duration.toNanos() / 1e9);
		}

		double perCpuSecond() {
			return (this.cpuNanos > 0) ? this.calls / (this.cpuNanos / 1e9) : 0;
		}

	}

	private static java.lang.management.OperatingSystemMXBean os() {
		return ManagementFactory.getOperatingSystemMXBean();
	}

	private static long processCpuNanos() {
		return (os() instanceof com.sun.management.OperatingSystemMXBean sun) ? sun.getProcessCpuTime() : -1;
	}

	private record Row(String group, int callers, String operation, String mode, Measurement measurement, String notes) {

	}

	/**
	 * Peers on loopback ports, each with its own data directory, as the coordinator server
	 * configures them (pre-vote, LINEARIZABLE reads, 150-300 ms election timeout).
	 */
	private static final class Cluster implements AutoCloseable {

		private final CoordinatorGroup group;

		private final List<CoordinatorServer> servers;

		private final @Nullable CoordinatorTls clientTls;

		private Cluster(CoordinatorGroup group, List<CoordinatorServer> servers, @Nullable CoordinatorTls clientTls) {
			this.group = group;
			this.servers = servers;
			this.clientTls = clientTls;
		}

		static Cluster start(Path dataDir, int size, Map<String, String> raft, boolean tls)
				throws IOException, InterruptedException {
			CoordinatorTls peerTls = null;
			CoordinatorTls clientTls = null;
			AccessPolicy policy = AccessPolicy.open();
			if (tls) {
				TestCertificates authority = TestCertificates.create(dataDir.resolve("certs"), "bench-ca");
				TestCertificates.Identity peer = authority.issue("coordinator");
				TestCertificates.Identity app = authority.issue("bench-app");
				peerTls = CoordinatorTls.of(peer.keyManager(), peer.trustManager());
				clientTls = CoordinatorTls.of(app.keyManager(), app.trustManager());
				// the bench's owners are w<row>.i<caller> and reader.i0: one id prefix per row
				List<String> prefixes = new ArrayList<>(List.of("reader"));
				for (int row = 0; row < 256; row++) {
					prefixes.add("w" + row);
				}
				policy = AccessPolicy.builder().peers(List.of("coordinator")).app("bench-app", prefixes).build();
			}
			Map<String, String> peers = new LinkedHashMap<>();
			for (int i = 1; i <= size; i++) {
				peers.put("n" + i, "127.0.0.1:" + freePort());
			}
			CoordinatorGroup group = CoordinatorGroup.of(peers);
			List<CoordinatorServer> servers = new ArrayList<>();
			for (String id : peers.keySet()) {
				CoordinatorServer server = CoordinatorServer.builder(id, group, dataDir.resolve(id))
					.bindHost("127.0.0.1")
					.properties((properties) -> raft.forEach(properties::set))
					.tls(peerTls)
					.accessPolicy(policy)
					// decisions here are never completed (a peak-rate measurement): no limit, but the quota
					// check still runs on every command, as it does in production
					.quotas(new CoordinatorQuotas(Integer.MAX_VALUE, Integer.MAX_VALUE, Integer.MAX_VALUE))
					.build();
				servers.add(server);
				server.start();
			}
			try {
				String leader = servers.get(0).awaitLeader(Duration.ofSeconds(30));
				logger.info("{} peer(s) started, leader '{}'", size, leader);
			}
			catch (java.util.concurrent.TimeoutException ex) {
				servers.forEach(CoordinatorServer::close);
				throw new IllegalStateException("No leader among " + size + " peers", ex);
			}
			return new Cluster(group, servers, clientTls);
		}

		int size() {
			return this.servers.size();
		}

		String label() {
			return size() + " peer" + ((size() > 1) ? "s" : "") + ((this.clientTls != null) ? " tls" : "");
		}

		RatisDecisionLogBuilder clientBuilder() {
			return RatisDecisionLog.builder(this.group).purgeInterval(Duration.ZERO).tls(this.clientTls);
		}

		@Override
		public void close() {
			this.servers.forEach(CoordinatorServer::close);
		}

		private static int freePort() {
			try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
				return socket.getLocalPort();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

	}

}
