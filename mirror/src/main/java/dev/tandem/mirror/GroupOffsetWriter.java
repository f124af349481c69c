package dev.tandem.mirror;

import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import dev.tandem.transaction.CrossClusterTransaction;

/**
 * Writes a named group's offsets on a named cluster inside a transaction (Tandem's
 * {@code CrossClusterTransaction.sendGroupOffsets}).
 */
@FunctionalInterface
interface GroupOffsetWriter {

	void write(CrossClusterTransaction txn, String cluster, String group, Map<TopicPartition, OffsetAndMetadata> offsets);

}
