package dev.tandem.bench.mirror;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.mirror.Mirror;
import dev.tandem.mirror.MirrorSettings;
import dev.tandem.mirror.Provenance;
import dev.tandem.transaction.CrossClusterTransactionManager;

/**
 * Tandem's mirror ({@link Mirror}, module {@code mirror}) as a library in the bench's JVM: one
 * instance, a {@link CrossClusterTransactionManager} on the source and the target with the
 * decision log an app gets by default (the embedded Ratis coordinator, one peer, log on disk,
 * shared by the runs), {@link MirrorSettings}' defaults otherwise (but {@code max-records} when the
 * bench is given one). {@code tandem} keeps the mirror's positions where the defaults put them
 * (on the one target); {@code tandem-source} keeps them on the source
 * ({@link MirrorSettings.Positions#SOURCE}: a cross-cluster transaction per mirror transaction). Each run gets a fresh manager
 * (its own id prefix, so its own transactional ids and leases) and a fresh mirror group.
 */
final class TandemMirrorContender implements Contender {

	private final Path coordinatorDirectory;

	private final @Nullable Integer maxRecords;

	private final MirrorSettings.@Nullable Positions positions;

	/** The spec's own settings ({@code tandem[key=value,...]}), empty for the defaults. */
	private final Map<String, String> overrides;

	private final String id;

	private @Nullable EmbeddedCoordinator coordinator;

	private @Nullable CrossClusterTransactionManager manager;

	private @Nullable Mirror mirror;

	/**
	 * @param overrides settings of this variant: {@code max-records}, {@code max-interval} (ms),
	 *     {@code depth}, {@code growth} for the mirror, {@code producer.<key>} for the target's
	 *     producers, {@code consumer.<key>} for the source's consumer; its id is then the spec
	 *     ({@code tandem[producer.batch.size=65536]})
	 */
	TandemMirrorContender(Path coordinatorDirectory, @Nullable Integer maxRecords,
			MirrorSettings.@Nullable Positions positions, String id, Map<String, String> overrides) {
		this.coordinatorDirectory = coordinatorDirectory;
		this.maxRecords = maxRecords;
		this.positions = positions;
		this.id = id;
		this.overrides = Map.copyOf(overrides);
		for (String key : this.overrides.keySet()) {
			if (!key.startsWith("producer.") && !key.startsWith("consumer.")
					&& !List.of("max-records", "max-interval", "depth", "growth").contains(key)) {
				throw new IllegalArgumentException("--contenders " + id + ": unknown setting '" + key + "'; use max-records, "
						+ "max-interval, depth, growth, producer.<key> or consumer.<key>");
			}
		}
	}

	@Override
	public String id() {
		return this.id;
	}

	@Override
	public String settings() {
		MirrorSettings defaults = MirrorSettings.builder("east", List.of("west")).topics(List.of("t")).build();
		return "Tandem's mirror, 1 instance in the bench's JVM, embedded Ratis decision log (1 peer, on disk), "
				+ ((this.maxRecords != null) ? "settings: max-records=" + this.maxRecords + " (--tandem-max-records), defaults: "
						: "settings' defaults: max-records=" + defaults.maxRecords() + ", ") + "max-interval="
				+ defaults.maxInterval().toMillis() + " ms, depth=" + defaults.depth() + ", growth=" + defaults.growth()
				+ ", positions=" + ((this.positions != null) ? this.positions : defaults.positions()) + ", group-sync-interval="
				+ defaults.groupSyncInterval().toMillis() + " ms; kafka-clients defaults for its clients"
				+ (this.overrides.isEmpty() ? "" : "; this variant's own settings: " + this.overrides);
	}

	@Override
	public void start(MirrorRun run) throws Exception {
		EmbeddedCoordinator coordinator = this.coordinator;
		if (coordinator == null) {
			// one coordinator for every manager here: a shared log, whose leases see a duplicate instance
			coordinator = EmbeddedCoordinator.builder(this.coordinatorDirectory)
					.client((log) -> log.sharedByInstances(true))
					.start();
			this.coordinator = coordinator;
		}
		CrossClusterTransactionManager manager = CrossClusterTransactionManager.builder()
			.idPrefix("mirror-bench-" + run.tag())
			.instanceId("mirror")
			.decisionLog(coordinator.decisionLog())
			.cluster(run.sourceAlias(), Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, run.sourceBootstrapServers()),
					clientConfig(run.sourceBootstrapServers(), "consumer."),
					Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, run.sourceBootstrapServers()))
			.cluster(run.targetAlias(), clientConfig(run.targetBootstrapServers(), "producer."),
					Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, run.targetBootstrapServers()),
					Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, run.targetBootstrapServers()))
			.build();
		this.manager = manager;
		manager.start();
		MirrorSettings.Builder settings = MirrorSettings.builder(run.sourceAlias(), List.of(run.targetAlias()))
			.topics(List.of(run.topic()))
			.groups(run.groups())
			.consumerGroup("tandem-mirror-" + run.tag())
			.positions(this.positions);
		if (this.maxRecords != null) {
			settings.maxRecords(this.maxRecords);
		}
		String value = this.overrides.get("max-records");
		if (value != null) {
			settings.maxRecords(Integer.parseInt(value));
		}
		value = this.overrides.get("max-interval");
		if (value != null) {
			settings.maxInterval(Duration.ofMillis(Long.parseLong(value)));
		}
		value = this.overrides.get("depth");
		if (value != null) {
			settings.depth(Integer.parseInt(value));
		}
		value = this.overrides.get("growth");
		if (value != null) {
			settings.growth(Integer.parseInt(value));
		}
		Mirror mirror = new Mirror(manager, settings.build());
		this.mirror = mirror;
		mirror.start();
	}

	/** The bootstrap servers and this variant's keys of one client type ({@code prefix} removed). */
	private Map<String, Object> clientConfig(String bootstrapServers, String prefix) {
		Map<String, Object> config = new HashMap<>();
		config.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
		this.overrides.forEach((key, value) -> {
			if (key.startsWith(prefix)) {
				config.put(key.substring(prefix.length()), value);
			}
		});
		return config;
	}

	@Override
	public @Nullable String failure() {
		Mirror mirror = this.mirror;
		Throwable failure = (mirror != null) ? mirror.failure() : null;
		return (failure != null) ? "Tandem's mirror failed: " + failure : null;
	}

	@Override
	public void stop() {
		Mirror mirror = this.mirror;
		this.mirror = null;
		if (mirror != null) {
			mirror.close();
		}
		CrossClusterTransactionManager manager = this.manager;
		this.manager = null;
		if (manager != null) {
			manager.close();
		}
	}

	@Override
	public long sourceOffset(ConsumerRecord<byte[], byte[]> record) {
		Provenance provenance = Provenance.read(record.headers());
		return (provenance != null) ? provenance.offset() : -1;
	}

	@Override
	public void close() throws Exception {
		stop();
		EmbeddedCoordinator coordinator = this.coordinator;
		this.coordinator = null;
		if (coordinator != null) {
			coordinator.close();
		}
	}

}
