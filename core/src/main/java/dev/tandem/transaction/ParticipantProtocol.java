package dev.tandem.transaction;

import java.time.Duration;
import java.util.Map;

import dev.tandem.transaction.Decision.ParticipantRecord;

/**
 * How recovery completes a participant's prepared Kafka transaction after its producer is gone.
 * Today: resume the transaction's producer id and epoch in a fresh producer and commit
 * ({@link ResumeByEpochProtocol}). The seam exists for KIP-939 ("2PC participation": prepared
 * transactions that never time out, {@code keepPreparedTxn}), whose public API is withdrawn
 * from Kafka 4.1 to 4.4 and whose broker side is unfinished.
 *
 * @since 0.1.0
 */
public interface ParticipantProtocol {

	/**
	 * Commits a decided participant's transaction, which may already be committed.
	 * @param participant the participant as captured at prepare time
	 * @param producerConfig client configuration of the participant's cluster (bootstrap servers,
	 *     security); the implementation adds the transactional id
	 * @param timeout how long to wait for the commit
	 * @return whether the commit succeeded; {@code false} if the broker refused it as fenced or
	 *     invalid (already committed and superseded, or aborted by the broker: check the marker)
	 * @throws org.apache.kafka.common.KafkaException on any other failure (retriable later)
	 */
	boolean commitPrepared(ParticipantRecord participant, Map<String, Object> producerConfig, Duration timeout);

}
