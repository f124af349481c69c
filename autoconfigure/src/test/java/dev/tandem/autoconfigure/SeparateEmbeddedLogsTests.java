package dev.tandem.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import dev.tandem.coordinator.EmbeddedCoordinator;
import dev.tandem.test.ClusterPreset;
import dev.tandem.test.EmbeddedKafkaClustersExtension;
import dev.tandem.test.ReadCommitted;
import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.DuplicateInstanceException;
import dev.tandem.transaction.TransactionStatistics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two managers with one instance id, each on an embedded coordinator of its own (each its own
 * decision log, as two pods of a starter app with the default coordinator), built through the
 * core API with default settings, on two real 3-broker clusters: the duplicate-instance check
 * through Kafka is on by itself ({@code DecisionLog.sharedByInstances()} is false for an
 * embedded log), one of them is refused, and no transaction is visible on one cluster only.
 */
class SeparateEmbeddedLogsTests {

	private static final StringSerializer STRING = new StringSerializer();

	/** How long both try to commit. */
	private static final Duration RUN = Duration.ofSeconds(8);

	@RegisterExtension
	static final EmbeddedKafkaClustersExtension kafka = new EmbeddedKafkaClustersExtension(ClusterPreset.EAST3_WEST3);

	@TempDir
	Path dataDirs;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private String topic = "";

	@BeforeEach
	void createTopics(TestInfo info) {
		this.topic = "t-" + info.getTestMethod().orElseThrow().getName();
		kafka.cluster("east").createTopic(this.topic, 3, (short) 3);
		kafka.cluster("west").createTopic(this.topic, 3, (short) 3);
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
	}

	/** A manager with default settings on an embedded coordinator of its own (not started). */
	private CrossClusterTransactionManager manager(String name, TransactionStatistics statistics) throws Exception {
		EmbeddedCoordinator coordinator = EmbeddedCoordinator.start(this.dataDirs.resolve(name));
		this.closeables.add(coordinator);
		CrossClusterTransactionManager manager = CrossClusterTransactionManager.builder()
			.cluster("east", clientConfig("east"))
			.cluster("west", clientConfig("west"))
			.idPrefix(this.topic)
			.instanceId("pod-0")
			.decisionLog(coordinator.decisionLog())
			.listener(statistics)
			.build();
		this.closeables.add(manager);
		return manager;
	}

	private static Map<String, Object> clientConfig(String cluster) {
		Map<String, Object> config = new HashMap<>();
		config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.cluster(cluster).bootstrapServers());
		return config;
	}

	/**
	 * Starts the manager when the latch opens, then commits transactions on both clusters until
	 * the run ends or it begins no more: returns the values of the transactions whose commit
	 * returned, or the refusal at start-up.
	 */
	private CompletableFuture<Set<String>> run(CrossClusterTransactionManager manager, String name,
			CountDownLatch go, Set<String> attempted) {
		return CompletableFuture.supplyAsync(() -> {
			try {
				go.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			manager.start();
			Set<String> committed = new HashSet<>();
			long end = System.nanoTime() + RUN.toNanos();
			for (int i = 0; System.nanoTime() < end; i++) {
				String value = name + "-" + i;
				CrossClusterTransaction txn;
				try {
					txn = manager.begin();
				}
				catch (DuplicateInstanceException ex) {
					break; // it found the other one while running: it begins no transaction any more
				}
				attempted.add(value);
				try {
					txn.send("east", new ProducerRecord<>(this.topic, value, value), STRING, STRING);
					txn.send("west", new ProducerRecord<>(this.topic, value, value), STRING, STRING);
					txn.commit();
					committed.add(value);
				}
				catch (RuntimeException ex) {
					// fenced, aborted, in doubt: counted on the clusters below
				}
			}
			return committed;
		});
	}

	@Test
	void twoStartedTogetherWithOneIdAndLogsOfTheirOwnLeaveNothingOnOneClusterOnly() throws Exception {
		TransactionStatistics firstStatistics = new TransactionStatistics();
		TransactionStatistics secondStatistics = new TransactionStatistics();
		CrossClusterTransactionManager first = manager("first", firstStatistics);
		CrossClusterTransactionManager second = manager("second", secondStatistics);
		Set<String> attempted = ConcurrentHashMap.newKeySet();
		CountDownLatch go = new CountDownLatch(1);
		CompletableFuture<Set<String>> firstRun = run(first, "first", go, attempted);
		CompletableFuture<Set<String>> secondRun = run(second, "second", go, attempted);
		go.countDown();
		List<Throwable> refusals = new ArrayList<>();
		Set<String> committed = new HashSet<>();
		for (CompletableFuture<Set<String>> run : List.of(firstRun, secondRun)) {
			try {
				committed.addAll(run.join());
			}
			catch (RuntimeException ex) {
				refusals.add((ex.getCause() != null) ? ex.getCause() : ex);
			}
		}
		assertThat(refusals).as("start-ups refused").hasSize(1)
			.allSatisfy((refusal) -> assertThat(refusal).isInstanceOf(DuplicateInstanceException.class));
		assertThat(committed).as("transactions of the instance that runs").isNotEmpty();
		// commitTransaction() returns before the commit markers reach the partitions
		await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
			assertThat(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), this.topic)).containsAll(committed);
			assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), this.topic)).containsAll(committed);
		});
		Set<String> east = new HashSet<>(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), this.topic));
		Set<String> west = new HashSet<>(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), this.topic));
		Set<String> eastOnly = new HashSet<>(east);
		eastOnly.removeAll(west);
		Set<String> westOnly = new HashSet<>(west);
		westOnly.removeAll(east);
		assertThat(eastOnly).as("transactions visible on east only").isEmpty();
		assertThat(westOnly).as("transactions visible on west only").isEmpty();
		assertThat(attempted).as("transactions begun").containsAll(east);
		assertThat(firstStatistics.snapshot().heuristic() + secondStatistics.snapshot().heuristic())
			.as("heuristic outcomes reported").isZero();
	}

	@Test
	void oneStartedWhileTheOtherRunsIsRefusedAndTheFirstKeepsCommitting() throws Exception {
		CrossClusterTransactionManager first = manager("first", new TransactionStatistics());
		first.start();
		CrossClusterTransactionManager second = manager("second", new TransactionStatistics());
		try {
			second.start();
			throw new AssertionError("the second instance with id pod-0 started");
		}
		catch (DuplicateInstanceException ex) {
			assertThat(ex.getOwner()).isEqualTo(first.owner());
		}
		CrossClusterTransaction txn = first.begin();
		txn.send("east", new ProducerRecord<>(this.topic, "k", "still-alone"), STRING, STRING);
		txn.send("west", new ProducerRecord<>(this.topic, "k", "still-alone"), STRING, STRING);
		txn.commit();
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
			assertThat(ReadCommitted.values(kafka.cluster("east").bootstrapServers(), this.topic))
				.containsExactly("still-alone");
			assertThat(ReadCommitted.values(kafka.cluster("west").bootstrapServers(), this.topic))
				.containsExactly("still-alone");
		});
	}

}
