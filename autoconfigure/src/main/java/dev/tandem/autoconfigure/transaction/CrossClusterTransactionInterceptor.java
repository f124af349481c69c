package dev.tandem.autoconfigure.transaction;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeoutException;

import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.annotation.AnnotatedElementUtils;

import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionTemplate;
import dev.tandem.transaction.CrossClusterTransactional;
import dev.tandem.transaction.HeuristicOutcomeException;
import dev.tandem.transaction.InDoubtTransactionException;
import dev.tandem.transaction.Propagation;

/**
 * Applies {@link CrossClusterTransactional}: runs the method through a
 * {@link CrossClusterTransactionTemplate} with the annotation's propagation and rollback rules.
 * When the method is a Tandem listener's and the transaction is new, the delivered records'
 * offsets are committed inside it on the consumer's own cluster, and a failing record costs only
 * itself (see {@link ListenerTransactions}: the delivery is narrowed to the failing record, which
 * goes to a dead-letter topic with its offset or stops the container); when such a transaction
 * is in-doubt, the listener thread waits for its resolution: committed, the records are done;
 * aborted, they are delivered again.
 *
 * @since 0.1.0
 */
public class CrossClusterTransactionInterceptor implements MethodInterceptor {

	private static final Logger logger = LoggerFactory.getLogger(CrossClusterTransactionInterceptor.class);

	private final CrossClusterTransactionTemplate template;

	private final FailedRecordPolicy failedRecords;

	private final @Nullable DeadLetterPublisher deadLetters;

	private final TandemTransactionObserver observer;

	private final @Nullable ListenerPipelines pipelines;

	/**
	 * Creates an interceptor with the default failed-record policy, no dead-letter topics and no
	 * observation.
	 * @param template the template with default settings
	 */
	public CrossClusterTransactionInterceptor(CrossClusterTransactionTemplate template) {
		this(template, FailedRecordPolicy.DEFAULT, null, TandemTransactionObserver.NONE, null);
	}

	/**
	 * Creates an interceptor.
	 * @param template the template with default settings
	 * @param failedRecords what a listener does with a record that keeps failing
	 * @param deadLetters publishes failed records, or null if there is no dead-letter topic
	 * @param observer observes every new transaction
	 * @param pipelines the listeners' pipelines, or null to commit each delivery before the
	 *     listener returns
	 */
	public CrossClusterTransactionInterceptor(CrossClusterTransactionTemplate template, FailedRecordPolicy failedRecords,
			@Nullable DeadLetterPublisher deadLetters, TandemTransactionObserver observer,
			@Nullable ListenerPipelines pipelines) {
		this.template = template;
		this.failedRecords = failedRecords;
		this.deadLetters = deadLetters;
		this.observer = observer;
		this.pipelines = pipelines;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Class<?> targetClass = (invocation.getThis() != null) ? AopUtils.getTargetClass(invocation.getThis()) : null;
		CrossClusterTransactional annotation = find(invocation.getMethod(), targetClass);
		if (annotation == null) {
			return invocation.proceed();
		}
		java.util.function.Predicate<Throwable> rollbackOn = (ex) -> rollbackOn(annotation, ex);
		CrossClusterTransactionTemplate template = this.template.withPropagation(annotation.propagation())
			.withRollbackOn(rollbackOn);
		boolean newTransaction = annotation.propagation() == Propagation.REQUIRES_NEW
				|| (annotation.propagation() == Propagation.REQUIRED
						&& CrossClusterTransactionTemplate.currentTransaction() == null);
		ListenerInvocation listener = ListenerInvocation.current();
		boolean commitsOffsets = newTransaction && listener != null && invocation instanceof ProxyMethodInvocation
				&& listener.claim();
		if (!commitsOffsets) {
			if (!newTransaction) {
				return template.executeChecked((CrossClusterTransaction transaction) -> invocation.proceed());
			}
			return ObservedTransactions.execute(this.observer, template,
					(CrossClusterTransaction transaction) -> invocation.proceed());
		}
		try {
			return new ListenerTransactions(template, rollbackOn, this.failedRecords, this.deadLetters, this.observer,
					listener, this.pipelines, (ProxyMethodInvocation) invocation).run();
		}
		catch (InDoubtTransactionException ex) {
			return awaitListenerOutcome(ex);
		}
	}

	/**
	 * A listener's transaction is in-doubt: its records must be redelivered only if it aborts, so
	 * block the listener thread until background resolution says which.
	 */
	static @Nullable Object awaitListenerOutcome(InDoubtTransactionException ex) throws Exception {
		while (true) {
			try {
				ex.awaitCommitted(Duration.ofSeconds(30));
				logger.info("In-doubt listener transaction {} resolved as COMMITTED", ex.getTransactionId());
				return null;
			}
			catch (HeuristicOutcomeException heuristic) {
				// Not redelivered (the one rewind policy, see PipelinedOutcomes): that would duplicate
				// the records of the clusters that committed
				logger.error("In-doubt listener transaction {} resolved with a HEURISTIC outcome (some clusters "
						+ "committed, others aborted); its records are not delivered again", ex.getTransactionId());
				return null;
			}
			catch (TimeoutException timeout) {
				logger.warn("Listener transaction {} still in-doubt; waiting before taking more records",
						ex.getTransactionId());
			}
		}
	}

	private static @Nullable CrossClusterTransactional find(Method method, @Nullable Class<?> targetClass) {
		Method specific = (targetClass != null) ? AopUtils.getMostSpecificMethod(method, targetClass) : method;
		CrossClusterTransactional annotation = AnnotatedElementUtils.findMergedAnnotation(specific,
				CrossClusterTransactional.class);
		if (annotation == null && targetClass != null) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(targetClass, CrossClusterTransactional.class);
		}
		return annotation;
	}

	static boolean rollbackOn(CrossClusterTransactional annotation, Throwable ex) {
		if (Arrays.stream(annotation.noRollbackFor()).anyMatch((type) -> type.isInstance(ex))) {
			return false;
		}
		if (Arrays.stream(annotation.rollbackFor()).anyMatch((type) -> type.isInstance(ex))) {
			return true;
		}
		return CrossClusterTransactionTemplate.defaultRollback(ex);
	}

	/**
	 * Returns the manager behind this interceptor.
	 * @return the manager
	 */
	public CrossClusterTransactionManager getManager() {
		return this.template.getManager();
	}

}
