package dev.tandem.transaction;

/**
 * Called at each {@link ProtocolStep} of a commit: a seam for fault-injection tests and chaos
 * runs (throw {@link SimulatedCrashException} to stop the protocol at that step as a crash
 * would), and for observers of the protocol's steps (which return false from
 * {@link #injectsFaults()}). Not for production logic.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ProtocolHook {

	/** A hook that does nothing. */
	ProtocolHook NONE = new ProtocolHook() {

		@Override
		public void reached(String transactionId, ProtocolStep step) {
		}

		@Override
		public boolean injectsFaults() {
			return false;
		}

	};

	/**
	 * Called when the protocol reaches a step.
	 * @param transactionId the transaction id
	 * @param step the step reached
	 * @throws SimulatedCrashException to make the transaction stop as if the process died there
	 */
	void reached(String transactionId, ProtocolStep step);

	/**
	 * Returns whether this hook may stop the protocol ({@link SimulatedCrashException}). While a
	 * hook that injects faults is installed, the first participant commits alone before
	 * {@link ProtocolStep#MID_COMMIT} so that the step falls where exactly one has committed; a
	 * hook that only observes steps (tracing, for example) returns false and leaves the
	 * participants committing in parallel.
	 * @return true unless the hook never throws
	 */
	default boolean injectsFaults() {
		return true;
	}

	/**
	 * Thrown by a {@link ProtocolHook} to simulate a crash: the transaction stops where it is,
	 * without aborting or committing anything, and its producers must be abandoned with
	 * {@link CrossClusterTransactionManager#abandon()} as a dead process would leave them.
	 *
	 * @since 0.1.0
	 */
	class SimulatedCrashException extends RuntimeException {

		private static final long serialVersionUID = 1L;

		public SimulatedCrashException(ProtocolStep step) {
			super("Simulated crash at " + step);
		}

	}

}
