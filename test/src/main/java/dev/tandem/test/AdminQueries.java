package dev.tandem.test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * Admin calls shared by {@link EmbeddedKafkaCluster}, {@link KafkaProcessCluster} and
 * {@link LeadershipMoves}: waiting for a result, turning every failure into an
 * {@link EmbeddedKafkaClusterException} that names the action and the cluster, and reading
 * partition leaders and replicas.
 *
 * @author Tandem
 */
final class AdminQueries {

	private AdminQueries() {
	}

	static <T> T get(KafkaFuture<T> future, Duration timeout, String cluster, Supplier<String> action) {
		try {
			return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new EmbeddedKafkaClusterException(
					"Interrupted while trying to " + action.get() + " on cluster '" + cluster + "'", ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			throw new EmbeddedKafkaClusterException(
					"Failed to " + action.get() + " on cluster '" + cluster + "': " + cause.getMessage(), cause);
		}
		catch (TimeoutException ex) {
			throw new EmbeddedKafkaClusterException("Timed out after " + timeout.toMillis() + " ms trying to "
					+ action.get() + " on cluster '" + cluster + "'", ex);
		}
	}

	static TopicDescription describeTopic(Admin admin, Duration timeout, String cluster, String topic) {
		return get(admin.describeTopics(List.of(topic)).allTopicNames(), timeout, cluster,
				() -> "describe topic '" + topic + "'")
			.get(topic);
	}

	static TopicPartitionInfo partitionInfo(Admin admin, Duration timeout, String cluster, TopicPartition partition) {
		return describeTopic(admin, timeout, cluster, partition.topic()).partitions()
			.stream()
			.filter((info) -> info.partition() == partition.partition())
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("Topic '" + partition.topic() + "' on cluster '" + cluster
					+ "' has no partition " + partition.partition()));
	}

	/**
	 * Return the leader's broker id, or {@link EmbeddedKafkaCluster#NO_LEADER}.
	 */
	static int leaderId(TopicPartitionInfo info) {
		Node leader = info.leader();
		return (leader == null || leader.isEmpty()) ? EmbeddedKafkaCluster.NO_LEADER : leader.id();
	}

	static List<Integer> ids(List<Node> nodes) {
		return nodes.stream().map(Node::id).toList();
	}

}
