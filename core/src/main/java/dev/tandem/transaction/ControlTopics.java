package dev.tandem.transaction;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.ClusterClients;
import dev.tandem.text.DurationText;

/**
 * Creates Tandem's control topics on a cluster where they are missing (start-up housekeeping), each
 * with one partition and replication factor 3 (or the broker count if lower): the marker topic
 * (7 days of retention) and the instance topic of {@link KafkaInstanceGuard} (compacted).
 */
final class ControlTopics {

	private static final Logger logger = LoggerFactory.getLogger(ControlTopics.class);

	private static final Duration RETENTION = Duration.ofDays(7);

	private ControlTopics() {
	}

	/**
	 * Creates the marker topic on the cluster unless it exists, with a partition per broker, so
	 * that a marker can be placed on a partition led by its first record's broker
	 * ({@link MarkerPlacement}). An existing topic is left as it is.
	 * @throws TandemException if the cluster does not answer within the timeout or refuses
	 */
	static void ensureMarkerTopic(ClusterClients clients, String cluster, String topic, Duration timeout) {
		ensure(clients, cluster, topic, Map.of("retention.ms", String.valueOf(RETENTION.toMillis())), "marker", true,
				timeout);
	}

	/**
	 * Creates the instance topic on the cluster unless it exists: compacted, so it keeps the last
	 * heartbeat of every instance id.
	 * @throws TandemException if the cluster does not answer within the timeout or refuses
	 */
	static void ensureInstanceTopic(ClusterClients clients, String cluster, String topic, Duration timeout) {
		ensure(clients, cluster, topic, Map.of("cleanup.policy", "compact", "segment.ms",
				String.valueOf(Duration.ofHours(1).toMillis())), "instance", false, timeout);
	}

	private static void ensure(ClusterClients clients, String cluster, String topic, Map<String, String> configs,
			String kind, boolean partitionPerBroker, Duration timeout) {
		Admin admin = clients.admin(cluster, timeout);
		try {
			if (admin.listTopics().names().get(timeout.toMillis(), TimeUnit.MILLISECONDS).contains(topic)) {
				return;
			}
			int brokers = admin.describeCluster().nodes().get(timeout.toMillis(), TimeUnit.MILLISECONDS).size();
			int partitions = partitionPerBroker ? Math.max(1, brokers) : 1;
			NewTopic newTopic = new NewTopic(topic, partitions, (short) Math.min(3, brokers)).configs(configs);
			admin.createTopics(List.of(newTopic)).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
			logger.info("Created {} topic '{}' on cluster '{}'", kind, topic, cluster);
		}
		catch (ExecutionException ex) {
			if (!(ex.getCause() instanceof TopicExistsException)) {
				throw new TandemException("Could not create " + kind + " topic '" + topic + "' on cluster '" + cluster
						+ "': " + ex.getCause(), ex.getCause());
			}
		}
		catch (TimeoutException ex) {
			throw new TandemException("Cluster '" + cluster + "' (" + clients.bootstrapServers(cluster)
					+ ") did not answer within " + DurationText.of(timeout), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted", ex);
		}
		finally {
			admin.close(Duration.ofSeconds(1));
		}
	}

}
