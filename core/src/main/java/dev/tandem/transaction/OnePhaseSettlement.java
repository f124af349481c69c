package dev.tandem.transaction;

import java.util.function.BooleanSupplier;

import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.transaction.Decision.ParticipantRecord;

/**
 * Settles a one-phase transaction (one participant) whose {@code commitTransaction()} failed with
 * an unknown outcome: the broker may have accepted the commit and complete it later, so it must
 * never be reported as aborted on a guess. While the commit only times out, the same producer
 * retries it (the KafkaProducer contract: a timed-out commit may be retried, and the retry waits
 * for the same request); once the broker refuses it, a fresh producer's {@code initTransactions()}
 * completes a commit the broker had accepted or aborts the transaction, and the participant's
 * marker record then tells which, by one {@code read_committed} fetch.
 * <p>
 * Not thread-safe: called by one thread at a time (the committing thread's first attempt, then
 * the resolver's thread).
 */
final class OnePhaseSettlement {

	private static final Logger logger = LoggerFactory.getLogger(OnePhaseSettlement.class);

	/** Where the settlement stands; each attempt moves it forward, never back. */
	private enum Step {

		/** The commit only timed out: retry it with the same producer. */
		RETRY_COMMIT,

		/** The broker refused the commit: re-initialize the transactional id. */
		REINITIALIZE,

		/** The transactional id is re-initialized: the marker tells the outcome. */
		READ_MARKER

	}

	private final String transactionId;

	private final Participant participant;

	private final ParticipantRecord marker;

	private final TransactionRecovery.Settings settings;

	private final ParticipantPool pool;

	private final BooleanSupplier closed;

	private RuntimeException lastFailure;

	private Step step;

	OnePhaseSettlement(String transactionId, Participant participant, ParticipantRecord marker,
			RuntimeException failure, TransactionRecovery.Settings settings, ParticipantPool pool, BooleanSupplier closed) {
		this.transactionId = transactionId;
		this.participant = participant;
		this.marker = marker;
		this.lastFailure = failure;
		this.settings = settings;
		this.pool = pool;
		this.closed = closed;
		this.step = retriable(failure) ? Step.RETRY_COMMIT : Step.REINITIALIZE;
	}

	private static boolean retriable(RuntimeException failure) {
		// Only a commit that did not answer in time may be retried with the same producer.
		return failure instanceof TimeoutException || failure instanceof InterruptException;
	}

	/**
	 * One attempt.
	 * @return COMMITTED or ABORTED
	 * @throws RuntimeException to be tried again later
	 */
	TransactionState attempt() {
		if (this.closed.getAsBoolean()) {
			throw new TandemException("Manager " + this.settings.owner() + " is closed");
		}
		Participant p = this.participant;
		if (this.step == Step.RETRY_COMMIT) {
			try {
				p.commit();
				logger.info("One-phase commit of {} on cluster '{}' confirmed after a retry", p.transactionalId,
						p.cluster);
				this.settings.listener().onRecovered(this.transactionId);
				return TransactionState.COMMITTED;
			}
			catch (RuntimeException ex) {
				this.lastFailure = ex;
				if (retriable(ex)) {
					throw ex;
				}
				this.step = Step.REINITIALIZE;
				logger.warn("Broker refused the retried one-phase commit of {} on cluster '{}' ({}); reading its marker",
						p.transactionalId, p.cluster, ex.toString());
			}
		}
		if (this.step == Step.REINITIALIZE) {
			// A new producer's initTransactions() waits for a commit the broker accepted to complete,
			// or aborts the open transaction: afterwards the marker is no longer open.
			p.abandon();
			this.pool.open(p);
			this.step = Step.READ_MARKER;
		}
		switch (MarkerReader.read(this.marker, this.settings.clients(), this.settings.commitTimeout())) {
			case COMMITTED -> {
				logger.info("One-phase transaction {} of {} on cluster '{}' committed (its marker is visible)",
						this.transactionId, p.transactionalId, p.cluster);
				this.settings.listener().onRecovered(this.transactionId);
				return TransactionState.COMMITTED;
			}
			case ABORTED -> {
				logger.warn("One-phase transaction {} of {} on cluster '{}' was aborted by its broker (its marker is aborted)",
						this.transactionId, p.transactionalId, p.cluster);
				this.settings.listener().onAborted(this.transactionId, this.lastFailure);
				return TransactionState.ABORTED;
			}
			default -> throw new TandemException("Marker of one-phase transaction " + this.transactionId
					+ " on cluster '" + p.cluster + "' is still open");
		}
	}

}
