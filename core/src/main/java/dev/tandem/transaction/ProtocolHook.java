package dev.tandem.transaction;

/**
 * Called at each {@link ProtocolStep} of a commit: a seam for fault-injection tests and chaos
 * runs (throw {@link SimulatedCrashException} to stop the protocol at that step as a crash
 * would). Not for production logic.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ProtocolHook {

	/** A hook that does nothing. */
	ProtocolHook NONE = (transactionId, step) -> {
	};

	/**
	 * Called when the protocol reaches a step.
	 * @param transactionId the transaction id
	 * @param step the step reached
	 * @throws SimulatedCrashException to make the transaction stop as if the process died there
	 */
	void reached(String transactionId, ProtocolStep step);

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
