package dev.tandem.failover.internals;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;

import org.apache.kafka.clients.Metadata;
import org.apache.kafka.clients.MetadataSnapshot;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link LeaderSource} that reads the client's {@code Metadata} (see there for why).
 *
 * @author Tandem
 */
final class MetadataLeaderSource implements LeaderSource {

	private static final Logger logger = LoggerFactory.getLogger(MetadataLeaderSource.class);

	private static final int MAX_DEPTH = 4;

	private final Metadata metadata;

	MetadataLeaderSource(Metadata metadata) {
		this.metadata = Objects.requireNonNull(metadata);
		// fail here, not on the I/O thread, if the methods used are gone
		snapshotOf(this.metadata.fetchMetadataSnapshot());
		this.metadata.lastSuccessfulUpdate();
		this.metadata.updateRequested();
	}

	/**
	 * Return a source for the client's metadata, or {@code null} (with a warning) if it
	 * cannot be reached.
	 */
	static @Nullable MetadataLeaderSource of(Object client) {
		try {
			Metadata metadata = find(client, 0);
			return (metadata != null) ? new MetadataLeaderSource(metadata) : null;
		}
		catch (RuntimeException | LinkageError ex) {
			logger.warn("Cannot read the metadata of Kafka client {}; the leader cache falls back to public API "
					+ "without leader epochs", client.getClass().getName(), ex);
			return null;
		}
	}

	private static @Nullable Metadata find(Object target, int depth) {
		if (depth > MAX_DEPTH) {
			return null;
		}
		List<Object> delegates = new ArrayList<>();
		for (Class<?> type = target.getClass(); type != null && type != Object.class; type = type.getSuperclass()) {
			for (Field field : type.getDeclaredFields()) {
				if (Modifier.isStatic(field.getModifiers())) {
					continue;
				}
				boolean metadataField = Metadata.class.isAssignableFrom(field.getType());
				boolean delegateField = Producer.class.isAssignableFrom(field.getType())
						|| Consumer.class.isAssignableFrom(field.getType())
						|| field.getType().getName().endsWith("ConsumerDelegate");
				if (!metadataField && !delegateField) {
					continue;
				}
				Object value = read(field, target);
				if (value instanceof Metadata metadata) {
					return metadata;
				}
				if (value != null && value != target) {
					delegates.add(value);
				}
			}
		}
		for (Object delegate : delegates) {
			Metadata metadata = find(delegate, depth + 1);
			if (metadata != null) {
				return metadata;
			}
		}
		return null;
	}

	private static @Nullable Object read(Field field, Object target) {
		try {
			field.setAccessible(true);
			return field.get(target);
		}
		catch (IllegalAccessException ex) {
			throw new IllegalStateException("Cannot read " + field, ex);
		}
	}

	private static MetadataSnapshot snapshotOf(Object version) {
		return (MetadataSnapshot) version;
	}

	@Override
	public Object version() {
		return this.metadata.fetchMetadataSnapshot();
	}

	@Override
	public @Nullable LeaderTerm leader(Object version, TopicPartition partition) {
		MetadataSnapshot snapshot = snapshotOf(version);
		Cluster cluster = snapshot.cluster();
		PartitionInfo info = cluster.partition(partition);
		if (info == null) {
			return null;
		}
		OptionalInt epoch = snapshot.leaderEpochFor(partition);
		Node leader = info.leader();
		if (leader == null || leader.isEmpty()) {
			return new LeaderTerm(LeaderTerm.UNKNOWN, epoch.orElse(LeaderTerm.UNKNOWN), null);
		}
		return new LeaderTerm(leader.id(), epoch.orElse(LeaderTerm.UNKNOWN), leader);
	}

	@Override
	public List<Integer> partitions(Object version, String topic) {
		List<PartitionInfo> infos = snapshotOf(version).cluster().partitionsForTopic(topic);
		List<Integer> partitions = new ArrayList<>(infos.size());
		for (PartitionInfo info : infos) {
			partitions.add(info.partition());
		}
		return partitions;
	}

	@Override
	public boolean hotPathSafe() {
		return true;
	}

	@Override
	public boolean epochs() {
		return true;
	}

	@Override
	public boolean metadataTimesKnown() {
		return true;
	}

	@Override
	public long lastMetadataUpdateMs() {
		long last = this.metadata.lastSuccessfulUpdate();
		return (last > 0) ? last : LeaderTerm.UNKNOWN;
	}

	@Override
	public boolean metadataUpdatePending() {
		return this.metadata.updateRequested();
	}

}
