package dev.tandem.transaction;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link TransactionSynchronization}s and {@link TransactionThreadBinding}s on two real clusters:
 * a thread binding holds while the template's work runs and is undone after the commit; a
 * synchronization's {@code beforePrepare} runs before phase one and its refusal aborts the
 * transaction everywhere; {@code afterCompletion} sees the final state.
 */
class TransactionSynchronizationTests {

	private static final String TOPIC = "synchronization-tests";

	private static final StringSerializer STRING = new StringSerializer();

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST1_WEST1);

	/** What the binding and the synchronizations saw, in order. */
	private final List<String> events = new ArrayList<>();

	private final ThreadLocal<String> bound = new ThreadLocal<>();

	private CrossClusterTransactionManager manager;

	@BeforeAll
	static void topics() {
		kafka.cluster("east").createTopic(TOPIC, 1, (short) 1);
		kafka.cluster("west").createTopic(TOPIC, 1, (short) 1);
	}

	@AfterEach
	void close() {
		if (this.manager != null) {
			this.manager.close();
		}
	}

	private CrossClusterTransactionTemplate template() {
		this.manager = CrossClusterTransactionManager.builder()
			.cluster("east", Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("east").bootstrapServers()))
			.cluster("west", Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster("west").bootstrapServers()))
			.idPrefix("synchronization-tests")
			.instanceId("app-0")
			.decisionLog(new InMemoryDecisionLog())
			.threadBinding((transaction) -> {
				this.bound.set(transaction.transactionId());
				this.events.add("bind");
				return () -> {
					this.bound.remove();
					this.events.add("unbind");
				};
			})
			.build();
		this.manager.start();
		return new CrossClusterTransactionTemplate(this.manager);
	}

	private void sendBoth(CrossClusterTransaction transaction, String value) {
		transaction.send("east", new ProducerRecord<>(TOPIC, value, value), STRING, STRING);
		transaction.send("west", new ProducerRecord<>(TOPIC, value, value), STRING, STRING);
	}

	private TransactionSynchronization recording(boolean refuse) {
		return new TransactionSynchronization() {

			@Override
			public void beforePrepare() {
				TransactionSynchronizationTests.this.events.add("beforePrepare");
				if (refuse) {
					throw new IllegalStateException("refused before prepare");
				}
			}

			@Override
			public void afterCompletion(TransactionState state) {
				TransactionSynchronizationTests.this.events.add("afterCompletion " + state);
			}

		};
	}

	@Test
	void aSynchronizationRunsBeforePrepareAndAfterCompletionWhileTheThreadBindingHolds() {
		CrossClusterTransactionTemplate template = template();
		String id = template.execute((transaction) -> {
			assertThat(this.bound.get()).isEqualTo(transaction.transactionId());
			transaction.putResource(this, "resource");
			assertThat(transaction.getResource(this)).isEqualTo("resource");
			transaction.registerSynchronization(recording(false));
			sendBoth(transaction, "committed-1");
			return transaction.transactionId();
		});

		assertThat(id).isNotBlank();
		assertThat(this.bound.get()).isNull();
		assertThat(this.events).containsExactly("bind", "beforePrepare", "afterCompletion COMMITTED", "unbind");
		assertThat(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), TOPIC)).contains("committed-1");
		assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), TOPIC)).contains("committed-1");
	}

	@Test
	void aPipelinedTransactionRunsBeforePrepareOnTheThreadThatHandsItOver() {
		CrossClusterTransactionTemplate template = template();
		List<String> threads = new ArrayList<>();
		try (TransactionPipeline pipeline = this.manager.pipeline(2)) {
			CrossClusterTransactionTemplate.Pipelined<Void> pipelined = template.executePipelined(pipeline,
					(transaction) -> {
						transaction.registerSynchronization(new TransactionSynchronization() {

							@Override
							public void beforePrepare() {
								threads.add(Thread.currentThread().getName());
							}

						});
						sendBoth(transaction, "pipelined-1");
						return null;
					});
			assertThat(threads).containsExactly(Thread.currentThread().getName());
			pipelined.outcome().join();
		}

		assertThat(this.events).containsExactly("bind", "unbind");
		for (String cluster : List.of("east", "west")) {
			assertThat(ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), TOPIC)).contains("pipelined-1");
		}
	}

	@Test
	void aSynchronizationThatRefusesBeforePrepareAbortsTheTransactionEverywhere() {
		CrossClusterTransactionTemplate template = template();
		assertThatExceptionOfType(TransactionAbortedException.class).isThrownBy(() -> template.execute((transaction) -> {
			transaction.registerSynchronization(recording(true));
			sendBoth(transaction, "refused-1");
			return null;
		})).withCauseInstanceOf(IllegalStateException.class).withMessageContaining("refused before prepare");
		// a later transaction's records are visible, so the refused one's would be too had they committed
		template.execute((transaction) -> {
			sendBoth(transaction, "after-refused-1");
			return null;
		});

		assertThat(this.events).containsExactly("bind", "beforePrepare", "afterCompletion ABORTED", "unbind", "bind",
				"unbind");
		for (String cluster : List.of("east", "west")) {
			assertThat(ReadCommitted.values(kafka.cluster(cluster).bootstrapServers(), TOPIC)).contains("after-refused-1")
				.doesNotContain("refused-1");
		}
	}

}
