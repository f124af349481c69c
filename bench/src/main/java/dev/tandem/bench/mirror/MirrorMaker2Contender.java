package dev.tandem.bench.mirror;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kafka's own MirrorMaker 2 in dedicated mode ({@code org.apache.kafka.connect.mirror.MirrorMaker},
 * KIP-382), one node, in a JVM of its own whose class path is {@code connect-mirror} at the
 * build's kafka-clients version as Kafka publishes it (resolved by
 * {@code bench/mirrormaker2/pom.xml}, with no Spring Boot version management). One mode per
 * instance:
 * <ul>
 * <li>exactly-once (KIP-618 in dedicated mode, Kafka 3.5+): {@code <target>.exactly.once.source.support=enabled}
 * on the target's Connect worker and {@code dedicated.mode.enable.internal.rest=true} with a
 * {@code listeners} address (KIP-710), as Kafka's geo-replication documentation asks;</li>
 * <li>at-least-once: the same without {@code exactly.once.source.support}.</li>
 * </ul>
 * Both read the source {@code read_committed}, sync group offsets to the target
 * ({@code sync.group.offsets.enabled=true}) and keep MirrorMaker 2's defaults otherwise, except
 * intervals shortened for the bench (checkpoints and group sync every second instead of 60 s,
 * groups refreshed every 5 s instead of 10 min) and what these clusters do not have or need
 * (heartbeats off, ACL sync off: no authorizer), the replication factor of its topics that of the bench's
 * own, and offset syncs kept on the target ({@code offset-syncs.topic.location=target}, KIP-716:
 * MirrorMaker 2 runs beside the target, so its only traffic to the source is fetching and reading
 * group offsets). Each run gets fresh Connect state (its own
 * worker group and internal topics), so no run resumes another's.
 */
final class MirrorMaker2Contender implements Contender {

	private static final Logger logger = LoggerFactory.getLogger(MirrorMaker2Contender.class);

	private final boolean exactlyOnce;

	private final String classPath;

	private @Nullable Process process;

	private @Nullable Path logFile;

	MirrorMaker2Contender(boolean exactlyOnce, Path classPathFile) throws IOException {
		this.exactlyOnce = exactlyOnce;
		if (!Files.isRegularFile(classPathFile)) {
			throw new IllegalArgumentException("--mm2-classpath: no file " + classPathFile
					+ "; resolve it with mvn -f bench/mirrormaker2/pom.xml dependency:build-classpath"
					+ " -Dmdep.outputFile=<file> (the mirror-bench profile does)");
		}
		this.classPath = Files.readString(classPathFile, StandardCharsets.UTF_8).trim();
		if (!this.classPath.contains("connect-mirror")) {
			throw new IllegalArgumentException("--mm2-classpath: " + classPathFile + " names no connect-mirror jar");
		}
	}

	@Override
	public String id() {
		return this.exactlyOnce ? "mm2-eos" : "mm2-alo";
	}

	@Override
	public String settings() {
		return "MirrorMaker 2 " + (this.exactlyOnce ? "exactly-once" : "at-least-once") + ", dedicated mode, 1 node, "
				+ "own JVM (-Xmx512m), tasks.max=1 (default), offset.lag.max=100 (default), replication factor of every "
				+ "topic it creates the bench's: "
				+ properties(new MirrorRun("<tag>", "<source>", "<target>", "...", "...", "<topic>", "<remote>",
						List.of("<groups>"), 0, Path.of("."), Path.of("."), (short) 3, 0), 0)
					.entrySet().stream().filter((e) -> !e.getKey().contains("bootstrap")
							&& !e.getKey().contains("storage.topic") && !e.getKey().endsWith("group.id")
							&& !e.getKey().contains("replication.factor")
							&& !e.getKey().equals("clusters") && !e.getKey().endsWith(".topics")
							&& !e.getKey().endsWith(".groups") && !e.getKey().equals("listeners"))
					.map((e) -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", "));
	}

	Map<String, String> properties(MirrorRun run, int restPort) {
		String source = run.sourceAlias();
		String target = run.targetAlias();
		String flow = source + "->" + target;
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("clusters", source + ", " + target);
		properties.put(source + ".bootstrap.servers", run.sourceBootstrapServers());
		properties.put(target + ".bootstrap.servers", run.targetBootstrapServers());
		properties.put(flow + ".enabled", "true");
		properties.put(flow + ".topics", run.topic());
		properties.put(flow + ".groups", String.join(",", run.groups()));
		properties.put(source + ".consumer.isolation.level", "read_committed");
		if (this.exactlyOnce) {
			properties.put(target + ".exactly.once.source.support", "enabled");
		}
		properties.put("dedicated.mode.enable.internal.rest", "true");
		properties.put("listeners", "http://localhost:" + restPort);
		properties.put("sync.group.offsets.enabled", "true");
		properties.put("sync.group.offsets.interval.seconds", "1");
		properties.put("emit.checkpoints.interval.seconds", "1");
		properties.put("refresh.groups.interval.seconds", "5");
		properties.put("emit.heartbeats.enabled", "false");
		properties.put("sync.topic.acls.enabled", "false");
		// topics MirrorMaker 2 creates: as many replicas as the bench's own topics
		String replication = Short.toString(run.replicationFactor());
		for (String key : List.of("replication.factor", "checkpoints.topic.replication.factor",
				"heartbeats.topic.replication.factor", "offset-syncs.topic.replication.factor",
				"offset.storage.replication.factor", "config.storage.replication.factor",
				"status.storage.replication.factor")) {
			properties.put(key, replication);
		}
		// beside the target, as the copy runs across regions: offset syncs written to the target (KIP-716),
		// so that the source only sees fetches and the group offsets it reads
		properties.put("offset-syncs.topic.location", "target");
		// fresh Connect state per run: the worker group and its internal topics on the target
		properties.put(target + ".group.id", "mm2-" + run.tag());
		properties.put("offset.storage.topic", "mm2-offsets." + run.tag() + ".internal");
		properties.put("config.storage.topic", "mm2-configs." + run.tag() + ".internal");
		properties.put("status.storage.topic", "mm2-status." + run.tag() + ".internal");
		return properties;
	}

	@Override
	public void start(MirrorRun run) throws IOException {
		int restPort;
		try (ServerSocket socket = new ServerSocket(0)) {
			restPort = socket.getLocalPort();
		}
		Path config = run.logs().resolve(run.tag() + "-mm2.properties");
		StringBuilder text = new StringBuilder();
		properties(run, restPort).forEach((key, value) -> text.append(key).append(" = ").append(value).append('\n'));
		Files.writeString(config, text, StandardCharsets.UTF_8);
		Path log = run.logs().resolve(run.tag() + "-mm2.log");
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
				"-Dorg.slf4j.simpleLogger.log.org.apache.kafka.connect.mirror=info",
				"-Dorg.slf4j.simpleLogger.showDateTime=true", "-cp", this.classPath,
				"org.apache.kafka.connect.mirror.MirrorMaker", config.toString()));
		this.logFile = log;
		this.process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		logger.info("Started MirrorMaker 2 ({}) for {}: pid {}, log {}", id(), run.tag(), this.process.pid(), log);
	}

	@Override
	public @Nullable String failure() {
		Process process = this.process;
		if (process != null && !process.isAlive()) {
			return "MirrorMaker 2 exited with " + process.exitValue() + "; see " + this.logFile;
		}
		return null;
	}

	@Override
	public void stop() throws InterruptedException {
		Process process = this.process;
		if (process == null) {
			return;
		}
		this.process = null;
		process.destroy();
		if (!process.waitFor(60, TimeUnit.SECONDS)) {
			logger.warn("MirrorMaker 2 ({}) did not stop in 60 s; killing it", id());
			process.destroyForcibly();
			process.waitFor(10, TimeUnit.SECONDS);
		}
	}

	@Override
	public void close() throws InterruptedException {
		stop();
	}

}
