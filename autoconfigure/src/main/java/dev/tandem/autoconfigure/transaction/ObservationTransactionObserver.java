package dev.tandem.autoconfigure.transaction;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.SenderContext;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.jspecify.annotations.Nullable;

import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;

/**
 * A Micrometer {@link Observation} named {@value #NAME} per cross-cluster transaction, from
 * before it begins to its outcome, current on the transaction's thread (so records sent inside
 * it carry its trace context, and a listener's receive observation is its parent). Low-cardinality
 * keys {@value #OUTCOME} ({@code committed}, {@code aborted}, {@code in_doubt},
 * {@code heuristic}), {@value #CLUSTERS} (clusters enlisted) and {@value #DATABASES} (databases
 * enlisted); high-cardinality key
 * {@value #TRANSACTION_ID}. The protocol's steps are events: {@code tandem.prepare} (sends done),
 * {@code tandem.prepared} (every participant flushed), {@code tandem.decided} (decision durable),
 * {@code tandem.commit.partial} (first participant committed, only with a fault-injecting hook)
 * and {@code tandem.committed}. Each record sent inside a transaction can also be an observation
 * {@value #SEND_NAME} (what writes the trace headers into it), like Spring Kafka's
 * {@code KafkaTemplate} observations: a timer started and stopped per record, so off unless
 * asked for ({@link #ObservationTransactionObserver(ObservationRegistry, boolean)}; the starter
 * follows {@code spring.kafka.template.observation-enabled}). Also a {@link ProtocolHook} that
 * only observes. Thread-safe.
 *
 * @since 0.1.0
 */
public class ObservationTransactionObserver implements TandemTransactionObserver, ProtocolHook {

	/** Observation name. */
	public static final String NAME = "tandem.transaction";

	/** Name of the observation of one record sent inside a transaction. */
	public static final String SEND_NAME = "tandem.send";

	/** Low-cardinality key of the outcome. */
	public static final String OUTCOME = "tandem.outcome";

	/** Low-cardinality key of the number of clusters enlisted. */
	public static final String CLUSTERS = "tandem.clusters";

	/** Low-cardinality key of the number of databases enlisted (database participants). */
	public static final String DATABASES = "tandem.databases";

	/** High-cardinality key of the transaction id. */
	public static final String TRANSACTION_ID = "tandem.transaction.id";

	private final ObservationRegistry registry;

	private final boolean observeSends;

	private final Map<String, Observation> byTransaction = new ConcurrentHashMap<>();

	/**
	 * Creates an observer of transactions and of every record sent in them.
	 * @param registry the registry observations are made in
	 */
	public ObservationTransactionObserver(ObservationRegistry registry) {
		this(registry, true);
	}

	/**
	 * Creates an observer of transactions, and of every record sent in them if asked.
	 * @param registry the registry observations are made in
	 * @param observeSends whether each send is a {@value #SEND_NAME} observation that writes the
	 * current trace context into the record's headers; without it records carry no trace headers
	 */
	public ObservationTransactionObserver(ObservationRegistry registry, boolean observeSends) {
		this.registry = registry;
		this.observeSends = observeSends;
	}

	@Override
	public Observed start() {
		Observation observation = Observation.createNotStarted(NAME, this.registry)
			.contextualName("tandem transaction")
			.start();
		return new ObservedTransaction(observation, observation.openScope());
	}

	/**
	 * Observes a send as {@value #SEND_NAME} (low-cardinality keys {@code tandem.cluster} and
	 * {@code messaging.destination.name}), with a sender context that writes propagated trace
	 * headers into the record; only calls {@code send} if this observer does not observe sends.
	 */
	@Override
	public <T> T observeSend(String cluster, ProducerRecord<?, ?> record, Supplier<T> send) {
		if (!this.observeSends) {
			return send.get();
		}
		SenderContext<ProducerRecord<?, ?>> context = new SenderContext<>(
				(carrier, key, value) -> carrier.headers().remove(key).add(key, value.getBytes(StandardCharsets.UTF_8)));
		context.setCarrier(record);
		context.setRemoteServiceName("Apache Kafka: " + cluster);
		return Observation.createNotStarted(SEND_NAME, () -> context, this.registry)
			.contextualName(record.topic() + " send")
			.lowCardinalityKeyValue("tandem.cluster", cluster)
			.lowCardinalityKeyValue("messaging.destination.name", record.topic())
			.observe(send);
	}

	@Override
	public void reached(String transactionId, ProtocolStep step) {
		Observation observation = this.byTransaction.get(transactionId);
		if (observation != null) {
			observation.event(Observation.Event.of(eventName(step)));
		}
	}

	@Override
	public boolean injectsFaults() {
		return false;
	}

	static String eventName(ProtocolStep step) {
		return switch (step) {
			case BEFORE_PREPARE -> "tandem.prepare";
			case AFTER_PREPARE -> "tandem.prepared";
			case AFTER_DECISION -> "tandem.decided";
			case MID_COMMIT -> "tandem.commit.partial";
			case AFTER_COMMIT -> "tandem.committed";
		};
	}

	private final class ObservedTransaction implements Observed {

		private final Observation observation;

		private final Observation.Scope scope;

		private @Nullable CrossClusterTransaction transaction;

		private boolean detached;

		ObservedTransaction(Observation observation, Observation.Scope scope) {
			this.observation = observation;
			this.scope = scope;
		}

		@Override
		public void begun(CrossClusterTransaction transaction) {
			this.transaction = transaction;
			this.observation.highCardinalityKeyValue(KeyValue.of(TRANSACTION_ID, transaction.transactionId()));
			ObservationTransactionObserver.this.byTransaction.put(transaction.transactionId(), this.observation);
		}

		@Override
		public void ended(Outcome outcome, @Nullable Throwable failure) {
			CrossClusterTransaction transaction = this.transaction;
			int clusters = (transaction != null) ? transaction.enlistedClusters().size() : 0;
			int databases = (transaction != null) ? transaction.enlistedDatabases().size() : 0;
			this.observation.lowCardinalityKeyValue(KeyValue.of(OUTCOME, outcome.name().toLowerCase(Locale.ROOT)))
				.lowCardinalityKeyValue(KeyValue.of(CLUSTERS, String.valueOf(clusters)))
				.lowCardinalityKeyValue(KeyValue.of(DATABASES, String.valueOf(databases)));
			if (failure != null) {
				this.observation.error(failure);
			}
		}

		@Override
		public void close() {
			CrossClusterTransaction transaction = this.transaction;
			if (transaction != null) {
				ObservationTransactionObserver.this.byTransaction.remove(transaction.transactionId());
			}
			if (!this.detached) {
				this.scope.close();
			}
			this.observation.stop();
		}

		@Override
		public void detach() {
			if (!this.detached) {
				this.detached = true;
				this.scope.close();
			}
		}

	}

}
