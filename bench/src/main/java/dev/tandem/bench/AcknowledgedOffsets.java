package dev.tandem.bench;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The bookkeeping of the best at-least-once copy a user would write (issue 25): poll, send every
 * record, and commit with {@code commitAsync} the offsets of every poll whose records the target
 * has all acknowledged, with no {@code flush()} per poll. The copy never commits an offset past a
 * record not yet written (no loss if it crashes; records sent after the last commit are copied
 * again), and never waits for the target in its loop. The polls are kept in order: a poll's
 * offsets become committable once it and every poll before it are acknowledged.
 * <p>
 * {@link #add} and {@link #takeAcknowledged} are called by the copying thread; the callbacks
 * run on the producer's I/O thread.
 *
 * @since 0.1.0
 */
public final class AcknowledgedOffsets {

	private final Deque<Poll> polls = new ArrayDeque<>();

	private final AtomicReference<@Nullable Exception> failure = new AtomicReference<>();

	/**
	 * Registers a poll's records before they are sent.
	 * @param records the poll's records, not empty
	 * @return the callback to pass to every send of these records
	 */
	public Callback add(ConsumerRecords<?, ?> records) {
		Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
		for (TopicPartition partition : records.partitions()) {
			List<? extends ConsumerRecord<?, ?>> list = records.records(partition);
			next.put(partition, new OffsetAndMetadata(list.get(list.size() - 1).offset() + 1));
		}
		Poll poll = new Poll(next, new AtomicInteger(records.count()));
		this.polls.add(poll);
		return (metadata, ex) -> {
			if (ex != null) {
				this.failure.compareAndSet(null, ex);
			}
			else {
				poll.unacknowledged().decrementAndGet();
			}
		};
	}

	/**
	 * Returns the first send failure, if any (its poll never becomes committable).
	 * @return the failure or {@code null}
	 */
	public @Nullable Exception failure() {
		return this.failure.get();
	}

	/**
	 * Takes the polls acknowledged so far, in order, up to the first one still waiting.
	 * @return their offsets merged (the latest per partition) and how many polls they were
	 */
	public Acknowledged takeAcknowledged() {
		Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
		int taken = 0;
		while (!this.polls.isEmpty() && this.polls.peekFirst().unacknowledged().get() == 0) {
			offsets.putAll(this.polls.pollFirst().next());
			taken++;
		}
		return new Acknowledged(offsets, taken);
	}

	/**
	 * Returns how many polls still wait for an acknowledgement.
	 * @return polls in flight
	 */
	public int pending() {
		return this.polls.size();
	}

	/**
	 * Offsets that may be committed.
	 * @param offsets next offset to consume per partition; empty if {@code polls} is 0
	 * @param polls how many polls they cover
	 */
	public record Acknowledged(Map<TopicPartition, OffsetAndMetadata> offsets, int polls) {
	}

	private record Poll(Map<TopicPartition, OffsetAndMetadata> next, AtomicInteger unacknowledged) {
	}

}
