package dev.tandem.transaction;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method (or every public method of the annotated class) in a cross-cluster
 * transaction: sends through Tandem's per-cluster templates join it, and on a
 * {@code @KafkaListener} of a Tandem listener container the consumed records' offsets are
 * committed on the consumer's own cluster inside it. The method's return commits everywhere; an
 * exception that asks for rollback aborts everywhere (rules as with Spring's
 * {@code @Transactional}: unchecked exceptions and errors by default; and a checked exception
 * holding a non-transient database failure, a constraint violation say:
 * {@link CrossClusterTransactionTemplate#defaultRollback(Throwable)}).
 * <p>
 * Applied by {@code tandem-spring-boot-autoconfigure} with Spring AOP proxies, so self-invocation
 * is not intercepted; without Spring use {@link CrossClusterTransactionTemplate}.
 *
 * @since 0.1.0
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface CrossClusterTransactional {

	/**
	 * How the method relates to a transaction already bound to the thread.
	 * @return the propagation
	 */
	Propagation propagation() default Propagation.REQUIRED;

	/**
	 * Exception types that abort the transaction in addition to those of the default rule
	 * ({@link CrossClusterTransactionTemplate#defaultRollback(Throwable)}).
	 * @return the types
	 */
	Class<? extends Throwable>[] rollbackFor() default {};

	/**
	 * Exception types that do not abort the transaction (it commits, then the exception
	 * propagates); wins over {@link #rollbackFor()} for the same type.
	 * @return the types
	 */
	Class<? extends Throwable>[] noRollbackFor() default {};

}
