package dev.tandem.failover.internals;

import java.util.List;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LeaderSource} on {@code Producer.partitionsFor}: public API, leaders only, never on
 * the I/O thread (it may block while the topic is unknown). The fallback when the producer's
 * {@code Metadata} cannot be reached.
 *
 * @author Tandem
 */
final class PartitionsForLeaderSource implements LeaderSource {

	private final Producer<?, ?> producer;

	PartitionsForLeaderSource(Producer<?, ?> producer) {
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
				return (leader == null || leader.isEmpty()) ? new LeaderTerm(LeaderTerm.UNKNOWN, LeaderTerm.UNKNOWN, null)
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

	@Override
	public boolean metadataTimesKnown() {
		return false;
	}

	@Override
	public long lastMetadataUpdateMs() {
		return LeaderTerm.UNKNOWN;
	}

	@Override
	public boolean metadataUpdatePending() {
		return false;
	}

}
