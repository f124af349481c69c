package dev.tandem.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for the lifecycle and the builder of {@link EmbeddedKafkaClusters}. Runs before the
 * other classes of the module (see {@code junit-platform.properties}): it counts every thread
 * of the JVM, and the shared clusters of a {@link ClusterPreset} stay up until the JVM's tests
 * are done.
 *
 * @author Tandem
 */
@Order(1)
class EmbeddedKafkaClustersLifecycleTests {

	@Test
	void builderRejectsInvalidClusterDeclarations() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> EmbeddedKafkaClusters.builder().cluster("east", 1).cluster("east", 3))
			.withMessageContaining("already declared");
		assertThatIllegalArgumentException().isThrownBy(() -> EmbeddedKafkaClusters.builder().cluster("east", 0))
			.withMessageContaining("at least 1 broker");
		assertThatIllegalArgumentException().isThrownBy(() -> EmbeddedKafkaClusters.builder().cluster("../east", 1))
			.withMessageContaining("Invalid cluster name");
		assertThatIllegalArgumentException().isThrownBy(() -> EmbeddedKafkaClusters.builder().minInSyncReplicas(0));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> EmbeddedKafkaClusters.builder().operationTimeout(Duration.ZERO));
		assertThatIllegalStateException().isThrownBy(() -> EmbeddedKafkaClusters.builder().build())
			.withMessageContaining("at least one cluster");
	}

	@Test
	void clustersAreNotAvailableBeforeStart() {
		EmbeddedKafkaClusters clusters = EmbeddedKafkaClusters.builder().cluster("east", 1).build();
		assertThat(clusters.names()).containsExactly("east");
		assertThatIllegalStateException().isThrownBy(() -> clusters.cluster("east")).withMessageContaining("CREATED");
		clusters.close();
		assertThatIllegalStateException().isThrownBy(clusters::start).withMessageContaining("CLOSED");
	}

	@Test
	void closeEndsEveryThreadItStartedAndDeletesTheLogDirectories() throws Exception {
		Set<Thread> before = liveNonDaemonThreads();
		EmbeddedKafkaClusters clusters = EmbeddedKafkaClusters.builder().cluster("solo", 1).build().start();
		Path directory = clusters.baseDirectory();
		EmbeddedKafkaCluster solo = clusters.cluster("solo");
		solo.createTopic("lifecycle", 1, (short) 1);
		KafkaTestRecords.produce(solo, "lifecycle", 1);
		assertThat(directory).isDirectory();
		assertThatIllegalStateException().isThrownBy(clusters::start).withMessageContaining("RUNNING");
		clusters.close();
		clusters.close();
		assertThat(directory).satisfies((path) -> assertThat(Files.exists(path)).isFalse());
		assertThatIllegalStateException().isThrownBy(solo::admin);
		await().atMost(Duration.ofSeconds(10)).pollInSameThread().untilAsserted(() -> {
			Set<Thread> leaked = liveNonDaemonThreads();
			leaked.removeAll(before);
			assertThat(leaked).extracting(Thread::getName).isEmpty();
		});
	}

	private static Set<Thread> liveNonDaemonThreads() {
		Map<Thread, StackTraceElement[]> threads = Thread.getAllStackTraces();
		return threads.keySet()
			.stream()
			.filter((thread) -> thread.isAlive() && !thread.isDaemon())
			.collect(Collectors.toSet());
	}

}
