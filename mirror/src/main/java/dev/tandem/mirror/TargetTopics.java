package dev.tandem.mirror;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the remote topics on every target as the source has them: a missing remote topic is
 * created with the source topic's partition count, the configured replication factor and the
 * configured configs copied from the source topic; a remote topic with fewer partitions than its
 * source gets more (before any record of a new partition is written). Target partition counts are
 * cached. Thread-safe.
 */
final class TargetTopics implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(TargetTopics.class);

	private final MirrorSettings settings;

	private final Admin source;

	private final Map<String, Admin> targets;

	private final Duration timeout;

	/** Source topic -> its id (its incarnation) when last described. */
	private final Map<String, Uuid> sourceTopicIds = new ConcurrentHashMap<>();

	/** target cluster -> remote topic -> partitions known to exist. */
	private final Map<String, Map<String, Integer>> partitions = new ConcurrentHashMap<>();

	TargetTopics(MirrorSettings settings, Admin source, Map<String, Admin> targets, Duration timeout) {
		this.settings = settings;
		this.source = source;
		this.targets = targets;
		this.timeout = timeout;
		settings.targets().forEach((target) -> this.partitions.put(target, new ConcurrentHashMap<>()));
	}

	/**
	 * Lists the selected source topics and brings every target in line.
	 * @return the selected source topics with their partition counts
	 * @throws MirrorException if a cluster does not answer or refuses
	 */
	Map<String, Integer> refresh() {
		Set<String> names = call(this.source.listTopics().names(), "list the topics of '" + this.settings.source() + "'");
		List<String> selected = names.stream().filter(this.settings.topics()::matches).sorted().toList();
		this.sourceTopicIds.keySet().retainAll(selected);
		Map<String, Integer> counts = new LinkedHashMap<>();
		if (!selected.isEmpty()) {
			ensure(selected).forEach(counts::put);
		}
		return counts;
	}

	/**
	 * Makes sure a target partition exists before a record is written to it.
	 * @param target the target cluster
	 * @param sourceTopic the source topic
	 * @param partition the partition about to be written
	 * @throws MirrorException if a cluster does not answer or refuses
	 */
	void ensurePartition(String target, String sourceTopic, int partition) {
		String remote = this.settings.naming().remoteTopic(this.settings.source(), sourceTopic);
		Integer known = this.partitions.get(target).get(remote);
		if (known == null || known <= partition) {
			ensure(List.of(sourceTopic));
		}
	}

	/**
	 * Returns the partitions of a remote topic known to exist on a target.
	 * @return the count, 0 if unknown
	 */
	int knownPartitions(String target, String remoteTopic) {
		return this.partitions.get(target).getOrDefault(remoteTopic, 0);
	}

	/**
	 * Returns the ids of the source topics as last described ({@link #refresh()} describes every
	 * selected topic): a topic deleted and created again has a new id.
	 * @return source topic -> topic id, a copy
	 */
	Map<String, Uuid> sourceTopicIds() {
		return Map.copyOf(this.sourceTopicIds);
	}

	/**
	 * Describes source topics now and returns their ids.
	 * @param sourceTopics the topics
	 * @return source topic -> topic id, for the topics that exist
	 * @throws MirrorException if the source does not answer or refuses
	 */
	Map<String, Uuid> describeSourceTopicIds(Collection<String> sourceTopics) {
		Map<String, Uuid> ids = new HashMap<>();
		describeSource(sourceTopics).forEach((name, description) -> ids.put(name, description.topicId()));
		return ids;
	}

	private Map<String, TopicDescription> describeSource(Collection<String> sourceTopics) {
		Map<String, TopicDescription> descriptions = call(this.source.describeTopics(sourceTopics).allTopicNames(),
				"describe topics " + sourceTopics + " of '" + this.settings.source() + "'");
		descriptions.forEach((name, description) -> this.sourceTopicIds.put(name, description.topicId()));
		return descriptions;
	}

	private synchronized Map<String, Integer> ensure(Collection<String> sourceTopics) {
		Map<String, TopicDescription> descriptions = describeSource(sourceTopics);
		Map<String, Integer> counts = new LinkedHashMap<>();
		descriptions.forEach((name, description) -> counts.put(name, description.partitions().size()));
		Map<String, Map<String, String>> configs = sourceConfigs(sourceTopics);
		for (String target : this.settings.targets()) {
			Admin admin = this.targets.get(target);
			Map<String, String> remoteToSource = new HashMap<>();
			counts.keySet().forEach((topic) -> remoteToSource.put(this.settings.naming().remoteTopic(this.settings.source(), topic), topic));
			Set<String> existing = call(admin.listTopics().names(), "list the topics of '" + target + "'");
			List<NewTopic> missing = new ArrayList<>();
			List<String> present = new ArrayList<>();
			remoteToSource.forEach((remote, topic) -> {
				if (existing.contains(remote)) {
					present.add(remote);
				}
				else {
					Optional<Short> replication = (this.settings.replicationFactor() == -1) ? Optional.empty()
							: Optional.of(this.settings.replicationFactor());
					missing.add(new NewTopic(remote, Optional.of(counts.get(topic)), replication)
						.configs(configs.getOrDefault(topic, Map.of())));
				}
			});
			for (NewTopic topic : missing) {
				try {
					call(admin.createTopics(List.of(topic)).all(), "create topic '" + topic.name() + "' on '" + target + "'");
					logger.info("Mirror {}->{}: created topic '{}' with {} partitions, configs {}", this.settings.source(),
							target, topic.name(), topic.numPartitions(), topic.configs());
				}
				catch (MirrorException ex) {
					if (!(ex.getCause() instanceof TopicExistsException)) {
						throw ex;
					}
					present.add(topic.name());
				}
				this.partitions.get(target).put(topic.name(), topic.numPartitions());
			}
			if (!present.isEmpty()) {
				Map<String, TopicDescription> remotes = call(admin.describeTopics(present).allTopicNames(),
						"describe topics " + present + " of '" + target + "'");
				remotes.forEach((remote, description) -> {
					int have = description.partitions().size();
					int want = counts.get(remoteToSource.get(remote));
					if (have < want) {
						try {
							call(admin.createPartitions(Map.of(remote, NewPartitions.increaseTo(want))).all(),
									"add partitions to '" + remote + "' on '" + target + "'");
							logger.info("Mirror {}->{}: topic '{}' grew from {} to {} partitions, as its source did",
									this.settings.source(), target, remote, have, want);
						}
						catch (MirrorException ex) {
							if (!(ex.getCause() instanceof InvalidPartitionsException)) {
								throw ex;
							}
						}
						have = want;
					}
					this.partitions.get(target).put(remote, have);
				});
			}
		}
		return counts;
	}

	private Map<String, Map<String, String>> sourceConfigs(Collection<String> topics) {
		if (this.settings.copiedConfigs().isEmpty()) {
			return Map.of();
		}
		List<ConfigResource> resources = topics.stream()
			.map((topic) -> new ConfigResource(ConfigResource.Type.TOPIC, topic))
			.toList();
		Map<ConfigResource, Config> described = call(this.source.describeConfigs(resources).all(),
				"describe the configs of " + topics + " on '" + this.settings.source() + "'");
		Map<String, Map<String, String>> configs = new HashMap<>();
		described.forEach((resource, config) -> {
			Map<String, String> copied = new LinkedHashMap<>();
			for (String name : this.settings.copiedConfigs()) {
				ConfigEntry entry = config.get(name);
				// Only what was set on the topic itself; broker defaults stay the target's own.
				if (entry != null && entry.value() != null
						&& entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG) {
					copied.put(name, entry.value());
				}
			}
			configs.put(resource.name(), copied);
		});
		return configs;
	}

	private <T> T call(org.apache.kafka.common.KafkaFuture<T> future, String what) {
		return KafkaCalls.get(future, this.timeout, what);
	}

	@Override
	public void close() {
		this.source.close(Duration.ofSeconds(1));
		this.targets.values().forEach((admin) -> admin.close(Duration.ofSeconds(1)));
	}

}
