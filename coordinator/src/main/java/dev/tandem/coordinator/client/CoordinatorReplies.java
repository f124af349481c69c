package dev.tandem.coordinator.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.tandem.coordinator.security.CoordinatorAccessDeniedException;
import dev.tandem.transaction.DecisionLog;
import dev.tandem.transaction.DecisionLogException;
import org.apache.ratis.protocol.RaftClientReply;
import org.jspecify.annotations.Nullable;

/**
 * Turns the coordinator's replies and failures into what a {@link DecisionLog} caller expects:
 * an access refusal into a {@link CoordinatorAccessDeniedException}, anything else into a
 * {@link DecisionLogException} that says whether the outcome is unknown. Shared by the write
 * path (batched commands) and the read path ({@link LinearizableReads}) of a
 * {@link RatisDecisionLog}.
 * <p>
 * Stateless and thread-safe.
 *
 * @since 0.1.0
 */
final class CoordinatorReplies {

	private CoordinatorReplies() {
	}

	/**
	 * Fails a reply the coordinator did not answer with success.
	 * @param reply the reply
	 * @throws CompletionException with a {@link CoordinatorAccessDeniedException} when the peer
	 *     refused the caller's rights, else with a {@link DecisionLogException}
	 */
	static void checkSuccess(RaftClientReply reply) {
		if (!reply.isSuccess()) {
			String refusal = accessDenied(reply.getException());
			if (refusal != null) {
				throw new CompletionException(new CoordinatorAccessDeniedException(refusal));
			}
			throw new CompletionException(new DecisionLogException(
					"Coordinator refused the request: " + reply.getException(), reply.getException()));
		}
	}

	/**
	 * Returns the peer's reason when it refused the request for lack of rights (it travels as
	 * the message of a StateMachineException), or {@code null}.
	 */
	private static @Nullable String accessDenied(@Nullable Throwable failure) {
		String marker = CoordinatorAccessDeniedException.class.getName() + ": ";
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof CoordinatorAccessDeniedException denied) {
				return denied.getMessage();
			}
			String message = cause.getMessage();
			int at = (message != null) ? message.indexOf(marker) : -1;
			if (at >= 0) {
				return message.substring(at + marker.length());
			}
		}
		return null;
	}

	/**
	 * Waits for a call to the coordinator and turns its failure into the exception a
	 * {@link DecisionLog} caller expects.
	 * @param <T> the result type
	 * @param future the call
	 * @param timeout how long to wait
	 * @param what the call, for messages
	 * @param group the coordinator's group, for messages
	 * @return the call's result
	 * @throws DecisionLogException if the call failed, was interrupted or timed out (its outcome
	 *     then is unknown)
	 * @throws CoordinatorAccessDeniedException if the peer refused the caller's rights
	 */
	static <T> T await(CompletableFuture<T> future, Duration timeout, String what, CoordinatorGroup group) {
		try {
			return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw new DecisionLogException("No answer from the coordinator " + group.peers().keySet() + " to "
					+ what + " within " + timeout + "; the outcome is unknown", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new DecisionLogException("Interrupted while waiting for " + what + "; the outcome is unknown", ex);
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			String refusal = (cause instanceof CoordinatorAccessDeniedException) ? cause.getMessage() : accessDenied(cause);
			if (refusal != null) {
				throw new CoordinatorAccessDeniedException(what + " refused: " + refusal);
			}
			if (cause instanceof DecisionLogException logException) {
				throw new DecisionLogException(what + " failed: " + logException.getMessage(), logException);
			}
			throw new DecisionLogException(what + " failed: " + cause, cause);
		}
	}

}
