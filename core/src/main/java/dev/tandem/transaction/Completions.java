package dev.tandem.transaction;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records in the decision log that a decided transaction committed everywhere (its decision is
 * then no longer in-doubt), for a commit that succeeded and for a recovered one alike.
 */
final class Completions {

	private static final Logger logger = LoggerFactory.getLogger(Completions.class);

	private Completions() {
	}

	/**
	 * Records the completion; a failure is harmless (logged: recovery commits the transaction
	 * again, which is idempotent, and completes it then).
	 * @param log the decision log
	 * @param transactionId the committed transaction
	 */
	static void record(DecisionLog log, String transactionId) {
		try {
			log.complete(transactionId);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not record completion of transaction {}", transactionId, ex);
		}
	}

}
