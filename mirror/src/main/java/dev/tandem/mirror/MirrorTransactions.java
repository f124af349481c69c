package dev.tandem.mirror;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

import dev.tandem.mirror.OffsetMappings.Copy;
import dev.tandem.mirror.TranslatedOffsets.Key;
import dev.tandem.mirror.TranslatedOffsets.Translation;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.TransactionState;

/**
 * The ledger of the mirror's transactions not resolved yet, in begin order, each with the copies
 * and translations it carries. Outcomes may be told out of order (the pipeline's committing
 * thread); they are applied in begin order, so that the mappings grow in offset order and never
 * point at aborted copies: a committed transaction's copies go to {@link OffsetMappings}, its
 * translations to {@link TranslatedOffsets}, its next source offsets and counts to
 * {@link MirrorProgress}; an aborted one's translated groups are suspended.
 * <p>
 * A transaction the processor aborted while still open is not told to any listener: it is
 * recognised by its state ({@link TransactionState#ABORTED}) when it reaches the head. The rest of
 * the mirror sees only this class's methods, so that the ordering inside can change alone (for
 * example to outcomes the processor tells once each, in begin order).
 * <p>
 * Thread-safe: every method holds this object's lock. {@link #begin}, {@link #copied},
 * {@link #translated}, {@link #idle} and {@link #inFlightFloors} are called on the polling thread;
 * {@link #committed} and {@link #aborted} on the pipeline's committing thread, or on the polling
 * thread for the idle translation transaction. Applying an outcome calls the three classes above
 * under this lock (lock order: this, then {@link OffsetMappings}, then {@link MirrorProgress}).
 */
final class MirrorTransactions {

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
		return this.pending.computeIfAbsent(txn.transactionId(), (id) -> new Pending(txn));
	}

	/**
	 * A transaction committed: it is applied once every older one is resolved.
	 * @param next the source offsets after its records (empty for a translation-only one)
	 */
	synchronized void committed(String transactionId, Map<TopicPartition, OffsetAndMetadata> next) {
		Pending transaction = this.pending.get(transactionId);
		if (transaction != null) {
			transaction.committed = true;
			transaction.next = next;
		}
		promote();
	}

	/** A transaction aborted: nothing it wrote exists; groups it translated wait for the next read. */
	synchronized void aborted(String transactionId) {
		Pending transaction = this.pending.remove(transactionId);
		if (transaction != null) {
			discard(transaction);
		}
		promote();
	}

	/**
	 * Returns whether no mirror transaction is open or committing: a translation written outside
	 * one then sees only committed mappings and cannot race a pipelined one.
	 */
	synchronized boolean idle() {
		promote();
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

	/**
	 * Applies committed transactions from the oldest on, and drops aborted ones (also those the
	 * processor aborted while still open, of which no listener is told); stops at the first one
	 * still undecided.
	 */
	private void promote() {
		Iterator<Pending> oldest = this.pending.values().iterator();
		while (oldest.hasNext()) {
			Pending transaction = oldest.next();
			if (transaction.committed) {
				oldest.remove();
				apply(transaction);
			}
			else if (transaction.txn.state() == TransactionState.ABORTED) {
				oldest.remove();
				discard(transaction);
			}
			else {
				return;
			}
		}
	}

	private void discard(Pending transaction) {
		this.progress.aborted();
		this.translated.aborted(transaction.translations);
	}

	private void apply(Pending transaction) {
		this.mappings.learn(transaction.copies);
		long now = System.currentTimeMillis();
		this.translated.committed(transaction.translations, now);
		this.progress.committed(transaction.next, transaction.copies.size(), now);
	}

	private static final class Pending {

		final CrossClusterTransaction txn;

		final List<Copy> copies = new ArrayList<>();

		final List<Translation> translations = new ArrayList<>();

		boolean committed;

		Map<TopicPartition, OffsetAndMetadata> next = Map.of();

		Pending(CrossClusterTransaction txn) {
			this.txn = txn;
		}

	}

}
