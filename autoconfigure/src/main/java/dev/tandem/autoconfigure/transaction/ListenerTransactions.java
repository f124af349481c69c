package dev.tandem.autoconfigure.transaction;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import org.aopalliance.intercept.MethodInvocation;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.ProxyMethodInvocation;

import dev.tandem.autoconfigure.TandemProperties.Listener.FailedRecordAction;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionTemplate;
import dev.tandem.transaction.DatabaseFailures;
import dev.tandem.transaction.InDoubtTransactionException;
import dev.tandem.transaction.TransactionAbortedException;
import dev.tandem.transaction.TransactionState;

/**
 * Runs one listener delivery in cross-cluster transactions so that a failing record costs only
 * itself. The delivery first runs whole, in one transaction with its offsets. When the listener
 * throws (and the rollback rule aborts), the delivery is narrowed: to the record a
 * {@code BatchListenerFailedException} names (by index or record), the records before it and
 * after it each in a transaction of their own; without such an index, by bisection into two
 * halves, each in its own transaction, until the failing record is alone. A record alone is
 * tried {@link FailedRecordPolicy#attempts()} times in all, {@link FailedRecordPolicy#backOff()}
 * apart; then it is published to its dead-letter topic in the same cross-cluster transaction as
 * its offset ({@link FailedRecordAction#DEAD_LETTER}), or {@link FailedRecordException} stops
 * the container with its offset uncommitted ({@link FailedRecordAction#STOP}). Records are
 * committed in delivery order, so a partition's committed offset only moves forward; nothing is
 * ever skipped with its offset committed and nothing written.
 * <p>
 * With {@link ListenerPipelines} (a batch listener, {@code tandem.listener.pipeline-depth} 2 or
 * more) the whole delivery joins the consumer's open transaction, which spans deliveries and
 * commits on the pipeline; a listener failure on a later delivery of it aborts it whole and
 * its deliveries come again, each alone until the failing one is narrowed here.
 * <p>
 * A listener exception that the rollback rule commits on (by default a checked one, the
 * {@code SQLException} of a database outage say; a non-transient database failure, a constraint
 * violation, rolls back: {@code CrossClusterTransactionTemplate.defaultRollback}, so a record
 * that breaks the database branch is narrowed like any failing one) does not reach the
 * container's error handler: the transaction
 * commits with the records' offsets (and, pipelined, with the deliveries before it) and the
 * exception is logged at WARN; were it rethrown, the error handler would seek back and deliver
 * the committed records again, or, after a pipelined commit that failed, seek past the records
 * the pipeline had just sought back to (records lost, issue 28). When that commit fails, the
 * records are delivered again: pipelined, by the pipeline's rewind; otherwise as below. Declare
 * {@code rollbackFor} to have such an exception abort and be narrowed instead.
 * <p>
 * A failure that is not the listener's (a commit that fails, a cluster that cannot be reached)
 * is not narrowed: it propagates, and the container's error handler delivers the records again;
 * never once a pipeline has sought the consumer back (the pipeline owns the outcome then).
 * Confined to the listener thread.
 *
 * @since 0.1.0
 */
final class ListenerTransactions {

	private static final Logger logger = LoggerFactory.getLogger(ListenerTransactions.class);

	private static final String BATCH_LISTENER_FAILED = "org.springframework.kafka.listener.BatchListenerFailedException";

	private final CrossClusterTransactionTemplate template;

	private final Predicate<Throwable> rollbackOn;

	private final FailedRecordPolicy policy;

	private final @Nullable DeadLetterPublisher deadLetters;

	private final TandemTransactionObserver observer;

	private final ListenerInvocation delivery;

	private final @Nullable ListenerPipelines pipelines;

	private final ProxyMethodInvocation invocation;

	private final Object[] arguments;

	/** Records {@code [0, settled)} are committed or dead-lettered: processing goes left to right. */
	private int settled;

	/** Records {@code [0, limit)} are this call's; the rest were sought back (see {@link DeliveryBudget}). */
	private int limit;

	/** Whether the listener ran (a delivery sought back for an earlier failure does not). */
	private boolean invoked;

	/** Whether the listener's arguments can be cut to a part of the delivery ({@link #sliceable()}). */
	private boolean sliceable;

	ListenerTransactions(CrossClusterTransactionTemplate template, Predicate<Throwable> rollbackOn,
			FailedRecordPolicy policy, @Nullable DeadLetterPublisher deadLetters, TandemTransactionObserver observer,
			ListenerInvocation delivery, @Nullable ListenerPipelines pipelines, ProxyMethodInvocation invocation) {
		this.template = template;
		this.pipelines = pipelines;
		this.observer = observer;
		this.rollbackOn = rollbackOn;
		this.policy = policy;
		this.deadLetters = deadLetters;
		this.delivery = delivery;
		// cloned before anything proceeds, so that each attempt runs the rest of the chain again
		this.invocation = (ProxyMethodInvocation) invocation.invocableClone();
		this.arguments = invocation.getArguments().clone();
	}

	/**
	 * Runs the delivery.
	 * @return the listener's result of the first, whole attempt, or null once narrowed
	 * @throws Throwable what the listener or the transaction threw and is not narrowed, or
	 *     {@link FailedRecordException}
	 */
	@Nullable Object run() throws Throwable {
		long started = System.nanoTime();
		List<ConsumerRecord<?, ?>> delivered = this.delivery.records();
		DeliveryBudget budget = (this.pipelines != null && this.delivery.batch()) ? this.pipelines.budget() : null;
		this.sliceable = sliceable();
		boolean cuttable = budget != null && this.sliceable;
		this.limit = cuttable ? budget.limit(this.delivery.consumer(), delivered.size()) : delivered.size();
		if (this.limit < delivered.size()) {
			// the records past the limit come with the next poll: neither processed nor committed here
			ListenerInvocation.seek(this.delivery.consumer(),
					ListenerInvocation.firstOffsets(delivered.subList(this.limit, delivered.size())));
		}
		try {
			return runLimited();
		}
		finally {
			if (budget != null && this.invoked) {
				budget.processed(this.delivery.cluster(), this.delivery.consumer(), this.limit, System.nanoTime() - started,
						cuttable);
			}
		}
	}

	private @Nullable Object runLimited() throws Throwable {
		int size = this.limit;
		// Batch listeners only: a record listener's next records of the same poll would still be
		// delivered after a rewind, so it commits each record before the next one.
		ListenerPipeline pipeline = (this.pipelines != null && this.pipelines.enabled() && size > 0
				&& this.delivery.batch()) ? this.pipelines.of(this.delivery.consumer()) : null;
		try {
			Attempt whole;
			if (pipeline != null && pipeline.rewindIfFailed(this.delivery.records())) {
				return null; // an earlier transaction failed: these records come again after its own
			}
			if (pipeline != null && pipeline.alone(this.delivery.records())) {
				// records of a pipelined transaction whose commit failed on the database for good:
				// a transaction of their own, whose failure is narrowed to its record. The pipeline's
				// transactions end first: a transaction of its own is not ordered behind them, so it
				// could otherwise commit offsets past the records of one that then fails, and write
				// to a target partition ahead of records sent before it.
				pipeline.closeOpen();
				if (pipeline.drainAndRewind(this.delivery.records())) {
					return null; // one of them failed: these records come again after its own
				}
				pipeline = null;
			}
			if (pipeline != null) {
				whole = spanningAttempt(pipeline);
				if (whole.failure == null) {
					return whole.result;
				}
				// the listener failed on the first delivery of its transaction: the transactions
				// before it first, then narrowing
				if (pipeline.drainAndRewind(this.delivery.records())) {
					return null;
				}
			}
			else {
				whole = attempt(0, size);
			}
			if (whole.failure == null) {
				return whole.result;
			}
			if (size == 0) {
				throw whole.failure;
			}
			throwIfTransient(whole.failure); // pipelined: once the transactions before it are done
			if (size == 1) {
				settle(0, whole.failure, 1);
			}
			else if (!this.sliceable) {
				// narrowing would commit a slice's offsets for a listener that processed every record;
				// index 0: the error handler seeks every record back and commits nothing
				throw new org.springframework.kafka.listener.BatchListenerFailedException("Listener on cluster '" + this.delivery.cluster() + "' failed on a batch of "
						+ size + " records that Tandem cannot narrow: an argument holds the records in a form it cannot "
						+ "cut (a Message<List<..>>, or a list a record filter shortened); the batch is delivered again "
						+ "whole. Take List<ConsumerRecord<..>> or List<payload> to have a failing record cost only itself.",
						whole.failure, 0);
			}
			else {
				narrow(0, size, whole.failure);
			}
			return null;
		}
		catch (FailedRecordException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			if (this.delivery.batch() && size > 0 && !isBatchListenerFailed(ex)) {
				// Not the listener's failure: the container's error handler seeks back to the first
				// record not yet committed and delivers from there again; the ones before it were
				// committed by their own transactions (Spring Kafka commits the same offsets again).
				throw new org.springframework.kafka.listener.BatchListenerFailedException(
						"Cross-cluster transaction of a listener batch failed; delivering it again from record "
								+ this.settled,
						ex, Math.min(this.settled, size - 1));
			}
			throw ex;
		}
	}

	private static boolean isBatchListenerFailed(Throwable ex) {
		for (Throwable current = ex; current != null; current = (current.getCause() == current) ? null : current.getCause()) {
			if (current.getClass().getName().equals(BATCH_LISTENER_FAILED)) {
				return true;
			}
		}
		return false;
	}

	private void process(int from, int to) throws Throwable {
		Attempt attempt = attempt(from, to);
		if (attempt.failure != null) {
			if (to - from == 1) {
				settle(from, attempt.failure, 1);
			}
			else {
				narrow(from, to, attempt.failure);
			}
		}
	}

	private void narrow(int from, int to, Throwable failure) throws Throwable {
		int index = failedIndex(failure, from, to);
		if (index >= 0) {
			logger.info("Listener on cluster '{}' failed on record {} of {} (BatchListenerFailedException); committing "
					+ "the others in transactions of their own", this.delivery.cluster(), index - from, to - from);
			if (index > from) {
				process(from, index);
			}
			settle(index, failure, 1);
			if (index + 1 < to) {
				process(index + 1, to);
			}
			return;
		}
		int middle = from + (to - from) / 2;
		logger.debug("Listener on cluster '{}' failed on a batch of {} records; bisecting", this.delivery.cluster(),
				to - from);
		process(from, middle);
		process(middle, to);
	}

	/** One record alone failed {@code used} times so far. */
	private void settle(int index, Throwable failure, int used) throws Throwable {
		Throwable last = failure;
		for (int attempts = used; attempts < this.policy.attempts(); attempts++) {
			pause();
			Attempt attempt = attempt(index, index + 1);
			if (attempt.failure == null) {
				return;
			}
			last = attempt.failure;
		}
		ConsumerRecord<?, ?> record = this.delivery.records().get(index);
		if (this.policy.action() == FailedRecordAction.DEAD_LETTER && this.deadLetters != null) {
			DeadLetterPublisher publisher = this.deadLetters;
			Throwable cause = last;
			String groupId = groupId();
			CrossClusterTransactionTemplate deadLetterTemplate = this.template
				.withRollbackOn(CrossClusterTransactionTemplate::defaultRollback);
			try {
				untilDecided(() -> ObservedTransactions.execute(this.observer, deadLetterTemplate,
						(CrossClusterTransaction transaction) -> {
					publisher.publish(this.delivery.cluster(), groupId, record, cause);
					transaction.sendOffsets(this.delivery.consumer(), ListenerInvocation.nextOffsets(List.of(record)));
					return null;
				}));
			}
			catch (Throwable ex) {
				// bounded by the commit timeout (the producers' max.block.ms); the record comes again
				logger.warn("Record {}-{}@{} of cluster '{}' failed {} attempt(s) and could not be published to {} on "
						+ "cluster '{}': {}; its offset is not committed and it is delivered again", record.topic(),
						record.partition(), record.offset(), this.delivery.cluster(), this.policy.attempts(),
						publisher.topic(record.topic()), publisher.cluster(this.delivery.cluster()), String.valueOf(ex));
				throw ex;
			}
			this.settled = Math.max(this.settled, index + 1);
			logger.warn("Record {}-{}@{} of cluster '{}' failed {} attempt(s) and was published to {} on cluster '{}' "
					+ "with its offset: {}", record.topic(), record.partition(), record.offset(), this.delivery.cluster(),
					this.policy.attempts(), publisher.topic(record.topic()), publisher.cluster(this.delivery.cluster()),
					String.valueOf(last));
			return;
		}
		throw new FailedRecordException(record, this.policy.attempts(), last);
	}

	private @Nullable String groupId() {
		try {
			return this.delivery.consumer().groupMetadata().groupId();
		}
		catch (RuntimeException ex) {
			return null;
		}
	}

	private void pause() throws InterruptedException {
		Duration backOff = this.policy.backOff();
		if (!backOff.isZero()) {
			Thread.sleep(backOff.toMillis());
		}
	}

	/**
	 * Runs records {@code [from, to)} in one new transaction with their offsets.
	 * @return the result, or the listener's failure when it aborted the transaction
	 * @throws Throwable anything else: the transaction's own failures (a listener failure that
	 *     the rollback rule lets commit, once committed, is an attempt without failure)
	 */
	private Attempt attempt(int from, int to) throws Throwable {
		List<ConsumerRecord<?, ?>> records = this.delivery.records().subList(from, to);
		Object[] arguments = slice(from, to);
		Throwable[] listenerFailure = new Throwable[1];
		try {
			Object result = untilDecided(() -> ObservedTransactions.execute(this.observer, this.template,
					invoke(records, arguments, listenerFailure)));
			this.settled = Math.max(this.settled, to);
			return new Attempt(result, null);
		}
		catch (Throwable ex) {
			if (ex == listenerFailure[0] && !this.rollbackOn.test(ex)) {
				// the rule let it commit and the commit succeeded (a failed one throws its own
				// exception): the records are done, the error handler must not deliver them again
				this.settled = Math.max(this.settled, to);
				committedOnListenerFailure(ex);
				return new Attempt(null, null);
			}
			Attempt failed = listenerFailed(ex, listenerFailure[0], records);
			throwIfTransient(failed.failure);
			return failed;
		}
	}

	/**
	 * A listener failure that is a transient database failure ({@link DatabaseFailures#isTransient}:
	 * the database down or restarting, a deadlock), which the rollback rule aborted on (an unchecked
	 * exception around it, as Spring's {@code JdbcTemplate} throws), is not the records' own: it is
	 * not narrowed nor failed, but thrown for the container to deliver the records again from the
	 * first one not settled, as a commit that fails is; a record listener's error handler retries it
	 * without end. A batch's is always thrown as a {@code BatchListenerFailedException} naming that
	 * record, never as the listener's own (whose index would have the error handler commit records
	 * that were not).
	 */
	private void throwIfTransient(@Nullable Throwable failure) throws Throwable {
		if (failure == null || !DatabaseFailures.isTransient(failure)) {
			return;
		}
		logger.info("Listener on cluster '{}' failed on a transient database failure ({}): its records are delivered "
				+ "again, not failed", this.delivery.cluster(), String.valueOf(failure));
		if (this.delivery.batch() && this.limit > 0) {
			throw new org.springframework.kafka.listener.BatchListenerFailedException(
					"Transient database failure under a listener batch; delivering it again from record " + this.settled,
					failure, Math.min(this.settled, this.limit - 1));
		}
		throw failure;
	}

	/**
	 * The listener threw what the rollback rule commits on, and its transaction committed: the
	 * exception is logged, not rethrown (the container's error handler would deliver the
	 * committed records again).
	 */
	private void committedOnListenerFailure(Throwable ex) {
		logger.warn("Listener on cluster '{}' threw an exception that the rollback rule commits on; its transaction "
				+ "committed with the records' offsets and the exception is not passed to the container's error "
				+ "handler", this.delivery.cluster(), ex);
	}

	/**
	 * The work of one attempt: the listener on the records' arguments, then their offsets; the
	 * listener's own exception is kept in {@code listenerFailure} to tell it from the
	 * transaction's.
	 */
	private CrossClusterTransactionTemplate.TransactionCallback<Object, Throwable> invoke(
			List<ConsumerRecord<?, ?>> records, Object[] arguments, Throwable[] listenerFailure) {
		return invoke(records, arguments, listenerFailure, true);
	}

	/**
	 * As {@link #invoke(List, Object[], Throwable[])}; without {@code offsets} the caller adds the
	 * records' offsets when it closes the transaction (a transaction spanning deliveries).
	 */
	private CrossClusterTransactionTemplate.TransactionCallback<Object, Throwable> invoke(
			List<ConsumerRecord<?, ?>> records, Object[] arguments, Throwable[] listenerFailure, boolean offsets) {
		return (@Nullable CrossClusterTransaction transaction) -> {
			Object value;
			this.invoked = true;
			if (transaction != null) {
				// The source cluster's marker goes out before the listener runs, so the offset
				// commit below does not wait behind it (issue 25).
				transaction.enlistClusterOf(this.delivery.consumer());
			}
			try {
				MethodInvocation call = this.invocation.invocableClone(arguments);
				value = call.proceed();
			}
			catch (Throwable ex) {
				listenerFailure[0] = ex;
				if (transaction != null && offsets && !this.rollbackOn.test(ex)) {
					// the rollback rule commits on it: with the records' offsets, or the records
					// would come again after a restart or a rebalance
					transaction.sendOffsets(this.delivery.consumer(), ListenerInvocation.nextOffsets(records));
				}
				throw ex;
			}
			if (transaction != null && offsets) {
				transaction.sendOffsets(this.delivery.consumer(), ListenerInvocation.nextOffsets(records));
			}
			return value;
		};
	}

	/**
	 * An attempt threw: the listener's failure that the rollback rule aborted becomes the
	 * attempt's failure; anything else is rethrown.
	 */
	private Attempt listenerFailed(Throwable ex, @Nullable Throwable listenerFailure, List<ConsumerRecord<?, ?>> records)
			throws Throwable {
		if (ex == listenerFailure && this.rollbackOn.test(ex)) {
			logger.debug("Listener on cluster '{}' failed on {} record(s) from {}-{}@{}: {}", this.delivery.cluster(),
					records.size(), records.get(0).topic(), records.get(0).partition(), records.get(0).offset(),
					String.valueOf(ex));
			return new Attempt(null, ex);
		}
		if (ex instanceof TransactionAbortedException && DatabaseFailures.isNonTransient(ex)) {
			// The commit aborted on a database failure that fails every time: a deferred
			// constraint that the prepare checks, a statement failure the listener caught (the
			// branch then refuses the prepare with 25P02). Delivered again, the records would fail
			// the same way without end: they fail like a listener failure instead.
			logger.debug("Transaction of {} record(s) from {}-{}@{} on cluster '{}' aborted at commit on the database: {}",
					records.size(), records.get(0).topic(), records.get(0).partition(), records.get(0).offset(),
					this.delivery.cluster(), String.valueOf(ex));
			return new Attempt(null, ex);
		}
		throw ex;
	}

	/**
	 * Runs the whole delivery in the consumer's open transaction (begun on its pipeline if none is
	 * open), which stays open when the listener returns, so that the next deliveries join it; it is
	 * closed and commits on the pipeline, while the container delivers the next records, once it is
	 * due ({@link ListenerPipelines}).
	 * @return the result (null after a listener failure the rollback rule committed on); the
	 *     listener's failure when it aborted the first delivery of a transaction; or
	 *     {@link Attempt#REWOUND} when it aborted a later one, or when the transaction the rule
	 *     let commit did not commit: its deliveries are sought back and delivered again
	 * @throws Throwable as {@link #attempt(int, int)}
	 */
	private Attempt spanningAttempt(ListenerPipeline pipeline) throws Throwable {
		List<ConsumerRecord<?, ?>> records = this.delivery.records().subList(0, this.limit);
		Object[] arguments = slice(0, records.size());
		Throwable[] listenerFailure = new Throwable[1];
		ListenerPipeline.Open open = pipeline.open();
		boolean spanned = open != null;
		if (open == null) {
			open = pipeline.begin(this.observer);
		}
		// from now on these records are the open transaction's: a failure rewinds them with it
		open.added(records);
		Object result;
		try {
			result = this.template.executeIn(open.transaction(), invoke(records, arguments, listenerFailure, false));
		}
		catch (Throwable ex) {
			open.detach();
			if (open.transaction().state() == TransactionState.ACTIVE) {
				// The rollback rule lets it commit, with the deliveries before it. The pipeline owns
				// the outcome: committed, the delivery is done; failed (a database branch that could
				// not begin aborts at prepare), the consumer was sought back to the transaction's
				// first offsets. Either way the exception must not reach the container's error
				// handler, whose seek would deliver committed records again or skip past the
				// rewind's (issue 28).
				pipeline.closeOpen();
				if (pipeline.drainAndRewind(List.of())) {
					logger.warn("Listener on cluster '{}' threw {}, which the rollback rule commits on, but its "
							+ "transaction did not commit: its records are delivered again", this.delivery.cluster(),
							String.valueOf(ex));
					return Attempt.REWOUND;
				}
				this.settled = records.size();
				committedOnListenerFailure(ex);
				return new Attempt(null, null);
			}
			if (spanned) {
				// aborted with the earlier deliveries it held: all of them are delivered again
				pipeline.abandon(records, ex);
				return Attempt.REWOUND;
			}
			pipeline.forgetOpen(ex);
			return listenerFailed(ex, listenerFailure[0], records);
		}
		open.detach();
		this.settled = records.size();
		pipeline.delivered();
		return new Attempt(result, null);
	}

	/**
	 * Runs a transaction; when its outcome is in doubt, waits for the background resolution and
	 * runs it again if it was resolved as aborted (its records must be processed again).
	 */
	private static @Nullable Object untilDecided(Work work) throws Throwable {
		while (true) {
			try {
				return work.run();
			}
			catch (InDoubtTransactionException ex) {
				try {
					return CrossClusterTransactionInterceptor.awaitListenerOutcome(ex);
				}
				catch (TransactionAbortedException aborted) {
					logger.info("In-doubt listener transaction {} was aborted; processing its records again",
							ex.getTransactionId());
				}
			}
		}
	}

	@FunctionalInterface
	private interface Work {

		@Nullable Object run() throws Throwable;

	}

	/**
	 * Whether {@link #slice(int, int)} can cut what the listener gets to any part of the delivery:
	 * some argument is a list (or {@link ConsumerRecords}) with one element per delivered record,
	 * no other argument is a list of another size (a batch a record filter shortened) and none is
	 * a {@code Message} (whose list payload would reach the listener whole).
	 */
	private boolean sliceable() {
		int size = this.delivery.records().size();
		boolean perRecord = false;
		for (Object argument : this.arguments) {
			if (argument instanceof org.springframework.messaging.Message<?>) {
				return false;
			}
			if (argument instanceof List<?> list) {
				if (list.size() != size) {
					return false;
				}
				perRecord = true;
			}
			else if (argument instanceof ConsumerRecords<?, ?> records) {
				if (records.count() != size) {
					return false;
				}
				perRecord = true;
			}
		}
		return perRecord;
	}

	/**
	 * The listener's arguments for records {@code [from, to)}: each list (or
	 * {@link ConsumerRecords}) with one element per delivered record is cut to the slice.
	 */
	private Object[] slice(int from, int to) {
		int size = this.delivery.records().size();
		Object[] sliced = this.arguments.clone();
		if (from == 0 && to == size) {
			return sliced;
		}
		for (int i = 0; i < sliced.length; i++) {
			if (sliced[i] instanceof List<?> list && list.size() == size) {
				sliced[i] = new ArrayList<>(list.subList(from, to));
			}
			else if (sliced[i] instanceof ConsumerRecords<?, ?> records && records.count() == size) {
				sliced[i] = consumerRecords(this.delivery.records().subList(from, to));
			}
		}
		return sliced;
	}

	@SuppressWarnings({ "unchecked", "rawtypes" })
	private static ConsumerRecords<?, ?> consumerRecords(List<ConsumerRecord<?, ?>> records) {
		Map<TopicPartition, List<ConsumerRecord>> byPartition = new LinkedHashMap<>();
		for (ConsumerRecord<?, ?> record : records) {
			byPartition.computeIfAbsent(new TopicPartition(record.topic(), record.partition()), (tp) -> new ArrayList<>())
				.add(record);
		}
		Map<TopicPartition, OffsetAndMetadata> next = ListenerInvocation.nextOffsets(records);
		return new ConsumerRecords(byPartition, next);
	}

	/**
	 * The index in {@code [from, to)} that a {@code BatchListenerFailedException} in the
	 * failure's causes names (relative to the slice the listener received), or -1.
	 */
	private int failedIndex(Throwable failure, int from, int to) {
		for (Throwable current = failure; current != null; current = current.getCause()) {
			if (current.getClass().getName().equals(BATCH_LISTENER_FAILED)) {
				org.springframework.kafka.listener.BatchListenerFailedException failed = (org.springframework.kafka.listener.BatchListenerFailedException) current;
				ConsumerRecord<?, ?> record = failed.getRecord();
				if (record != null) {
					for (int i = from; i < to; i++) {
						ConsumerRecord<?, ?> candidate = this.delivery.records().get(i);
						if (candidate.topic().equals(record.topic()) && candidate.partition() == record.partition()
								&& candidate.offset() == record.offset()) {
							return i;
						}
					}
					return -1;
				}
				int index = failed.getIndex();
				return (index >= 0 && from + index < to) ? from + index : -1;
			}
			if (current.getCause() == current) {
				break;
			}
		}
		return -1;
	}

	private record Attempt(@Nullable Object result, @Nullable Throwable failure) {

		/** The delivery was sought back with the transaction it joined: it is delivered again. */
		static final Attempt REWOUND = new Attempt(null, null);

	}

}
