package dev.tandem.mirror;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.mirror.OffsetMappings.Copy;
import dev.tandem.mirror.TranslatedOffsets.Key;
import dev.tandem.mirror.TranslatedOffsets.Translation;
import dev.tandem.transaction.CrossClusterProcessor;
import dev.tandem.transaction.CrossClusterTransaction;

/**
 * The mirror's transactions not resolved yet, in begin order, each with the copies and
 * translations it carries, and what each outcome does: a committed transaction's copies go to
 * {@link OffsetMappings}, its translations to {@link TranslatedOffsets}, its next source offsets
 * and counts to {@link MirrorProgress}; an aborted one's translated groups are suspended.
 * <p>
 * Outcomes arrive once each and in begin order, transactions aborted while still open included:
 * the processor's {@link dev.tandem.transaction.PipelinedOutcomes ordered-outcome ledger} hands
 * them so; the idle translation transaction is begun and ended only when nothing else is in
 * flight. So the mappings grow in offset order and never point at aborted copies, without any
 * ordering kept here.
 * <p>
 * Thread-safe: every method holds this object's lock. {@link #begin}, {@link #copied},
 * {@link #translated}, {@link #idle} and {@link #inFlightFloors} are called on the polling thread;
 * {@link #onCommitted} and {@link #onAborted} on the pipeline's committing thread, or on the polling
 * thread (an aborted open transaction, the idle translation transaction). Applying an outcome
 * calls the three classes above under this lock (lock order: this, then {@link OffsetMappings},
 * then {@link MirrorProgress}).
 */
final class MirrorTransactions implements CrossClusterProcessor.ProcessorListener {

	private static final Logger logger = LoggerFactory.getLogger(MirrorTransactions.class);

	private final OffsetMappings mappings;

	private final TranslatedOffsets translated;

	private final MirrorProgress progress;

	/** Transactions not resolved yet, in begin order. */
	private final LinkedHashMap<String, Pending> pending = new LinkedHashMap<>();

	MirrorTransactions(OffsetMappings mappings, TranslatedOffsets translated, MirrorProgress progress) {
		this.mappings = mappings;
		this.translated = translated;
		this.progress = progress;
	}

	/** Enters a transaction (no-op if it is already in). */
	synchronized void begin(CrossClusterTransaction txn) {
		pending(txn);
	}

	/** Adds copies sent into a transaction (entering it if needed). */
	synchronized void copied(CrossClusterTransaction txn, List<Copy> copies) {
		pending(txn).copies.addAll(copies);
	}

	/** Adds translations written into a transaction (entering it if needed). */
	synchronized void translated(CrossClusterTransaction txn, List<Translation> translations) {
		pending(txn).translations.addAll(translations);
	}

	private Pending pending(CrossClusterTransaction txn) {
		return this.pending.computeIfAbsent(txn.transactionId(), (id) -> new Pending());
	}

	/**
	 * A transaction committed: its copies, translations and offsets are applied.
	 * @param records how many source records it carried
	 * @param next the source offsets after its records (empty for a translation-only one)
	 */
	@Override
	public synchronized void onCommitted(String transactionId, int records, Map<TopicPartition, OffsetAndMetadata> next) {
		logger.debug("Mirror transaction {} committed {} source record(s), next source offsets {}", transactionId,
				records, next);
		Pending transaction = this.pending.remove(transactionId);
		if (transaction != null) {
			this.mappings.learn(transaction.copies);
			long now = System.currentTimeMillis();
			this.translated.committed(transaction.translations, now);
			this.progress.committed(next, transaction.copies.size(), now);
		}
	}

	/** A transaction aborted: nothing it wrote exists; groups it translated wait for the next read. */
	@Override
	public synchronized void onAborted(String transactionId, Throwable cause) {
		Pending transaction = this.pending.remove(transactionId);
		if (transaction != null) {
			this.progress.aborted();
			this.translated.aborted(transaction.translations);
		}
	}

	/**
	 * Returns whether no mirror transaction is open or committing: a translation written outside
	 * one then sees only committed mappings and cannot race a pipelined one.
	 */
	synchronized boolean idle() {
		return this.pending.isEmpty();
	}

	/**
	 * Returns, per key, the highest offset among the translations of unresolved transactions
	 * (what a group will have on a target if they commit): a translation must exceed it.
	 * @return a new map; keys without translations in flight are absent
	 */
	synchronized Map<Key, Long> inFlightFloors() {
		Map<Key, Long> floors = new HashMap<>();
		for (Pending transaction : this.pending.values()) {
			for (Translation translation : transaction.translations) {
				floors.merge(translation.key(), translation.offset(), Math::max);
			}
		}
		return floors;
	}

	private static final class Pending {

		final List<Copy> copies = new ArrayList<>();

		final List<Translation> translations = new ArrayList<>();

	}

}
