package dev.tandem.autoconfigure.transaction;

import java.util.function.Supplier;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.jspecify.annotations.Nullable;

import dev.tandem.transaction.CrossClusterTransaction;

/**
 * Observes the cross-cluster transactions that {@code @CrossClusterTransactional} methods and
 * Tandem's listeners run: {@link ObservationTransactionObserver} makes each a Micrometer
 * Observation. Implementations must be thread-safe.
 *
 * @since 0.1.0
 */
public interface TandemTransactionObserver {

	/** Observes nothing. */
	TandemTransactionObserver NONE = () -> Observed.NONE;

	/**
	 * Starts observing a transaction about to begin on the calling thread; the returned handle
	 * is current on that thread until closed.
	 * @return the handle, closed by the caller once the transaction's outcome is known
	 */
	Observed start();

	/**
	 * Observes one send of a record inside a cross-cluster transaction: the place to put the
	 * current trace context into the record's headers.
	 * @param <T> the send's result
	 * @param cluster the cluster the record goes to
	 * @param record the record, whose headers may be added to
	 * @param send performs the send
	 * @return the send's result
	 */
	default <T> T observeSend(String cluster, ProducerRecord<?, ?> record, Supplier<T> send) {
		return send.get();
	}

	/**
	 * One observed transaction.
	 *
	 * @since 0.1.0
	 */
	interface Observed extends AutoCloseable {

		/** A handle that records nothing. */
		Observed NONE = new Observed() {

			@Override
			public void begun(CrossClusterTransaction transaction) {
			}

			@Override
			public void ended(Outcome outcome, @Nullable Throwable failure) {
			}

			@Override
			public void close() {
			}

		};

		/**
		 * The transaction has begun.
		 * @param transaction the transaction
		 */
		void begun(CrossClusterTransaction transaction);

		/**
		 * The transaction's outcome is known (called at most once, before {@link #close()}).
		 * @param outcome the outcome
		 * @param failure what failed, or null when it committed
		 */
		void ended(Outcome outcome, @Nullable Throwable failure);

		/**
		 * Stops being current on the calling thread while the transaction goes on elsewhere (a
		 * pipelined commit): {@link #ended} and {@link #close()} may then be called from the
		 * thread that learns the outcome. Called at most once, on the thread that started it.
		 */
		default void detach() {
		}

		/**
		 * Stops observing.
		 */
		@Override
		void close();

	}

	/**
	 * How an observed transaction ended.
	 *
	 * @since 0.1.0
	 */
	enum Outcome {

		/** Committed on every participant. */
		COMMITTED,

		/** Aborted everywhere (the work failed, or prepare did). */
		ABORTED,

		/** Decided but not yet committed everywhere, or its outcome unknown: resolved in the background. */
		IN_DOUBT,

		/** Some participants committed, some brokers aborted. */
		HEURISTIC

	}

}
