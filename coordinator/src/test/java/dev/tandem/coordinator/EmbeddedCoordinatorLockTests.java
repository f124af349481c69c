package dev.tandem.coordinator;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.tandem.transaction.Decision;
import dev.tandem.transaction.DecisionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static dev.tandem.coordinator.state.TestDecisions.decision;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIOException;

/**
 * One data directory, one embedded coordinator: a second one, in another process (a second app
 * instance given the same {@code tandem.coordinator.data-dir}) or in this JVM, fails its start at
 * once naming the directory and leaves no thread behind (found by a new user's trial: Ratis
 * retried its storage lock, failed the start-up and left a non-daemon thread that kept the failed
 * app's JVM running); the lock dies with its process, so a restart after {@code kill -9} starts.
 * Real Ratis peers, the holder in a JVM of its own.
 */
class EmbeddedCoordinatorLockTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	@TempDir
	Path dataDir;

	@Test
	void aSecondCoordinatorOnADirectoryAnotherProcessUsesFailsAtOnceAndOneAfterItsKillStarts() throws Exception {
		Process holder = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), Holder.class.getName(), this.dataDir.toString())
			.redirectErrorStream(true)
			.start();
		try {
			BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
			String decided = CompletableFuture.supplyAsync(() -> readUntilReady(out)).get(60, TimeUnit.SECONDS);
			Set<String> threadsBefore = nonDaemonThreads();
			assertThatIOException().isThrownBy(() -> EmbeddedCoordinator.start(this.dataDir))
				.withMessageContaining("is in use by another embedded coordinator")
				.withMessageContaining(this.dataDir.toString());
			assertThat(nonDaemonThreads()).isEqualTo(threadsBefore);
			holder.destroyForcibly(); // kill -9: the operating system releases its lock
			assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
			try (EmbeddedCoordinator restarted = EmbeddedCoordinator.start(this.dataDir)) {
				assertThat(restarted.decisionLog().state(decided, TIMEOUT)).isEqualTo(DecisionState.DECIDED);
			}
		}
		finally {
			holder.destroyForcibly();
		}
	}

	@Test
	void aSecondCoordinatorOnADirectoryOfThisJvmFailsAndTheFirstKeepsServing() throws Exception {
		try (EmbeddedCoordinator first = EmbeddedCoordinator.start(this.dataDir)) {
			Decision decision = decision("tx-1", "app.i0", 1);
			first.decisionLog().decide(decision, TIMEOUT);
			assertThatIOException().isThrownBy(() -> EmbeddedCoordinator.start(this.dataDir))
				.withMessageContaining("is in use by another embedded coordinator");
			assertThat(first.decisionLog().state(decision.transactionId(), TIMEOUT)).isEqualTo(DecisionState.DECIDED);
		}
		// closed: the directory is free again
		try (EmbeddedCoordinator again = EmbeddedCoordinator.start(this.dataDir)) {
			assertThat(again.decisionLog().inDoubt("app.i0", TIMEOUT)).hasSize(1);
		}
	}

	private static String readUntilReady(BufferedReader out) {
		try {
			String line;
			while ((line = out.readLine()) != null) {
				if (line.startsWith("READY ")) {
					return line.substring("READY ".length());
				}
			}
			throw new IllegalStateException("The holder process ended before it was ready");
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static Set<String> nonDaemonThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> !thread.isDaemon() && thread.isAlive())
			.map(Thread::getName)
			.collect(Collectors.toSet());
	}

	/** The other process: starts a coordinator on the directory, decides one transaction, then waits to be killed. */
	public static final class Holder {

		public static void main(String[] args) throws Exception {
			EmbeddedCoordinator coordinator = EmbeddedCoordinator.start(Path.of(args[0]));
			Decision decision = decision("tx-held", "app.i0", 1);
			coordinator.decisionLog().decide(decision, TIMEOUT);
			System.out.println("READY " + decision.transactionId());
			System.out.flush();
			Thread.sleep(Long.MAX_VALUE);
		}

	}

}
