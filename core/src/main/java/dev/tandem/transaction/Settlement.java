package dev.tandem.transaction;

/**
 * What an operator asks for a stuck transaction ({@link CrossClusterTransactionManager#settle}).
 *
 * @since 0.1.0
 */
public enum Settlement {

	/**
	 * Commit a decided transaction by resuming its participants, as recovery does; a participant
	 * its broker already aborted makes a heuristic outcome.
	 */
	COMMIT,

	/**
	 * Record an abort of a transaction the log holds no decision for, so that a late decision is
	 * refused (presumed abort made explicit); its participants' open Kafka transactions abort when
	 * their producer is fenced or at {@code transaction.timeout.ms}. A decided transaction never
	 * aborts.
	 */
	ABORT

}
