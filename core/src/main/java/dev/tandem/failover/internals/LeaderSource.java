package dev.tandem.failover.internals;

import java.util.List;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Where Tandem's leader caches ({@code dev.tandem.failover.LeaderCache}) read partition
 * leaders from: the Kafka client's own cached metadata, never the network.
 * <p>
 * <b>Why the client's {@code Metadata} object.</b> Public kafka-clients API offers leaders
 * ({@code partitionsFor}: a {@code PartitionInfo} per partition) but no leader epochs, and
 * {@code Admin.describeTopics} has no epochs either ({@code TopicPartitionInfo}, 4.1.2);
 * {@code ListOffsets} has them but costs a broker round trip. The client itself keeps both in
 * {@code org.apache.kafka.clients.Metadata}: {@code fetchMetadataSnapshot()} is an
 * unsynchronized read of a {@code volatile} immutable {@code MetadataSnapshot} that the client
 * replaces on every metadata update, including the KIP-951 leader updates taken from produce
 * and fetch responses; {@code MetadataSnapshot.cluster().leaderFor(tp)} and
 * {@code leaderEpochFor(tp)} are map look-ups. So the hot path (one call per acknowledged
 * record, on the producer's I/O thread) costs a volatile read and an identity comparison when
 * nothing changed, and two hash look-ups when something did. The only non-public step is
 * reaching the {@code Metadata} instance: a private field of {@code KafkaProducer}, and of the
 * {@code ConsumerDelegate} behind {@code KafkaConsumer}. It is found once, when a cache is
 * bound, by the field's type (so wrappers such as Spring's {@code CloseSafeProducer} are
 * followed through their {@code delegate} field), and {@code LeaderSourceTests} fails loudly
 * if a kafka-clients upgrade breaks it.
 * <p>
 * If the field cannot be found, producers fall back to {@code Producer.partitionsFor}
 * (public, thread-safe, answered from the same cached metadata for topics the producer
 * already uses; leaders without epochs, read only on refresh) and consumers to the leader
 * epochs carried by fetched records ({@code KafkaConsumer} is not thread-safe, so it is never
 * called from outside): {@link #forConsumer} then returns {@code null}.
 * <p>
 * Implementations are thread-safe.
 *
 * @author Tandem
 * @since 0.1.0
 */
public interface LeaderSource {

	/**
	 * Return an object identifying the client's current metadata; a later call returning the
	 * same instance means nothing changed.
	 * @return the metadata version, compared by identity
	 */
	Object version();

	/**
	 * Return the leader of a partition in the metadata identified by {@code version}.
	 * @param version a value returned by {@link #version()}
	 * @param partition the partition
	 * @return the leader, or {@code null} if the metadata does not know the partition
	 */
	@Nullable LeaderTerm leader(Object version, TopicPartition partition);

	/**
	 * Return the partition numbers of a topic in the metadata identified by {@code version}.
	 * @param version a value returned by {@link #version()}
	 * @param topic the topic
	 * @return the partition numbers, empty if the topic is unknown
	 */
	List<Integer> partitions(Object version, String topic);

	/**
	 * Return whether {@link #leader} may be called on the client's I/O thread for every
	 * acknowledgement (cheap and non-blocking).
	 * @return whether hot-path safe
	 */
	boolean hotPathSafe();

	/**
	 * Return whether leader epochs are known.
	 * @return whether {@link LeaderTerm#leaderEpoch()} can be other than
	 * {@link LeaderTerm#UNKNOWN}
	 */
	boolean epochs();

	/**
	 * Return whether {@link #lastMetadataUpdateMs()} and {@link #metadataUpdatePending()}
	 * report the client's real state.
	 * @return whether metadata update times are known
	 */
	boolean metadataTimesKnown();

	/**
	 * Return when the client last received metadata from a broker: the time of its last
	 * successful metadata update ({@code Metadata.lastSuccessfulUpdate()}).
	 * @return ms since the epoch, or {@link LeaderTerm#UNKNOWN} if the client has had none
	 * yet or this source cannot tell
	 */
	long lastMetadataUpdateMs();

	/**
	 * Return whether the client has asked for a metadata update that no broker has answered
	 * yet ({@code Metadata.updateRequested()}): after a disconnect, an unknown leader or a
	 * rebootstrap (KIP-899).
	 * @return whether an update is pending; {@code false} if this source cannot tell
	 */
	boolean metadataUpdatePending();

	/**
	 * Find the best source for a producer: its {@code Metadata}, else
	 * {@code Producer.partitionsFor}.
	 * @param producer a {@code KafkaProducer}, or a wrapper with a {@code Producer} field
	 * @return the source, never {@code null}
	 */
	static LeaderSource forProducer(Producer<?, ?> producer) {
		LeaderSource source = MetadataLeaderSource.of(producer);
		return (source != null) ? source : new PartitionsForLeaderSource(producer);
	}

	/**
	 * Find the best source for a consumer: its {@code Metadata}.
	 * @param consumer a {@code KafkaConsumer}, or a wrapper with a {@code Consumer} field
	 * @return the source, or {@code null} if only fetched records can tell
	 */
	static @Nullable LeaderSource forConsumer(Consumer<?, ?> consumer) {
		return MetadataLeaderSource.of(consumer);
	}

	/**
	 * A leader as one metadata version reports it.
	 *
	 * @param leaderId the leader's broker id, or {@link #UNKNOWN} if the partition has no leader
	 * @param leaderEpoch the leader epoch, or {@link #UNKNOWN} if unknown
	 * @param node the leader's endpoint, or {@code null} if it has none
	 * @since 0.1.0
	 */
	record LeaderTerm(int leaderId, int leaderEpoch, @Nullable Node node) {

		/**
		 * Value of an unknown leader id, leader epoch or time.
		 */
		public static final int UNKNOWN = -1;

	}

}
