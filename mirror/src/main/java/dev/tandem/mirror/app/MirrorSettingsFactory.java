package dev.tandem.mirror.app;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.tandem.autoconfigure.TandemProperties;
import dev.tandem.autoconfigure.diagnostics.TandemConfigurationException;
import dev.tandem.mirror.InvalidMirrorSettingException;
import dev.tandem.mirror.MirrorSettings;
import dev.tandem.mirror.RemoteTopicNaming;

/**
 * Turns {@code tandem.mirror.*} into {@link MirrorSettings}, checked against the configured
 * clusters and transaction slots; every mistake becomes a {@link TandemConfigurationException}
 * naming the property and the fix (shown by the starter's failure analyzer at start-up).
 */
final class MirrorSettingsFactory {

	private static final String PREFIX = "tandem.mirror.";

	private MirrorSettingsFactory() {
	}

	static MirrorSettings create(MirrorProperties properties, TandemProperties tandem) {
		Set<String> clusters = tandem.getClusters().keySet();
		String source = properties.getSource();
		if (source == null || source.isBlank()) {
			throw new TandemConfigurationException(PREFIX + "source", "tandem.mirror.source is not set.",
					"Set tandem.mirror.source to the cluster to mirror from, one of tandem.clusters " + clusters + ".");
		}
		if (!clusters.contains(source)) {
			throw new TandemConfigurationException(PREFIX + "source", "tandem.mirror.source '" + source
					+ "' is not a configured cluster.", "Use one of tandem.clusters " + clusters
							+ ", or add tandem.clusters." + source + ".bootstrap-servers.");
		}
		if (properties.getTargets().isEmpty()) {
			throw new TandemConfigurationException(PREFIX + "targets", "tandem.mirror.targets is empty.",
					"Set tandem.mirror.targets to one or more of tandem.clusters " + clusters + " other than the source.");
		}
		for (String target : properties.getTargets()) {
			if (!clusters.contains(target)) {
				throw new TandemConfigurationException(PREFIX + "targets", "tandem.mirror.targets names '" + target
						+ "', which is not a configured cluster.", "Use clusters of tandem.clusters " + clusters
								+ ", or add tandem.clusters." + target + ".bootstrap-servers.");
			}
		}
		if (properties.getDepth() >= tandem.getTransaction().getSlots()) {
			throw new TandemConfigurationException(PREFIX + "depth", "tandem.mirror.depth is " + properties.getDepth()
					+ " but tandem.transaction.slots is " + tandem.getTransaction().getSlots()
					+ "; the mirror needs one slot more than its depth (for transactions of translated offsets alone).",
					"Lower tandem.mirror.depth or raise tandem.transaction.slots to at least depth + 1.");
		}
		RemoteTopicNaming naming;
		try {
			naming = (properties.getNaming() == MirrorProperties.Naming.IDENTITY) ? RemoteTopicNaming.identity()
					: RemoteTopicNaming.prefixed(properties.getSeparator());
		}
		catch (IllegalArgumentException ex) {
			throw new TandemConfigurationException(PREFIX + "separator", ex.getMessage() + ".",
					"Set tandem.mirror.separator to, for example, '" + RemoteTopicNaming.DEFAULT_SEPARATOR
							+ "' (MirrorMaker 2's default).");
		}
		List<String> excludes = new ArrayList<>(properties.getExcludes());
		excludes.add(java.util.regex.Pattern.quote(tandem.getTransaction().getMarkerTopic()));
		MirrorSettings.Builder builder = MirrorSettings.builder(source, properties.getTargets())
			.topics(properties.getTopics())
			.topicPattern(properties.getTopicPattern())
			.excludes(excludes)
			.naming(naming)
			.groups(properties.getGroups())
			.groupPattern(properties.getGroupPattern())
			.groupSyncInterval(properties.getGroupSyncInterval())
			.replicationFactor(properties.getReplicationFactor())
			.copiedConfigs(properties.getCopiedConfigs())
			.topicRefreshInterval(properties.getTopicRefreshInterval())
			.maxRecords(properties.getMaxRecords())
			.maxInterval(properties.getMaxInterval())
			.depth(properties.getDepth())
			.growth(properties.getGrowth())
			.positions(properties.getPositions())
			.mappingCapacity(properties.getMappingCapacity())
			.rebuildRecords(properties.getRebuildRecords());
		if (properties.getConsumerGroup() != null) {
			builder.consumerGroup(properties.getConsumerGroup());
		}
		try {
			return builder.build();
		}
		catch (InvalidMirrorSettingException ex) {
			String property = PREFIX + ex.getSetting();
			if (ex.getSetting().equals("topics")) {
				throw new TandemConfigurationException(property, ex.getMessage() + ".",
						"Set tandem.mirror.topics (topic names) or tandem.mirror.topic-pattern (a regular expression), or both.");
			}
			// the builder's other messages begin with the setting, as in "max-records is 0: use 1 or more"
			throw new TandemConfigurationException(property, PREFIX + ex.getMessage() + ".",
					"Fix " + property + " as the message says.");
		}
	}

}
