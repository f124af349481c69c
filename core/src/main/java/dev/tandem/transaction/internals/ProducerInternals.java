package dev.tandem.transaction.internals;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.utils.AppInfoParser;
import org.jspecify.annotations.Nullable;

/**
 * Reads and sets the transactional state that {@link KafkaProducer} keeps private: the producer
 * id and epoch of the open transaction, and the transactions-V2 flag (KIP-890).
 * <p>
 * Resuming a transaction: a producer P1 began a transaction, sent records and was abandoned
 * (process crash, or {@code close(Duration.ZERO)}). A fresh producer P2 with the same
 * {@code transactional.id}, on which {@code initTransactions()} is NOT called (that would abort
 * P1's transaction), takes P1's producer id and epoch and is put in the IN_TRANSACTION state;
 * {@code commitTransaction()} on P2 then commits P1's records. Committing the same resumed
 * transaction twice is harmless. If the broker has meanwhile aborted the transaction (its
 * {@code transaction.timeout.ms} expired), the commit fails with
 * {@code ProducerFencedException} or {@code InvalidTxnStateException}.
 * <p>
 * Members touched (kafka-clients 4.1): {@code KafkaProducer.transactionManager},
 * {@code TransactionManager.producerIdAndEpoch}, {@code currentState}, {@code transitionTo(State)},
 * {@code transactionStarted}, {@code maybeUpdateTransactionV2Enabled(boolean)}. A kafka-clients
 * upgrade that renames one of them makes {@link #verify()} fail with
 * {@link IncompatibleKafkaClientsException}; Tandem calls it before it relies on any of them.
 * <p>
 * Thread-safety: every method locks the producer's transaction manager, as the producer does.
 *
 * @since 0.1.0
 */
public final class ProducerInternals {

	private static final String TM_CLASS = "org.apache.kafka.clients.producer.internals.TransactionManager";

	private static final String STATE_CLASS = TM_CLASS + "$State";

	private static final String[] PID_EPOCH_CLASSES = { "org.apache.kafka.common.utils.ProducerIdAndEpoch",
			"org.apache.kafka.common.utils.internals.ProducerIdAndEpoch" };

	private static volatile @Nullable Members members;

	private ProducerInternals() {
	}

	/**
	 * Checks that every internal member Tandem uses exists in the kafka-clients on the class path.
	 * @throws IncompatibleKafkaClientsException naming the missing member and the kafka-clients
	 *     version, if one is missing
	 */
	public static void verify() {
		members();
	}

	/**
	 * Returns the partition Kafka's built-in partitioner picks for a serialized key (murmur2 of the
	 * key, modulo the partition count): where a {@code KafkaProducer} without a
	 * {@code partitioner.class} sends a keyed record that names no partition.
	 * @param serializedKey the key's bytes
	 * @param partitions the topic's partition count, at least 1
	 * @return the partition, from 0 to {@code partitions - 1}
	 */
	public static int partitionForKey(byte[] serializedKey, int partitions) {
		return BuiltInPartitioner.partitionForKey(serializedKey, partitions);
	}

	/**
	 * Reads the producer id and epoch of a transactional producer.
	 * @param producer a {@link KafkaProducer} with a {@code transactional.id}, after
	 *     {@code initTransactions()}
	 * @return its current producer id and epoch
	 * @throws IllegalArgumentException if the producer is not a transactional KafkaProducer
	 * @throws IncompatibleKafkaClientsException if kafka-clients' internals changed
	 */
	public static ProducerIdentity identity(Producer<?, ?> producer) {
		Members m = members();
		Object tm = transactionManager(producer, m);
		synchronized (tm) {
			Object pidEpoch = m.get(m.producerIdAndEpoch, tm);
			long producerId = (long) m.get(m.producerIdField, pidEpoch);
			short epoch = (short) m.get(m.epochField, pidEpoch);
			boolean v2 = (boolean) m.invoke(m.isTransactionV2Enabled, tm);
			return new ProducerIdentity(producerId, epoch, v2);
		}
	}

	/**
	 * Puts a fresh transactional producer into the open transaction of an abandoned one, so that
	 * {@code commitTransaction()} or {@code abortTransaction()} completes that transaction.
	 * @param producer a new {@link KafkaProducer} with the abandoned producer's
	 *     {@code transactional.id}, on which {@code initTransactions()} was NOT called
	 * @param identity the abandoned transaction's producer id, epoch and transactions-V2 flag
	 * @throws IllegalArgumentException if the producer is not a transactional KafkaProducer
	 * @throws IncompatibleKafkaClientsException if kafka-clients' internals changed
	 */
	public static void resume(Producer<?, ?> producer, ProducerIdentity identity) {
		Members m = members();
		Object tm = transactionManager(producer, m);
		synchronized (tm) {
			m.invoke(m.transitionTo, tm, m.state("INITIALIZING"));
			m.set(m.producerIdAndEpoch, tm, m.newProducerIdAndEpoch(identity.producerId(), identity.producerEpoch()));
			m.invoke(m.maybeUpdateTransactionV2Enabled, tm, identity.transactionV2());
			m.invoke(m.transitionTo, tm, m.state("READY"));
			m.invoke(m.transitionTo, tm, m.state("IN_TRANSACTION"));
			m.set(m.transactionStarted, tm, true);
		}
	}

	private static Object transactionManager(Producer<?, ?> producer, Members m) {
		if (!(producer instanceof KafkaProducer)) {
			throw new IllegalArgumentException("Expected a KafkaProducer, got " + producer.getClass().getName());
		}
		Object tm = m.get(m.transactionManager, producer);
		if (tm == null) {
			throw new IllegalArgumentException("Producer has no transactional.id");
		}
		return tm;
	}

	private static Members members() {
		Members m = members;
		if (m == null) {
			m = new Members();
			members = m;
		}
		return m;
	}

	/**
	 * A producer id, epoch and transactions-V2 flag, as the broker assigned them.
	 *
	 * @param producerId the producer id
	 * @param producerEpoch the producer epoch (0 to 32767)
	 * @param transactionV2 whether the producer runs transactions V2 (KIP-890)
	 * @since 0.1.0
	 */
	public record ProducerIdentity(long producerId, short producerEpoch, boolean transactionV2) {
	}

	/**
	 * The kafka-clients on the class path lacks an internal member Tandem needs to recover
	 * in-doubt transactions. Fatal: use a kafka-clients version Tandem supports.
	 *
	 * @since 0.1.0
	 */
	public static final class IncompatibleKafkaClientsException extends RuntimeException {

		private static final long serialVersionUID = 1L;

		IncompatibleKafkaClientsException(String member, Throwable cause) {
			super("kafka-clients " + AppInfoParser.getVersion() + " lacks internal member '" + member
					+ "' that Tandem uses to resume in-doubt transactions; use a kafka-clients version Tandem supports"
					+ " (tested: 4.1.x)", cause);
		}

	}

	private static final class Members {

		final Field transactionManager;

		final Field producerIdAndEpoch;

		final Field transactionStarted;

		final Method transitionTo;

		final Method maybeUpdateTransactionV2Enabled;

		final Method isTransactionV2Enabled;

		final Class<?> stateClass;

		final Class<?> pidEpochClass;

		final Field producerIdField;

		final Field epochField;

		Members() {
			this.transactionManager = field(KafkaProducer.class, "transactionManager");
			Class<?> tm = type(TM_CLASS);
			this.producerIdAndEpoch = field(tm, "producerIdAndEpoch");
			this.transactionStarted = field(tm, "transactionStarted");
			field(tm, "currentState");
			this.stateClass = type(STATE_CLASS);
			this.transitionTo = method(tm, "transitionTo", this.stateClass);
			this.maybeUpdateTransactionV2Enabled = method(tm, "maybeUpdateTransactionV2Enabled", boolean.class);
			this.isTransactionV2Enabled = method(tm, "isTransactionV2Enabled");
			this.pidEpochClass = this.producerIdAndEpoch.getType();
			this.producerIdField = field(this.pidEpochClass, "producerId");
			this.epochField = field(this.pidEpochClass, "epoch");
			boolean known = false;
			for (String name : PID_EPOCH_CLASSES) {
				known |= name.equals(this.pidEpochClass.getName());
			}
			if (!known) {
				throw new IncompatibleKafkaClientsException("ProducerIdAndEpoch (found " + this.pidEpochClass.getName() + ")", null);
			}
			for (String s : new String[] { "INITIALIZING", "READY", "IN_TRANSACTION" }) {
				state(s);
			}
		}

		Object state(String name) {
			for (Object constant : this.stateClass.getEnumConstants()) {
				if (((Enum<?>) constant).name().equals(name)) {
					return constant;
				}
			}
			throw new IncompatibleKafkaClientsException(STATE_CLASS + "." + name, null);
		}

		Object newProducerIdAndEpoch(long producerId, short epoch) {
			try {
				return this.pidEpochClass.getConstructor(long.class, short.class).newInstance(producerId, epoch);
			}
			catch (ReflectiveOperationException ex) {
				throw new IncompatibleKafkaClientsException(this.pidEpochClass.getName() + "(long, short)", ex);
			}
		}

		@Nullable Object get(Field field, Object target) {
			try {
				return field.get(target);
			}
			catch (IllegalAccessException ex) {
				throw new IncompatibleKafkaClientsException(field.toString(), ex);
			}
		}

		void set(Field field, Object target, Object value) {
			try {
				field.set(target, value);
			}
			catch (IllegalAccessException ex) {
				throw new IncompatibleKafkaClientsException(field.toString(), ex);
			}
		}

		@Nullable Object invoke(Method method, Object target, Object... args) {
			try {
				return method.invoke(target, args);
			}
			catch (IllegalAccessException ex) {
				throw new IncompatibleKafkaClientsException(method.toString(), ex);
			}
			catch (InvocationTargetException ex) {
				Throwable cause = ex.getCause();
				if (cause instanceof RuntimeException runtime) {
					throw runtime;
				}
				throw new IllegalStateException(cause);
			}
		}

		private static Class<?> type(String name) {
			try {
				return Class.forName(name, false, KafkaProducer.class.getClassLoader());
			}
			catch (ClassNotFoundException ex) {
				throw new IncompatibleKafkaClientsException(name, ex);
			}
		}

		private static Field field(Class<?> type, String name) {
			try {
				Field field = type.getDeclaredField(name);
				field.setAccessible(true);
				return field;
			}
			catch (NoSuchFieldException ex) {
				throw new IncompatibleKafkaClientsException(type.getName() + "." + name, ex);
			}
		}

		private static Method method(Class<?> type, String name, Class<?>... params) {
			try {
				Method method = type.getDeclaredMethod(name, params);
				method.setAccessible(true);
				return method;
			}
			catch (NoSuchMethodException ex) {
				throw new IncompatibleKafkaClientsException(type.getName() + "." + name, ex);
			}
		}

	}

}
