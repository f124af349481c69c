package dev.tandem.failover;

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
 * Where a {@link LeaderCache} reads partition leaders from: the client's own metadata, never
 * the network.
 * <p>
 * <b>Why the client's {@code Metadata} object.</b> Public kafka-clients API offers leaders
 * ({@code partitionsFor}: a {@code PartitionInfo} per partition) but no leader epochs, and
 * {@code Admin.describeTopics} has no epochs either ({@code TopicPartitionInfo}, 4.1.2);
 * {@code ListOffsets} has them but costs a broker round trip. The client itself keeps both in
 * {@code org.apache.kafka.clients.Metadata}: {@code fetchMetadataSnapshot()} is an
 * unsynchronized read of a {@code volatile} immutable {@code MetadataSnapshot} that the client
 * replaces on every metadata update, including the KIP-951 leader updates taken from
 * produce and fetch responses; {@code MetadataSnapshot.cluster().leaderFor(tp)} and
 * {@code leaderEpochFor(tp)} are map look-ups. So the hot path (one call per acknowledged
 * record, on the producer's I/O thread) costs a volatile read and an identity comparison
 * when nothing changed, and two hash look-ups when something did. The only non-public step
 * is reaching the {@code Metadata} instance: a private field of {@code KafkaProducer}, and
 * of the {@code ConsumerDelegate} behind {@code KafkaConsumer}. It is found once, at
 * {@link LeaderCacheRegistry#bind bind} time, by the field's type (so wrappers such as
 * Spring's {@code CloseSafeProducer} are followed through their {@code delegate} field), and
 * {@code LeaderSourceTests} fails loudly if a kafka-clients upgrade breaks it.
 * <p>
 * If the field cannot be found, producers fall back to {@code Producer.partitionsFor}
 * (public, thread-safe, answered from the same cached metadata for topics the producer
 * already uses; leaders without epochs, read only on {@link LeaderCache#refresh()}) and
 * consumers to the leader epochs carried by fetched records ({@code KafkaConsumer} is not
 * thread-safe, so it is never called from outside).
 * <p>
 * Implementations are thread-safe.
 *
 * @author Tandem
 */
interface LeaderSource {

	/**
	 * Return an object identifying the client's current metadata; a later call returning
	 * the same instance means nothing changed.
	 */
	Object version();

	/**
	 * Return the leader of a partition in the metadata identified by {@code version}, or
	 * {@code null} if the metadata does not know the partition.
	 */
	@Nullable LeaderTerm leader(Object version, TopicPartition partition);

	/**
	 * Return the partition numbers of a topic in that metadata, empty if unknown.
	 */
	List<Integer> partitions(Object version, String topic);

	/**
	 * Whether {@link #leader} may be called on the client's I/O thread for every
	 * acknowledgement (cheap and non-blocking).
	 */
	boolean hotPathSafe();

	/**
	 * Whether leader epochs are known.
	 */
	boolean epochs();

	/**
	 * Find the best source for a producer.
	 */
	static LeaderSource forProducer(Producer<?, ?> producer) {
		Metadata metadata = MetadataSource.find(producer);
		if (metadata != null) {
			return new MetadataSource(metadata);
		}
		return new PartitionsForSource(producer);
	}

	/**
	 * Find the best source for a consumer, or {@code null} if only fetched records can tell.
	 */
	static @Nullable LeaderSource forConsumer(Consumer<?, ?> consumer) {
		Metadata metadata = MetadataSource.find(consumer);
		return (metadata != null) ? new MetadataSource(metadata) : null;
	}

	/**
	 * A leader as one metadata version reports it.
	 *
	 * @param leaderId the leader's broker id, or {@code -1} if the partition has no leader
	 * @param leaderEpoch the leader epoch, or {@code -1} if unknown
	 * @param node the leader's endpoint, or {@code null} if it has none
	 */
	record LeaderTerm(int leaderId, int leaderEpoch, @Nullable Node node) {

		static final int UNKNOWN = -1;

	}

	/**
	 * Reads the client's {@code Metadata}.
	 */
	final class MetadataSource implements LeaderSource {

		private static final Logger logger = LoggerFactory.getLogger(MetadataSource.class);

		private static final int MAX_DEPTH = 4;

		private final Metadata metadata;

		MetadataSource(Metadata metadata) {
			this.metadata = Objects.requireNonNull(metadata);
			// fail here, not on the I/O thread, if the methods used are gone
			snapshotOf(this.metadata.fetchMetadataSnapshot());
		}

		static @Nullable Metadata find(Object client) {
			try {
				return find(client, 0);
			}
			catch (RuntimeException | LinkageError ex) {
				logger.warn("Cannot read the metadata of Kafka client {}; the leader cache falls back to public API "
						+ "without leader epochs", client.getClass().getName(), ex);
				return null;
			}
		}

		private static @Nullable Metadata find(Object target, int depth) throws RuntimeException {
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

	}

	/**
	 * Reads {@code Producer.partitionsFor}: public API, leaders only, never on the I/O thread
	 * (it may block while the topic is unknown).
	 */
	final class PartitionsForSource implements LeaderSource {

		private final Producer<?, ?> producer;

		PartitionsForSource(Producer<?, ?> producer) {
			this.producer = producer;
		}

		@Override
		public Object version() {
			return new Object();
		}

		@Override
		public @Nullable LeaderTerm leader(Object version, TopicPartition partition) {
			for (PartitionInfo info : this.producer.partitionsFor(partition.topic())) {
				if (info.partition() == partition.partition()) {
					Node leader = info.leader();
					return (leader == null || leader.isEmpty())
							? new LeaderTerm(LeaderTerm.UNKNOWN, LeaderTerm.UNKNOWN, null)
							: new LeaderTerm(leader.id(), LeaderTerm.UNKNOWN, leader);
				}
			}
			return null;
		}

		@Override
		public List<Integer> partitions(Object version, String topic) {
			return this.producer.partitionsFor(topic).stream().map(PartitionInfo::partition).toList();
		}

		@Override
		public boolean hotPathSafe() {
			return false;
		}

		@Override
		public boolean epochs() {
			return false;
		}

	}

}
