package dev.tandem.coordinator.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link CoordinatorServer#useCommonPoolForAsyncTasks()} in a JVM that sees 2 cores (as this
 * machine and small containers do): without it, every {@code CompletableFuture} async task
 * runs on a new thread; with it, on the common pool.
 */
class CommonPoolTests {

	@Test
	void onTwoCoresAsyncTasksGetANewThreadEachUnlessTheCommonPoolIsWidened() throws Exception {
		assertThat(asyncThreadNameInAFreshJvm(false)).startsWith("Thread-");
		assertThat(asyncThreadNameInAFreshJvm(true)).startsWith("ForkJoinPool.commonPool-worker-");
	}

	private static String asyncThreadNameInAFreshJvm(boolean widen) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-XX:ActiveProcessorCount=2", "-cp", System.getProperty("java.class.path"), Probe.class.getName()));
		if (widen) {
			command.add("widen");
		}
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
		assertThat(process.exitValue()).as(output).isZero();
		return output.lines().reduce((first, second) -> second).orElse("");
	}

	/**
	 * Prints the name of the thread that runs an async task, as the last line.
	 */
	static final class Probe {

		public static void main(String[] args) throws Exception {
			if (args.length > 0) {
				CoordinatorServer.useCommonPoolForAsyncTasks();
			}
			System.out.println(CompletableFuture.supplyAsync(() -> Thread.currentThread().getName()).get());
		}

	}

}
