package dev.tandem.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves partition leadership the way an operator would, for {@link EmbeddedKafkaCluster} and
 * {@link KafkaProcessCluster}: reorder each partition's replicas with
 * {@code Admin.alterPartitionReassignments} so that the target broker is first (the same
 * replica set, so no data moves), then run preferred leader elections until the cluster
 * reports the targets as leaders and the cluster-specific check agrees (for in-process
 * brokers: every running broker's metadata cache).
 *
 * @author Tandem
 */
final class LeadershipMoves {

	private static final Logger logger = LoggerFactory.getLogger(LeadershipMoves.class);

	private final String cluster;

	private final Duration timeout;

	private final Supplier<Admin> admin;

	private final BiPredicate<TopicPartition, Integer> leaderSeenEverywhere;

	/**
	 * @param cluster the cluster name, for messages
	 * @param timeout how long each step may take
	 * @param admin the cluster's admin client
	 * @param leaderSeenEverywhere an extra check that a partition's new leader is known
	 * wherever it matters, called once the cluster reports it
	 */
	LeadershipMoves(String cluster, Duration timeout, Supplier<Admin> admin,
			BiPredicate<TopicPartition, Integer> leaderSeenEverywhere) {
		this.cluster = cluster;
		this.timeout = timeout;
		this.admin = admin;
		this.leaderSeenEverywhere = leaderSeenEverywhere;
	}

	/**
	 * Move every partition of a topic to the next in-sync replica after its current leader,
	 * in replica order; all partitions together, with one reassignment and one election.
	 */
	Map<TopicPartition, Integer> moveTopic(String topic) {
		for (TopicPartitionInfo info : describe(List.of(topic)).get(topic).partitions()) {
			if (info.replicas().size() < 2) {
				throw new IllegalArgumentException("Cannot move the leadership of topic '" + topic + "' on cluster '"
						+ this.cluster + "': partition " + info.partition() + " has a single replica");
			}
		}
		Map<TopicPartition, Integer> targets = new LinkedHashMap<>();
		Awaits.until(this.timeout, () -> "every partition of topic '" + topic + "' on cluster '" + this.cluster
				+ "' has a leader and another in-sync replica", () -> {
					targets.clear();
					for (TopicPartitionInfo info : describe(List.of(topic)).get(topic).partitions()) {
						Optional<Integer> next = nextInSyncReplica(info);
						if (next.isEmpty()) {
							return false;
						}
						targets.put(new TopicPartition(topic, info.partition()), next.get());
					}
					return true;
				});
		move(targets);
		return Collections.unmodifiableMap(targets);
	}

	/**
	 * Make the given brokers the leaders of the given partitions.
	 */
	void move(Map<TopicPartition, Integer> targets) {
		long started = System.nanoTime();
		Set<String> topics = targets.keySet().stream().map(TopicPartition::topic).collect(Collectors.toSet());
		Map<TopicPartition, TopicPartitionInfo> current = describePartitions(topics);
		Map<TopicPartition, List<Integer>> reorderedReplicas = new LinkedHashMap<>();
		targets.forEach((partition, target) -> {
			TopicPartitionInfo info = current.get(partition);
			if (info == null) {
				throw new IllegalArgumentException("Topic '" + partition.topic() + "' on cluster '" + this.cluster
						+ "' has no partition " + partition.partition());
			}
			List<Integer> replicas = ids(info.replicas());
			if (!replicas.contains(target)) {
				throw new IllegalArgumentException("Broker " + target + " is not a replica of " + partition
						+ " on cluster '" + this.cluster + "' (replicas " + replicas + ")");
			}
			List<Integer> reordered = new ArrayList<>(replicas.size());
			reordered.add(target);
			replicas.stream().filter((id) -> !id.equals(target)).forEach(reordered::add);
			if (!reordered.equals(replicas)) {
				reorderedReplicas.put(partition, reordered);
			}
		});
		if (!reorderedReplicas.isEmpty()) {
			Map<TopicPartition, Optional<NewPartitionReassignment>> reassignments = new LinkedHashMap<>();
			reorderedReplicas.forEach((partition, replicas) -> reassignments.put(partition,
					Optional.of(new NewPartitionReassignment(replicas))));
			get(this.admin.get().alterPartitionReassignments(reassignments).all(),
					() -> "reorder the replicas of " + reorderedReplicas);
			Awaits.until(this.timeout,
					() -> "the replicas of " + reorderedReplicas.keySet() + " on cluster '" + this.cluster
							+ "' are reordered",
					() -> {
						if (!get(this.admin.get().listPartitionReassignments(reorderedReplicas.keySet()).reassignments(),
								() -> "list partition reassignments")
							.isEmpty()) {
							return false;
						}
						Map<TopicPartition, TopicPartitionInfo> infos = describePartitions(topics);
						return reorderedReplicas.entrySet()
							.stream()
							.allMatch((entry) -> ids(infos.get(entry.getKey()).replicas()).equals(entry.getValue()));
					});
		}
		Awaits.until(this.timeout,
				() -> "the leaders of " + targets + " on cluster '" + this.cluster + "' are elected",
				() -> electPreferredLeaders(targets, topics));
		logger.info("Moved leadership of {} partitions on cluster '{}' in {} ms", targets.size(), this.cluster,
				Duration.ofNanos(System.nanoTime() - started).toMillis());
	}

	/**
	 * One round of the preferred election: {@code true} when the cluster reports every target
	 * leader and the extra check agrees; otherwise elects those that still differ and returns
	 * {@code false}.
	 */
	private boolean electPreferredLeaders(Map<TopicPartition, Integer> targets, Set<String> topics) {
		Map<TopicPartition, TopicPartitionInfo> infos = describePartitions(topics);
		Set<TopicPartition> toElect = targets.keySet()
			.stream()
			.filter((partition) -> leaderId(infos.get(partition)) != targets.get(partition))
			.collect(Collectors.toSet());
		if (toElect.isEmpty()) {
			return targets.entrySet()
				.stream()
				.allMatch((entry) -> this.leaderSeenEverywhere.test(entry.getKey(), entry.getValue()));
		}
		Map<TopicPartition, Optional<Throwable>> results = get(
				this.admin.get().electLeaders(ElectionType.PREFERRED, toElect).partitions(),
				() -> "elect the preferred leaders of " + toElect);
		for (Map.Entry<TopicPartition, Optional<Throwable>> result : results.entrySet()) {
			Throwable error = result.getValue().orElse(null);
			if (error != null && !(error instanceof ElectionNotNeededException)) {
				throw new EmbeddedKafkaClusterException("Preferred leader election of " + result.getKey()
						+ " on cluster '" + this.cluster + "' failed, will retry", error);
			}
		}
		return false;
	}

	private static Optional<Integer> nextInSyncReplica(TopicPartitionInfo info) {
		int leader = leaderId(info);
		List<Integer> replicas = ids(info.replicas());
		List<Integer> isr = ids(info.isr());
		int leaderIndex = replicas.indexOf(leader);
		if (leader == EmbeddedKafkaCluster.NO_LEADER || leaderIndex < 0) {
			return Optional.empty();
		}
		for (int i = 1; i < replicas.size(); i++) {
			Integer candidate = replicas.get((leaderIndex + i) % replicas.size());
			if (isr.contains(candidate)) {
				return Optional.of(candidate);
			}
		}
		return Optional.empty();
	}

	private Map<String, TopicDescription> describe(Collection<String> topics) {
		return get(this.admin.get().describeTopics(topics).allTopicNames(), () -> "describe topics " + topics);
	}

	private Map<TopicPartition, TopicPartitionInfo> describePartitions(Collection<String> topics) {
		Map<TopicPartition, TopicPartitionInfo> infos = new HashMap<>();
		describe(topics).forEach((topic, description) -> description.partitions()
			.forEach((info) -> infos.put(new TopicPartition(topic, info.partition()), info)));
		return infos;
	}

	private static int leaderId(TopicPartitionInfo info) {
		return AdminQueries.leaderId(info);
	}

	private static List<Integer> ids(List<Node> nodes) {
		return AdminQueries.ids(nodes);
	}

	private <T> T get(KafkaFuture<T> future, Supplier<String> action) {
		return AdminQueries.get(future, this.timeout, this.cluster, action);
	}

}
