package dev.tandem.mirror;

import java.util.ArrayList;
import java.util.List;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.record.TimestampType;

import dev.tandem.mirror.OffsetMappings.Copy;
import dev.tandem.transaction.CrossClusterTransaction;

/**
 * The copying job, the processor's handler: copies polled records to every target inside the
 * mirror's open transaction (same partition; key, value, headers and timestamp kept, plus the
 * {@link Provenance} headers), grows a target topic before the first copy to a new partition,
 * skips a record on the target it originates from, and hands the sends to
 * {@link MirrorTransactions}, whose commit teaches their target offsets to the mappings.
 * <p>
 * Called on the polling thread only; holds no lock during its sends, so that a commit told
 * meanwhile on the pipeline's thread does not wait for them.
 * <p>
 * No wait for earlier transactions is needed to keep each target partition in source order:
 * {@link dev.tandem.transaction.TransactionPipeline#commitAsync} flushes a transaction's
 * producers on the polling thread before it returns, so every copy of an earlier transaction is
 * appended (or failed) before this one sends.
 */
final class RecordCopier {

	private final MirrorSettings settings;

	private final TargetTopics topics;

	private final MirrorTransactions transactions;

	private final MirrorProgress progress;

	RecordCopier(MirrorSettings settings, TargetTopics topics, MirrorTransactions transactions,
			MirrorProgress progress) {
		this.settings = settings;
		this.topics = topics;
		this.transactions = transactions;
		this.progress = progress;
	}

	/** Copies the polled records of the selected topics into the transaction. */
	void copy(ConsumerRecords<byte[], byte[]> records, CrossClusterTransaction txn) {
		List<Copy> copies = new ArrayList<>(records.count() * this.settings.targets().size());
		try {
			for (TopicPartition source : records.partitions()) {
				if (this.settings.topics().matches(source.topic())) {
					copy(source, records.records(source), txn, copies);
				}
			}
		}
		finally {
			this.transactions.copied(txn, copies);
		}
	}

	/** Copies one partition's polled records: its remote topic and header prefix once, then each record. */
	private void copy(TopicPartition source, List<ConsumerRecord<byte[], byte[]>> polled, CrossClusterTransaction txn,
			List<Copy> copies) {
		String sourceCluster = this.settings.source();
		List<String> targets = this.settings.targets();
		String remoteTopic = this.settings.naming().remoteTopic(sourceCluster, source.topic());
		byte[] sourcePrefix = Provenance.sourcePrefix(sourceCluster, source.topic(), source.partition());
		Header sourceOrigin = Provenance.originHeader(sourceCluster);
		boolean[] ensured = new boolean[targets.size()];
		for (ConsumerRecord<byte[], byte[]> record : polled) {
			String origin = Provenance.origin(record.headers());
			Header originHeader = (origin != null) ? Provenance.originHeader(origin) : sourceOrigin;
			Long timestamp = (record.timestampType() == TimestampType.NO_TIMESTAMP_TYPE || record.timestamp() < 0) ? null
					: record.timestamp();
			for (int i = 0; i < targets.size(); i++) {
				String target = targets.get(i);
				if (target.equals(origin)) {
					this.progress.skipped();
					continue;
				}
				if (!ensured[i]) {
					this.topics.ensurePartition(target, source.topic(), source.partition());
					ensured[i] = true;
				}
				Headers headers = Provenance.forCopy(record.headers(), originHeader, sourcePrefix, record.offset());
				ProducerRecord<byte[], byte[]> copy = new ProducerRecord<>(remoteTopic, source.partition(), timestamp,
						record.key(), record.value(), headers);
				copies.add(new Copy(target, source, record.offset(), txn.send(target, copy)));
			}
		}
	}

}
