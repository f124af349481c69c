package dev.tandem.mirror.app;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.tandem.mirror.MirrorSettings;
import dev.tandem.mirror.RemoteTopicNaming;

/**
 * Configuration of the mirror app ({@code tandem.mirror.*}); the clusters, the coordinator and the
 * instance id are the starter's {@code tandem.clusters.*}, {@code tandem.coordinator.*} and
 * {@code tandem.transaction.instance-id}. The mirror's defaults are {@link MirrorSettings}'
 * {@code DEFAULT_*} constants, declared there only.
 *
 * @since 0.1.0
 */
@ConfigurationProperties(prefix = "tandem.mirror", ignoreUnknownFields = false)
public class MirrorProperties {

	/**
	 * Whether the mirror runs.
	 */
	private boolean enabled = true;

	/**
	 * Source cluster, one of tandem.clusters; its name is its alias in remote topic names and
	 * provenance headers.
	 */
	private @Nullable String source;

	/**
	 * Target clusters, one or more of tandem.clusters; each record goes to all of them in one
	 * transaction.
	 */
	private List<String> targets = new ArrayList<>();

	/**
	 * Source topics to mirror, by name.
	 */
	private List<String> topics = new ArrayList<>();

	/**
	 * Regular expression (full match) of further source topics to mirror.
	 */
	private @Nullable String topicPattern;

	/**
	 * Regular expressions (full match) of source topics never mirrored, on top of internal,
	 * MirrorMaker 2 and Tandem topics and remote copies of a target's topics.
	 */
	private List<String> excludes = new ArrayList<>();

	/**
	 * How remote topics are named: "default" (MirrorMaker 2's <source>.<topic>) or "identity"
	 * (the source topic's name).
	 */
	private Naming naming = Naming.DEFAULT;

	/**
	 * Separator of default remote topic names.
	 */
	private String separator = RemoteTopicNaming.DEFAULT_SEPARATOR;

	/**
	 * Source consumer groups whose committed offsets are translated to the targets, by name.
	 */
	private List<String> groups = new ArrayList<>();

	/**
	 * Regular expression (full match) of further source groups whose offsets are translated.
	 */
	private @Nullable String groupPattern;

	/**
	 * How often the selected groups' committed offsets are read on the source.
	 */
	private Duration groupSyncInterval = MirrorSettings.DEFAULT_GROUP_SYNC_INTERVAL;

	/**
	 * The mirror's own consumer group on the source (instances of one mirror share the
	 * partitions through it); default tandem-mirror-<source>.
	 */
	private @Nullable String consumerGroup;

	/**
	 * Replication factor of created target topics; -1 for the target broker's default.
	 */
	private short replicationFactor = MirrorSettings.DEFAULT_REPLICATION_FACTOR;

	/**
	 * Topic configs copied from a source topic to the target topic created for it (only values
	 * set on the source topic itself).
	 */
	private List<String> copiedConfigs = new ArrayList<>(MirrorSettings.DEFAULT_COPIED_CONFIGS);

	/**
	 * How often new source topics and partitions are looked for.
	 */
	private Duration topicRefreshInterval = MirrorSettings.DEFAULT_TOPIC_REFRESH_INTERVAL;

	/**
	 * Records after which a mirror transaction closes; the source consumer's max.poll.records is
	 * lowered to it.
	 */
	private int maxRecords = MirrorSettings.DEFAULT_MAX_RECORDS;

	/**
	 * Age after which a mirror transaction closes.
	 */
	private Duration maxInterval = MirrorSettings.DEFAULT_MAX_INTERVAL;

	/**
	 * Mirror transactions in flight (pipelining); less than tandem.transaction.slots.
	 */
	private int depth = MirrorSettings.DEFAULT_DEPTH;

	/**
	 * How many times max-records a mirror transaction may grow to while the previous one still
	 * prepares (1 to 1000; 1 closes every transaction at max-records).
	 */
	private int growth = MirrorSettings.DEFAULT_GROWTH;

	/**
	 * Where the mirror keeps its source positions: 'target' (its group on the one target, one
	 * Kafka transaction per mirror transaction, the source only sees fetches) or 'source' (its
	 * group on the source, a cross-cluster transaction each). Unset: target with one target,
	 * source with more.
	 */
	private MirrorSettings.@Nullable Positions positions;

	/**
	 * Runs of the source-to-target offset mapping kept per partition.
	 */
	private int mappingCapacity = MirrorSettings.DEFAULT_MAPPING_CAPACITY;

	/**
	 * How many of a target partition's last records a starting mirror reads to rebuild its
	 * offset mapping.
	 */
	private int rebuildRecords = MirrorSettings.DEFAULT_REBUILD_RECORDS;

	private final Health health = new Health();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public @Nullable String getSource() {
		return this.source;
	}

	public void setSource(@Nullable String source) {
		this.source = source;
	}

	public List<String> getTargets() {
		return this.targets;
	}

	public void setTargets(List<String> targets) {
		this.targets = targets;
	}

	public List<String> getTopics() {
		return this.topics;
	}

	public void setTopics(List<String> topics) {
		this.topics = topics;
	}

	public @Nullable String getTopicPattern() {
		return this.topicPattern;
	}

	public void setTopicPattern(@Nullable String topicPattern) {
		this.topicPattern = topicPattern;
	}

	public List<String> getExcludes() {
		return this.excludes;
	}

	public void setExcludes(List<String> excludes) {
		this.excludes = excludes;
	}

	public Naming getNaming() {
		return this.naming;
	}

	public void setNaming(Naming naming) {
		this.naming = naming;
	}

	public String getSeparator() {
		return this.separator;
	}

	public void setSeparator(String separator) {
		this.separator = separator;
	}

	public List<String> getGroups() {
		return this.groups;
	}

	public void setGroups(List<String> groups) {
		this.groups = groups;
	}

	public @Nullable String getGroupPattern() {
		return this.groupPattern;
	}

	public void setGroupPattern(@Nullable String groupPattern) {
		this.groupPattern = groupPattern;
	}

	public Duration getGroupSyncInterval() {
		return this.groupSyncInterval;
	}

	public void setGroupSyncInterval(Duration groupSyncInterval) {
		this.groupSyncInterval = groupSyncInterval;
	}

	public @Nullable String getConsumerGroup() {
		return this.consumerGroup;
	}

	public void setConsumerGroup(@Nullable String consumerGroup) {
		this.consumerGroup = consumerGroup;
	}

	public short getReplicationFactor() {
		return this.replicationFactor;
	}

	public void setReplicationFactor(short replicationFactor) {
		this.replicationFactor = replicationFactor;
	}

	public List<String> getCopiedConfigs() {
		return this.copiedConfigs;
	}

	public void setCopiedConfigs(List<String> copiedConfigs) {
		this.copiedConfigs = copiedConfigs;
	}

	public Duration getTopicRefreshInterval() {
		return this.topicRefreshInterval;
	}

	public void setTopicRefreshInterval(Duration topicRefreshInterval) {
		this.topicRefreshInterval = topicRefreshInterval;
	}

	public int getMaxRecords() {
		return this.maxRecords;
	}

	public void setMaxRecords(int maxRecords) {
		this.maxRecords = maxRecords;
	}

	public Duration getMaxInterval() {
		return this.maxInterval;
	}

	public void setMaxInterval(Duration maxInterval) {
		this.maxInterval = maxInterval;
	}

	public int getDepth() {
		return this.depth;
	}

	public void setDepth(int depth) {
		this.depth = depth;
	}

	public int getGrowth() {
		return this.growth;
	}

	public void setGrowth(int growth) {
		this.growth = growth;
	}

	public MirrorSettings.@Nullable Positions getPositions() {
		return this.positions;
	}

	public void setPositions(MirrorSettings.@Nullable Positions positions) {
		this.positions = positions;
	}

	public int getMappingCapacity() {
		return this.mappingCapacity;
	}

	public void setMappingCapacity(int mappingCapacity) {
		this.mappingCapacity = mappingCapacity;
	}

	public int getRebuildRecords() {
		return this.rebuildRecords;
	}

	public void setRebuildRecords(int rebuildRecords) {
		this.rebuildRecords = rebuildRecords;
	}

	public Health getHealth() {
		return this.health;
	}

	/**
	 * How remote topics are named.
	 */
	public enum Naming {

		/** MirrorMaker 2's default policy: {@code <source><separator><topic>}. */
		DEFAULT,

		/** The source topic's own name. */
		IDENTITY

	}

	/**
	 * When the mirror's health indicator says DOWN.
	 */
	public static class Health {

		/**
		 * Records not mirrored yet (all partitions of this instance) above which the mirror is DOWN.
		 */
		private long maxLagRecords = 1_000_000;

		/**
		 * How long a partition may lag behind the source before the mirror is DOWN.
		 */
		private Duration maxLag = Duration.ofMinutes(5);

		public long getMaxLagRecords() {
			return this.maxLagRecords;
		}

		public void setMaxLagRecords(long maxLagRecords) {
			this.maxLagRecords = maxLagRecords;
		}

		public Duration getMaxLag() {
			return this.maxLag;
		}

		public void setMaxLag(Duration maxLag) {
			this.maxLag = maxLag;
		}

	}

}
