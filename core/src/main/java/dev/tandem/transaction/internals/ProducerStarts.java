package dev.tandem.transaction.internals;

import java.lang.reflect.Field;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.internals.RecordAccumulator;
import org.apache.kafka.clients.producer.internals.Sender;
import org.apache.kafka.clients.producer.internals.TransactionManager;
import org.apache.kafka.clients.producer.internals.TransactionalRequestResult;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts a {@link KafkaProducer}'s {@code flush()} or {@code commitTransaction()} without waiting
 * for its cluster's answer, and waits for it later: the two halves of each of those calls, which
 * run the same internal steps in the same order (the accumulator's {@code beginFlush()}, the
 * sender woken, {@code awaitFlushCompletion()}; the transaction manager's {@code beginCommit()},
 * the sender woken, the result's {@code await(max.block.ms)}). One thread can so start the flushes
 * (or commits) of several clusters, do other work while their requests are in flight, and then
 * wait for each, where each blocking call would need a thread of its own.
 * <p>
 * What differs from the public calls: the producer's {@code flush-time-ns-total} and
 * {@code txn-commit-time-ns-total} metrics do not count these. A commit whose wait timed out is
 * completed by calling {@code commitTransaction()} again, which the producer allows (it waits for
 * the same pending commit).
 * <p>
 * Members touched (kafka-clients 4.1): the private fields {@code KafkaProducer.accumulator},
 * {@code sender}, {@code transactionManager} and {@code maxBlockTimeMs}; the public methods of
 * the internal classes above, which the compiler checks. If a field is missing,
 * {@link #supported()} returns false and callers keep the blocking calls.
 * <p>
 * Thread-safety: as the producer's own calls; a {@link Flush} or {@link Commit} is awaited by one
 * thread.
 *
 * @since 0.1.0
 */
public final class ProducerStarts {

	private static final Logger logger = LoggerFactory.getLogger(ProducerStarts.class);

	private static final @Nullable Members MEMBERS = Members.find();

	private ProducerStarts() {
	}

	/**
	 * Returns whether this kafka-clients has the members used here.
	 * @return false if a kafka-clients upgrade removed or renamed one (callers then block in the
	 *     public calls)
	 */
	public static boolean supported() {
		return MEMBERS != null;
	}

	/**
	 * Starts a flush: every record buffered so far is sent at once, without waiting for
	 * {@code linger.ms}. The producer stays in flush mode (sends without lingering) until the
	 * returned flush is awaited, which must happen exactly once.
	 * @param producer the producer
	 * @return the flush in progress
	 * @throws IllegalStateException if not {@link #supported()}
	 */
	public static Flush beginFlush(KafkaProducer<?, ?> producer) {
		Members m = members();
		RecordAccumulator accumulator = (RecordAccumulator) m.get(m.accumulator, producer);
		accumulator.beginFlush();
		((Sender) m.get(m.sender, producer)).wakeup();
		return new Flush(accumulator);
	}

	/**
	 * Starts committing the producer's open transaction ({@code EndTxn} is sent once every
	 * record is acknowledged).
	 * @param producer a transactional producer with an open transaction
	 * @return the commit in progress
	 * @throws IllegalStateException if not {@link #supported()}, if the producer is closed or has
	 *     no transaction to commit
	 * @throws org.apache.kafka.common.KafkaException what {@code commitTransaction()} throws at once
	 *     (a fatal or abortable error of the producer)
	 */
	public static Commit beginCommit(KafkaProducer<?, ?> producer) {
		Members m = members();
		Sender sender = (Sender) m.get(m.sender, producer);
		TransactionManager transactionManager = (TransactionManager) m.get(m.transactionManager, producer);
		if (sender == null || !sender.isRunning()) {
			throw new IllegalStateException("Cannot perform operation after producer has been closed");
		}
		if (transactionManager == null) {
			throw new IllegalStateException("Cannot use transactional methods without enabling transactions");
		}
		TransactionalRequestResult result = transactionManager.beginCommit();
		sender.wakeup();
		return new Commit(result, (long) m.get(m.maxBlockTimeMs, producer));
	}

	private static Members members() {
		Members m = MEMBERS;
		if (m == null) {
			throw new IllegalStateException("kafka-clients lacks the members ProducerStarts uses");
		}
		return m;
	}

	/**
	 * A flush started by {@link #beginFlush}.
	 *
	 * @since 0.1.0
	 */
	public static final class Flush {

		private final RecordAccumulator accumulator;

		private boolean ended;

		Flush(RecordAccumulator accumulator) {
			this.accumulator = accumulator;
		}

		/**
		 * Waits until every record buffered before the flush began is acknowledged or failed (a
		 * send's own timeout, {@code delivery.timeout.ms}, bounds it), then ends the flush. Not
		 * interruptible, as a flush handed to another thread and joined is not: an interrupt is
		 * remembered, the wait goes on, and the thread's interrupt status is set again on return.
		 * @return true if the thread was interrupted while waiting
		 * @throws IllegalStateException if already awaited
		 */
		public boolean awaitUninterruptibly() {
			if (this.ended) {
				throw new IllegalStateException("Flush already awaited");
			}
			this.ended = true;
			boolean interrupted = false;
			boolean held = true; // this flush holds one count of the accumulator's flushes in progress
			while (true) {
				try {
					if (!held) {
						this.accumulator.beginFlush();
						held = true;
					}
					// ends the flush (gives the count back) whether it returns or throws
					this.accumulator.awaitFlushCompletion();
					break;
				}
				catch (InterruptedException ex) {
					interrupted = true;
					held = false;
				}
			}
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
			return interrupted;
		}

	}

	/**
	 * A commit started by {@link #beginCommit}.
	 *
	 * @since 0.1.0
	 */
	public static final class Commit {

		private final TransactionalRequestResult result;

		private final long maxBlockMs;

		Commit(TransactionalRequestResult result, long maxBlockMs) {
			this.result = result;
			this.maxBlockMs = maxBlockMs;
		}

		/**
		 * Waits for the commit, at most {@code max.block.ms}, as {@code commitTransaction()} does.
		 * @throws org.apache.kafka.common.errors.TimeoutException if it did not complete in time
		 *     (call {@code commitTransaction()} to keep waiting for it)
		 * @throws org.apache.kafka.common.errors.InterruptException if interrupted
		 * @throws org.apache.kafka.common.KafkaException the commit's failure
		 */
		public void await() {
			this.result.await(this.maxBlockMs, TimeUnit.MILLISECONDS);
		}

	}

	private static final class Members {

		final Field accumulator;

		final Field sender;

		final Field transactionManager;

		final Field maxBlockTimeMs;

		private Members(Field accumulator, Field sender, Field transactionManager, Field maxBlockTimeMs) {
			this.accumulator = accumulator;
			this.sender = sender;
			this.transactionManager = transactionManager;
			this.maxBlockTimeMs = maxBlockTimeMs;
		}

		static @Nullable Members find() {
			try {
				return new Members(field("accumulator", RecordAccumulator.class), field("sender", Sender.class),
						field("transactionManager", TransactionManager.class), field("maxBlockTimeMs", long.class));
			}
			catch (ReflectiveOperationException | RuntimeException ex) {
				logger.warn("kafka-clients lacks a member Tandem uses to overlap flushes and commits ({}); "
						+ "each cluster's flush and commit then waits on a thread of its own", ex.toString());
				return null;
			}
		}

		private static Field field(String name, Class<?> type) throws NoSuchFieldException {
			Field field = KafkaProducer.class.getDeclaredField(name);
			if (field.getType() != type) {
				throw new NoSuchFieldException("KafkaProducer." + name + " is a " + field.getType().getName()
						+ ", not a " + type.getName());
			}
			field.setAccessible(true);
			return field;
		}

		@Nullable Object get(Field field, Object target) {
			try {
				return field.get(target);
			}
			catch (IllegalAccessException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}
