package dev.tandem.bench.throughput;

import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * One contender's copy of the source topics to a target topic, started once per round and
 * stopped when the reader has seen everything.
 *
 * @since 0.1.0
 */
interface Copier extends AutoCloseable {

	/**
	 * Starts copying on the copier's own thread(s); returns at once.
	 * @param probe told of the first poll and of every transaction (or batch) completed
	 * @throws Exception if the clients cannot be created
	 */
	void start(CopyProbe probe) throws Exception;

	/**
	 * Stops copying (what is open is committed or aborted, as the contender does on shutdown)
	 * and releases every client.
	 * @throws Exception the copy loop's failure, if it failed
	 */
	@Override
	void close() throws Exception;

	/**
	 * Returns the transactional producers' time totals per cluster, read just before they
	 * close; empty if the contender has none or cannot reach them.
	 * @return totals by cluster name
	 */
	default Map<String, TransactionTimes> transactionTimes() {
		return Map.of();
	}

	/**
	 * Returns the copy of a source record for the target topic: same partition, same key and
	 * value, the source record's timestamp (its append time on the source), so that the target's
	 * reader can measure end-to-end latency.
	 * @param <K> key type
	 * @param <V> value type
	 * @param record the source record
	 * @param targetTopic the target topic
	 * @return the record to send
	 */
	static <K, V> ProducerRecord<K, V> copyOf(ConsumerRecord<K, V> record, String targetTopic) {
		return new ProducerRecord<>(targetTopic, record.partition(), record.timestamp(), record.key(), record.value());
	}

	/** Where a copier reads and writes in one round. */
	record Route(List<String> sourceTopics, String targetCluster, String targetTopic, String groupId, int round) {
	}

}
