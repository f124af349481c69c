package dev.tandem.mirror.app;

import java.util.concurrent.atomic.AtomicInteger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

import dev.tandem.transaction.ProtocolHook;
import dev.tandem.transaction.ProtocolStep;

/**
 * The mirror app as the chaos suite runs it ({@code MirrorChaosTests}): {@link MirrorApplication}
 * plus, when {@code chaos.halt-at-step} is set, a {@link ProtocolHook} that halts the JVM
 * ({@code Runtime.halt(137)}, as {@code kill -9} leaves it) the {@code chaos.halt-at-transaction}-th
 * time a transaction reaches that step. Test code only.
 */
public final class ChaosMirrorMain {

	private static final Logger logger = LoggerFactory.getLogger(ChaosMirrorMain.class);

	private ChaosMirrorMain() {
	}

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(MirrorApplication.class, Halt.class);
		application.setDefaultProperties(MirrorApplication.defaults());
		application.run(args);
	}

	/**
	 * The halt hook, only with {@code chaos.halt-at-step}.
	 */
	@ConditionalOnProperty(name = "chaos.halt-at-step")
	static class Halt {

		@Bean
		ProtocolHook chaosHaltHook(@Value("${chaos.halt-at-step}") ProtocolStep step,
				@Value("${chaos.halt-at-transaction:1}") int haltAt) {
			AtomicInteger reached = new AtomicInteger();
			return (transactionId, reachedStep) -> {
				if (reachedStep != step) {
					return;
				}
				int count = reached.incrementAndGet();
				if (count == haltAt) {
					// MirrorChaosTests reads this line to know where the mirror was cut off.
					logger.warn("HALT at {} of transaction {}", reachedStep, transactionId);
					Runtime.getRuntime().halt(137);
				}
				else if (count < haltAt) {
					// a run that never halts shows here how often the step was reached
					logger.info("Reached {} of transaction {} ({} of {} before the halt)", reachedStep, transactionId,
							count, haltAt);
				}
			};
		}

	}

}
