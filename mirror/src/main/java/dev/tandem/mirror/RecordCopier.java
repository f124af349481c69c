package dev.tandem.mirror;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;

import dev.tandem.mirror.OffsetMappings.Copy;
import dev.tandem.transaction.CrossClusterProcessor;
import dev.tandem.transaction.CrossClusterTransaction;

/**
 * The copying job, the processor's handler and a listener of its outcomes: copies polled records
 * to every target inside the mirror's open transaction (same partition; key, value, headers and
 * timestamp kept, plus the {@link Provenance} header with the id of the source topic's incarnation
 * assigned, {@link OffsetMappings#topicId}), grows a target topic before the first copy
 * to a new partition, skips a record on the target it originates from, and keeps the sends until
 * the transaction's outcome: committed, their target offsets go to the mappings
 * ({@link OffsetMappings#learn}) and the transaction to the progress
 * ({@link MirrorProgress#committed}); aborted, nothing it copied exists.
 * <p>
 * Outcomes arrive once each and in begin order, transactions aborted while still open included
 * (the processor's {@link dev.tandem.transaction.PipelinedOutcomes ordered-outcome ledger}), so
 * the mappings grow in offset order and never point at aborted copies, without any ordering kept
 * here.
 * <p>
 * Thread-safety: {@link #copy} runs on the polling thread and holds no lock during its sends, so
 * that an outcome told meanwhile on the pipeline's committing thread does not wait for them; the
 * unresolved sends are in a concurrent map; {@link #idle} from any thread.
 * <p>
 * No wait for earlier transactions is needed to keep each target partition in source order:
 * the {@link dev.tandem.transaction.TransactionPipeline} holds a transaction's sends until every
 * record the previous transaction passed to its producer is acknowledged or failed, so every copy
 * of an earlier transaction is appended (or failed) before this one's reach a producer.
 */
final class RecordCopier implements CrossClusterProcessor.ProcessorListener {

	private final MirrorSettings settings;

	private final TargetTopics topics;

	private final OffsetMappings mappings;

	private final MirrorProgress progress;

	/** Transaction id -> the copies it carries, until its outcome is told. */
	private final Map<String, List<Copy>> unresolved = new ConcurrentHashMap<>();

	RecordCopier(MirrorSettings settings, TargetTopics topics, OffsetMappings mappings, MirrorProgress progress) {
		this.settings = settings;
		this.topics = topics;
		this.mappings = mappings;
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
			// the transaction's first poll's list is its list: no copy of it
			this.unresolved.merge(txn.transactionId(), copies, RecordCopier::append);
		}
	}

	private static List<Copy> append(List<Copy> transaction, List<Copy> poll) {
		transaction.addAll(poll);
		return transaction;
	}

	/** A transaction committed: its copies' target offsets go to the mappings, in send order. */
	@Override
	public void onCommitted(String transactionId, int records, Map<TopicPartition, OffsetAndMetadata> next) {
		List<Copy> copies = this.unresolved.getOrDefault(transactionId, List.of());
		this.mappings.learn(copies);
		this.progress.committed(next, copies.size(), System.currentTimeMillis());
		this.unresolved.remove(transactionId);
	}

	/** A transaction aborted: nothing it copied exists. */
	@Override
	public void onAborted(String transactionId, Throwable cause) {
		// counted before it is resolved: whoever sees the copier idle sees the count (Mirror's idle positions)
		this.progress.aborted();
		this.unresolved.remove(transactionId);
	}

	/** Returns whether every copy's transaction has had its outcome told. */
	boolean idle() {
		return this.unresolved.isEmpty();
	}

	/** Copies one partition's polled records: its remote topic and header prefix once, then each record. */
	private void copy(TopicPartition source, List<ConsumerRecord<byte[], byte[]>> polled, CrossClusterTransaction txn,
			List<Copy> copies) {
		String sourceCluster = this.settings.source();
		List<String> targets = this.settings.targets();
		String remoteTopic = this.settings.naming().remoteTopic(sourceCluster, source.topic());
		Uuid topicId = this.mappings.topicId(source.topic());
		byte[] sourcePrefix = Provenance.prefix(sourceCluster, sourceCluster, source.topic(), source.partition(), topicId);
		boolean[] ensured = new boolean[targets.size()];
		for (ConsumerRecord<byte[], byte[]> record : polled) {
			String origin = Provenance.origin(record.headers());
			// a copy of a copy keeps its origin (another hop's record: rare, its prefix made for it)
			byte[] prefix = (origin == null || origin.equals(sourceCluster)) ? sourcePrefix
					: Provenance.prefix(origin, sourceCluster, source.topic(), source.partition(), topicId);
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
				Header[] headers = Provenance.forCopy(record.headers(), prefix, record.offset());
				ProducerRecord<byte[], byte[]> copy = new ProducerRecord<>(remoteTopic, source.partition(), timestamp,
						record.key(), record.value(), Arrays.asList(headers));
				copies.add(new Copy(target, source, record.offset(), topicId, txn.send(target, copy)));
			}
		}
	}

}
