package dev.tandem.mirror;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import org.jspecify.annotations.Nullable;

import dev.tandem.transaction.CrossClusterProcessor;

/**
 * What a {@link Mirror} copies and how: the source cluster, the target clusters, the topics and
 * consumer groups, the remote topic names and the transaction sizes. Cluster names are the names
 * the {@code CrossClusterTransactionManager} knows them by and double as the clusters' aliases
 * (remote topic names, provenance headers). Build with {@link #builder(String, List)}; immutable
 * and thread-safe.
 *
 * @param source source cluster
 * @param targets target clusters, one or more, none equal to the source
 * @param topics which source topics to copy
 * @param naming how remote topics are named
 * @param groups source consumer groups whose offsets are translated to the targets
 * @param groupSyncInterval how often the source groups' committed offsets are read
 * @param consumerGroup the mirror's own consumer group: on the source with {@link Positions#SOURCE},
 *     on the target with {@link Positions#TARGET} (instances of one mirror share the partitions
 *     through it)
 * @param replicationFactor replication factor of created target topics, or -1 for the target
 *     broker's {@code default.replication.factor}
 * @param copiedConfigs topic configs copied from the source topic to a created target topic
 * @param topicRefreshInterval how often new source topics and partitions are looked for
 * @param maxRecords records after which a mirror transaction closes (the source consumer's
 *     {@code max.poll.records} is lowered to it, so a transaction holds fewer than twice as many,
 *     or fewer than {@code growth + 1} times as many while the previous one still prepares)
 * @param maxInterval age after which a mirror transaction closes
 * @param depth mirror transactions in flight (pipelining)
 * @param growth how far past {@code maxRecords} a transaction grows while the previous one still
 *     prepares ({@link dev.tandem.transaction.CrossClusterProcessorBuilder#growth(int)})
 * @param positions where the mirror keeps its source positions ({@link Positions})
 * @param mappingCapacity runs of the offset mapping kept per partition ({@link OffsetMapping})
 * @param rebuildRecords how many of a target partition's last records a starting mirror reads to
 *     rebuild its offset mapping
 * @since 0.1.0
 */
public record MirrorSettings(String source, List<String> targets, TopicSelection topics, RemoteTopicNaming naming,
		GroupSelection groups, Duration groupSyncInterval, String consumerGroup, short replicationFactor,
		List<String> copiedConfigs, Duration topicRefreshInterval, int maxRecords, Duration maxInterval, int depth,
		int growth, Positions positions, int mappingCapacity, int rebuildRecords) {

	/**
	 * Where a mirror keeps its source positions (the next source offset of every copied
	 * partition), committed in the same transaction as the copies.
	 *
	 * @since 0.2.0
	 */
	public enum Positions {

		/**
		 * In the mirror's consumer group on the source: every mirror transaction is a cross-cluster
		 * transaction over the source and the targets (two-phase commit), so each one waits for
		 * round trips to the source. Needed with two or more targets.
		 */
		SOURCE,

		/**
		 * In the mirror's consumer group on its one target, keyed by the remote topics' partitions
		 * (the offset commit's metadata names the source topic's incarnation): every mirror
		 * transaction is one Kafka transaction on the target, and the source only sees fetches,
		 * as with MirrorMaker 2's exactly-once source connector (KIP-618). The instances share the
		 * partitions through that group on the target, whose generation fences an instance that
		 * lost them (KIP-447). The default with one target. A mirror that ran with
		 * {@link #SOURCE} before starts from its group's offsets on the source where the target
		 * has none yet.
		 */
		TARGET

	}

	/** Topic configs copied by default from a source topic to the target topic created for it. */
	public static final List<String> DEFAULT_COPIED_CONFIGS = List.of("cleanup.policy", "retention.ms",
			"retention.bytes", "max.message.bytes", "compression.type");

	/** Default {@link Builder#groupSyncInterval(Duration)}. */
	public static final Duration DEFAULT_GROUP_SYNC_INTERVAL = Duration.ofSeconds(1);

	/** Prefix of the default {@link Builder#consumerGroup(String)}, followed by the source's name. */
	public static final String DEFAULT_CONSUMER_GROUP_PREFIX = "tandem-mirror-";

	/** Default {@link Builder#replicationFactor(short)}: the target broker's {@code default.replication.factor}. */
	public static final short DEFAULT_REPLICATION_FACTOR = -1;

	/** Default {@link Builder#topicRefreshInterval(Duration)}. */
	public static final Duration DEFAULT_TOPIC_REFRESH_INTERVAL = Duration.ofSeconds(10);

	/**
	 * Default {@link Builder#maxRecords(int)}: large enough that, with the positions on the target
	 * (no round trip to the source per transaction), a backlog is copied in transactions that close
	 * on {@link #DEFAULT_MAX_INTERVAL} rather than on a record count, so that the per-transaction
	 * work (flush, commit, the mapping's update) is paid for many records, and so that the
	 * pipeline's wait at each hand-over (a transaction's copies reach their producer only once
	 * every copy of the previous one is acknowledged, which keeps each target partition in source
	 * order) comes once per many records. A transaction that fails is copied again whole, so this
	 * also bounds the work repeated after a failure.
	 */
	public static final int DEFAULT_MAX_RECORDS = 40_000;

	/** Default {@link Builder#maxInterval(Duration)}: the {@link CrossClusterProcessor}'s, which it configures. */
	public static final Duration DEFAULT_MAX_INTERVAL = CrossClusterProcessor.DEFAULT_MAX_INTERVAL;

	/** Default {@link Builder#depth(int)}: the {@link CrossClusterProcessor}'s, which it configures. */
	public static final int DEFAULT_DEPTH = CrossClusterProcessor.DEFAULT_DEPTH;

	/** Default {@link Builder#growth(int)}: the {@link CrossClusterProcessor}'s, which it configures. */
	public static final int DEFAULT_GROWTH = CrossClusterProcessor.DEFAULT_GROWTH;

	/** Default {@link Builder#mappingCapacity(int)}. */
	public static final int DEFAULT_MAPPING_CAPACITY = 10_000;

	/** Default {@link Builder#rebuildRecords(int)}. */
	public static final int DEFAULT_REBUILD_RECORDS = 10_000;

	/**
	 * Returns a builder.
	 * @param source the source cluster
	 * @param targets the target clusters
	 * @return a builder with the defaults
	 */
	public static Builder builder(String source, List<String> targets) {
		return new Builder(source, targets);
	}

	/**
	 * Which source consumer groups get their offsets translated: named groups and groups matching
	 * a regular expression (full match). The mirror's own group is never selected.
	 *
	 * @param names group ids
	 * @param pattern a regular expression of further group ids, or {@code null}
	 * @since 0.1.0
	 */
	public record GroupSelection(List<String> names, @Nullable Pattern pattern) {

		/** No group. */
		public static final GroupSelection NONE = new GroupSelection(List.of(), null);

		/**
		 * Returns whether a group is selected.
		 * @param group a group id
		 * @return whether its offsets are translated
		 */
		public boolean matches(String group) {
			return this.names.contains(group) || (this.pattern != null && this.pattern.matcher(group).matches());
		}

		/**
		 * Returns whether any group can match.
		 * @return false when neither names nor a pattern are given
		 */
		public boolean isEmpty() {
			return this.names.isEmpty() && this.pattern == null;
		}

	}

	/**
	 * Builds {@link MirrorSettings}; every setter's argument is checked in {@link #build()}, whose
	 * {@link InvalidMirrorSettingException} names the setting and the fix. Not thread-safe.
	 *
	 * @since 0.1.0
	 */
	public static final class Builder {

		private final String source;

		private final List<String> targets;

		private List<String> topics = List.of();

		private @Nullable String topicPattern;

		private List<String> excludes = List.of();

		private RemoteTopicNaming naming = RemoteTopicNaming.prefixed(RemoteTopicNaming.DEFAULT_SEPARATOR);

		private List<String> groups = List.of();

		private @Nullable String groupPattern;

		private Duration groupSyncInterval = DEFAULT_GROUP_SYNC_INTERVAL;

		private @Nullable String consumerGroup;

		private short replicationFactor = DEFAULT_REPLICATION_FACTOR;

		private List<String> copiedConfigs = DEFAULT_COPIED_CONFIGS;

		private Duration topicRefreshInterval = DEFAULT_TOPIC_REFRESH_INTERVAL;

		private int maxRecords = DEFAULT_MAX_RECORDS;

		private Duration maxInterval = DEFAULT_MAX_INTERVAL;

		private int depth = DEFAULT_DEPTH;

		private int growth = DEFAULT_GROWTH;

		private @Nullable Positions positions;

		private int mappingCapacity = DEFAULT_MAPPING_CAPACITY;

		private int rebuildRecords = DEFAULT_REBUILD_RECORDS;

		private Builder(String source, List<String> targets) {
			this.source = Objects.requireNonNull(source, "source");
			this.targets = List.copyOf(targets);
		}

		/**
		 * Sets the topics copied by name.
		 * @param topics topic names
		 * @return this builder
		 */
		public Builder topics(List<String> topics) {
			this.topics = List.copyOf(topics);
			return this;
		}

		/**
		 * Sets a regular expression (full match) of further topics to copy.
		 * @param topicPattern the expression, or {@code null}
		 * @return this builder
		 */
		public Builder topicPattern(@Nullable String topicPattern) {
			this.topicPattern = topicPattern;
			return this;
		}

		/**
		 * Sets regular expressions (full match) of topics never copied, on top of
		 * {@link TopicSelection#BUILT_IN_EXCLUDES}.
		 * @param excludes the expressions
		 * @return this builder
		 */
		public Builder excludes(List<String> excludes) {
			this.excludes = List.copyOf(excludes);
			return this;
		}

		/**
		 * Sets how remote topics are named; default MirrorMaker 2's {@code <source>.<topic>}.
		 * @param naming the naming
		 * @return this builder
		 */
		public Builder naming(RemoteTopicNaming naming) {
			this.naming = Objects.requireNonNull(naming, "naming");
			return this;
		}

		/**
		 * Sets the source groups whose offsets are translated, by name.
		 * @param groups group ids
		 * @return this builder
		 */
		public Builder groups(List<String> groups) {
			this.groups = List.copyOf(groups);
			return this;
		}

		/**
		 * Sets a regular expression (full match) of further groups whose offsets are translated.
		 * @param groupPattern the expression, or {@code null}
		 * @return this builder
		 */
		public Builder groupPattern(@Nullable String groupPattern) {
			this.groupPattern = groupPattern;
			return this;
		}

		/**
		 * Sets how often the source groups' committed offsets are read; default
	 * {@link MirrorSettings#DEFAULT_GROUP_SYNC_INTERVAL}.
		 * @param interval 10 ms or more
		 * @return this builder
		 */
		public Builder groupSyncInterval(Duration interval) {
			this.groupSyncInterval = Objects.requireNonNull(interval, "interval");
			return this;
		}

		/**
		 * Sets the mirror's own consumer group; default {@code tandem-mirror-<source>}
	 * ({@link MirrorSettings#DEFAULT_CONSUMER_GROUP_PREFIX}).
		 * @param consumerGroup the group id
		 * @return this builder
		 */
		public Builder consumerGroup(String consumerGroup) {
			this.consumerGroup = consumerGroup;
			return this;
		}

		/**
		 * Sets the replication factor of created target topics; default
	 * {@value MirrorSettings#DEFAULT_REPLICATION_FACTOR}, the broker's.
		 * @param replicationFactor -1, or 1 or more
		 * @return this builder
		 */
		public Builder replicationFactor(short replicationFactor) {
			this.replicationFactor = replicationFactor;
			return this;
		}

		/**
		 * Sets the topic configs copied to created target topics.
		 * @param copiedConfigs config names, such as {@code retention.ms}
		 * @return this builder
		 */
		public Builder copiedConfigs(List<String> copiedConfigs) {
			this.copiedConfigs = List.copyOf(copiedConfigs);
			return this;
		}

		/**
		 * Sets how often new source topics and partitions are looked for; default
	 * {@link MirrorSettings#DEFAULT_TOPIC_REFRESH_INTERVAL}.
		 * @param interval 100 ms or more
		 * @return this builder
		 */
		public Builder topicRefreshInterval(Duration interval) {
			this.topicRefreshInterval = Objects.requireNonNull(interval, "interval");
			return this;
		}

		/**
		 * Sets the records after which a mirror transaction closes; default
	 * {@value MirrorSettings#DEFAULT_MAX_RECORDS}. The source
		 * consumer's {@code max.poll.records} is lowered to it (a transaction closes between
		 * polls, so it holds fewer than twice as many; while the previous transaction still
		 * prepares, up to {@link #growth(int)} times as many, plus one poll).
		 * @param maxRecords 1 or more
		 * @return this builder
		 */
		public Builder maxRecords(int maxRecords) {
			this.maxRecords = maxRecords;
			return this;
		}

		/**
		 * Sets the age after which a mirror transaction closes; default
	 * {@link MirrorSettings#DEFAULT_MAX_INTERVAL}.
		 * @param maxInterval 1 ms or more
		 * @return this builder
		 */
		public Builder maxInterval(Duration maxInterval) {
			this.maxInterval = Objects.requireNonNull(maxInterval, "maxInterval");
			return this;
		}

		/**
		 * Sets how far past {@code maxRecords} a mirror transaction grows while the previous one
		 * still prepares (its source offset commit, a round trip to the source, is under way), as
		 * {@link dev.tandem.transaction.CrossClusterProcessorBuilder#growth(int)}; the copier keeps
		 * a transaction's copies in memory until its outcome, so memory grows the same way. Default
		 * {@value MirrorSettings#DEFAULT_GROWTH}.
		 * @param growth 1 (close at {@code maxRecords}) to 1,000
		 * @return this builder
		 */
		public Builder growth(int growth) {
			this.growth = growth;
			return this;
		}

		/**
		 * Sets where the mirror keeps its source positions; default {@link Positions#TARGET} with
		 * one target, {@link Positions#SOURCE} with more.
		 * @param positions {@link Positions#TARGET} only with one target; null for the default
		 * @return this builder
		 * @since 0.2.0
		 */
		public Builder positions(@Nullable Positions positions) {
			this.positions = positions;
			return this;
		}

		/**
		 * Sets the mirror transactions in flight; default {@value MirrorSettings#DEFAULT_DEPTH}.
		 * @param depth 1 or more, less than the manager's slots
		 * @return this builder
		 */
		public Builder depth(int depth) {
			this.depth = depth;
			return this;
		}

		/**
		 * Sets the runs of the offset mapping kept per partition; default
	 * {@value MirrorSettings#DEFAULT_MAPPING_CAPACITY}.
		 * @param mappingCapacity 1 or more
		 * @return this builder
		 */
		public Builder mappingCapacity(int mappingCapacity) {
			this.mappingCapacity = mappingCapacity;
			return this;
		}

		/**
		 * Sets how many of a target partition's last records a starting mirror reads to rebuild its
		 * offset mapping; default {@value MirrorSettings#DEFAULT_REBUILD_RECORDS}.
		 * @param rebuildRecords 1 or more
		 * @return this builder
		 */
		public Builder rebuildRecords(int rebuildRecords) {
			this.rebuildRecords = rebuildRecords;
			return this;
		}

		/**
		 * Checks the settings and builds them.
		 * @return the settings
		 * @throws InvalidMirrorSettingException naming the setting at fault (as a field, and at the
		 *     start of the message) and the fix
		 */
		public MirrorSettings build() {
			if (this.source.isBlank()) {
				throw invalid("source", "source: name the source cluster", null);
			}
			if (this.targets.isEmpty()) {
				throw invalid("targets", "targets: name at least one target cluster", null);
			}
			if (this.targets.contains(this.source)) {
				throw invalid("targets", "targets: the source cluster '" + this.source
						+ "' cannot be a target of its own mirror; remove it from the targets", null);
			}
			if (this.targets.stream().distinct().count() != this.targets.size()) {
				throw invalid("targets", "targets: " + this.targets + " names a cluster twice", null);
			}
			List<String> prefixes = new ArrayList<>();
			if (!this.naming.isIdentity()) {
				this.targets.forEach((target) -> prefixes.add(target + this.naming.separator()));
			}
			TopicSelection selection;
			try {
				selection = new TopicSelection(this.topics, this.topicPattern, this.excludes, prefixes);
			}
			catch (PatternSyntaxException ex) {
				throw invalid(topicPatternCompiles() ? "excludes" : "topic-pattern",
						"topic-pattern/excludes: not a valid regular expression: " + ex.getMessage(), ex);
			}
			catch (IllegalArgumentException ex) {
				// neither topic names nor a topic pattern
				throw invalid("topics", String.valueOf(ex.getMessage()), ex);
			}
			Pattern groupRegex;
			try {
				groupRegex = (this.groupPattern == null || this.groupPattern.isBlank()) ? null
						: Pattern.compile(this.groupPattern);
			}
			catch (PatternSyntaxException ex) {
				throw invalid("group-pattern", "group-pattern: not a valid regular expression: " + ex.getMessage(), ex);
			}
			String group = (this.consumerGroup != null && !this.consumerGroup.isBlank()) ? this.consumerGroup
					: DEFAULT_CONSUMER_GROUP_PREFIX + this.source;
			check(this.groupSyncInterval.compareTo(Duration.ofMillis(10)) >= 0, "group-sync-interval",
					this.groupSyncInterval, "use 10ms or more");
			check(this.topicRefreshInterval.compareTo(Duration.ofMillis(100)) >= 0, "topic-refresh-interval",
					this.topicRefreshInterval, "use 100ms or more");
			check(this.replicationFactor == -1 || this.replicationFactor >= 1, "replication-factor",
					this.replicationFactor, "use -1 (the target broker's default) or 1 or more");
			check(this.maxRecords >= 1, "max-records", this.maxRecords, "use 1 or more");
			check(!this.maxInterval.isNegative() && !this.maxInterval.isZero(), "max-interval", this.maxInterval,
					"use 1ms or more");
			check(this.depth >= 1, "depth", this.depth, "use 1 or more");
			check(this.growth >= 1 && this.growth <= 1000, "growth", this.growth, "use 1 to 1000");
			Positions where = (this.positions != null) ? this.positions
					: (this.targets.size() == 1) ? Positions.TARGET : Positions.SOURCE;
			if (where == Positions.TARGET && this.targets.size() > 1) {
				throw invalid("positions", "positions: target keeps the source positions on the one target of a mirror; "
						+ "with " + this.targets.size() + " targets " + this.targets + " use source (or leave it unset)", null);
			}
			check(this.mappingCapacity >= 1, "mapping-capacity", this.mappingCapacity, "use 1 or more");
			check(this.rebuildRecords >= 1, "rebuild-records", this.rebuildRecords, "use 1 or more");
			return new MirrorSettings(this.source, this.targets, selection, this.naming,
					new GroupSelection(this.groups, groupRegex), this.groupSyncInterval, group, this.replicationFactor,
					this.copiedConfigs, this.topicRefreshInterval, this.maxRecords, this.maxInterval, this.depth,
					this.growth, where, this.mappingCapacity, this.rebuildRecords);
		}

		private boolean topicPatternCompiles() {
			try {
				if (this.topicPattern != null && !this.topicPattern.isBlank()) {
					Pattern.compile(this.topicPattern);
				}
				return true;
			}
			catch (PatternSyntaxException ex) {
				return false;
			}
		}

		private static void check(boolean valid, String setting, Object value, String fix) {
			if (!valid) {
				throw invalid(setting, setting + " is " + value + ": " + fix, null);
			}
		}

		private static InvalidMirrorSettingException invalid(String setting, String message,
				@Nullable Throwable cause) {
			return new InvalidMirrorSettingException(setting, message, cause);
		}

	}

}
