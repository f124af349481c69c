package dev.tandem.autoconfigure.transaction;

import org.apache.kafka.clients.consumer.ConsumerRecord;

import dev.tandem.autoconfigure.TandemProperties.Listener.FailedRecordAction;

/**
 * A listener record failed every attempt and {@code tandem.listener.failed-record} is
 * {@link FailedRecordAction#STOP}: Tandem's listener containers stop on it. Fatal for the
 * container; its offset is not committed, so the record is delivered again when the container
 * is started (fix the cause first, or configure a dead-letter topic). Records of the same batch
 * before it were committed; those after it were not.
 *
 * @since 0.1.0
 */
public class FailedRecordException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String topic;

	private final int partition;

	private final long offset;

	private final int attempts;

	/**
	 * Creates the exception.
	 * @param record the record
	 * @param attempts how often it was processed
	 * @param cause the last failure
	 */
	public FailedRecordException(ConsumerRecord<?, ?> record, int attempts, Throwable cause) {
		super("Record " + record.topic() + "-" + record.partition() + "@" + record.offset() + " failed " + attempts
				+ " attempt(s); stopping the listener container with its offset uncommitted (set "
				+ "tandem.listener.failed-record=dead-letter to publish such records to a dead-letter topic instead)",
				cause);
		this.topic = record.topic();
		this.partition = record.partition();
		this.offset = record.offset();
		this.attempts = attempts;
	}

	/**
	 * Returns how often the record was processed before it was given up.
	 * @return the attempts, at least 1
	 */
	public int getAttempts() {
		return this.attempts;
	}

	/**
	 * Returns the record's topic.
	 * @return the topic
	 */
	public String getTopic() {
		return this.topic;
	}

	/**
	 * Returns the record's partition.
	 * @return the partition
	 */
	public int getPartition() {
		return this.partition;
	}

	/**
	 * Returns the record's offset.
	 * @return the offset
	 */
	public long getOffset() {
		return this.offset;
	}

}
