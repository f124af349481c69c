package dev.tandem.sample;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the whole demo on embedded clusters, with its leadership move and hard stop, and checks
 * its own verification.
 */
class FlightRoutingDemoTests {

	private static final String LEASE_TIMEOUT = "tandem.transaction.lease-timeout";

	@Test
	void demoRoutesEveryFlightExactlyOnceAcrossAHardStopAndALeaderMove(@TempDir Path dataDir) {
		ByteArrayOutputStream buffer = new ByteArrayOutputStream();
		PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8);
		DemoSettings settings = new DemoSettings(null, null, dataDir.resolve("coordinator"), null, 200, 20, 40);
		// The restarted router waits for the hard-stopped one's lease and heartbeat to expire:
		// 3 s here, the default 10 s in the demo; the app reads system properties.
		int status;
		System.setProperty(LEASE_TIMEOUT, "3s");
		try {
			status = new FlightRoutingDemo(settings, out).run();
		}
		finally {
			System.clearProperty(LEASE_TIMEOUT);
		}
		String report = buffer.toString(StandardCharsets.UTF_8);
		assertThat(status).as(report).isZero();
		assertThat(report).contains("RESULT: PASS")
			.containsPattern("in-doubt transactions recovered after the hard stop\\s+1\\b")
			.containsPattern("input records of the run \\(read_committed\\)\\s+20000\\b")
			.containsPattern("output on east \\(read_committed, Java client\\)\\s+14457\\b")
			.containsPattern("output on west \\(read_committed, Java client\\)\\s+5543\\b")
			.containsPattern("duplicated\\s+0\\b")
			.containsPattern("lost\\s+0\\b")
			.containsPattern("aborted-but-visible transactions\\s+0\\b")
			.containsPattern("keys out of input order\\s+0\\b")
			.containsPattern("leadership move on west\\s+6 partitions moved");
		if (kcatInstalled()) {
			assertThat(report).containsPattern("output on east \\(read_committed, kcat\\)\\s+14457\\b")
				.doesNotContain(Verification.KCAT_SKIPPED);
		}
		else {
			// the demo says so rather than leaving the independent check out silently
			assertThat(report).containsPattern(Verification.KCAT_SKIPPED + "\\s+kcat is not installed");
		}
	}

	private static boolean kcatInstalled() {
		String path = System.getenv("PATH");
		return path != null && java.util.Arrays.stream(path.split(java.io.File.pathSeparator))
			.anyMatch((dir) -> java.nio.file.Files.isExecutable(Path.of(dir, "kcat")));
	}

}
