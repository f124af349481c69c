package dev.tandem.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Main class of one node (controller or broker) of a {@link KafkaProcessCluster}: formats the
 * node's log directory with Kafka's storage tool unless it is formatted already, then runs
 * Kafka's own {@code kafka.Kafka} main with the node's properties file.
 * <p>
 * The parent keeps this process's standard input open; when it reaches end of file (the
 * parent JVM ended, even by {@code kill -9}, without closing the cluster) the node halts at
 * once, so no orphaned broker keeps a port or a CPU busy.
 * <p>
 * Arguments: the cluster id, then the path of the node's {@code server.properties}.
 *
 * @author Tandem
 */
final class KafkaProcessMain {

	private static final Logger logger = LoggerFactory.getLogger(KafkaProcessMain.class);

	private KafkaProcessMain() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length != 2) {
			logger.error("Usage: KafkaProcessMain <cluster id> <server.properties>");
			Runtime.getRuntime().halt(2);
		}
		watchParent(System.in);
		// the storage tool reports on a stream; this process's output is the node's log file
		PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
		int formatted = kafka.tools.StorageTool
			.execute(new String[] { "format", "--cluster-id", args[0], "--config", args[1], "--ignore-formatted" }, out);
		if (formatted != 0) {
			logger.error("Kafka's storage tool failed with exit code {}", formatted);
			Runtime.getRuntime().halt(formatted);
		}
		kafka.Kafka.main(new String[] { args[1] });
	}

	private static void watchParent(InputStream in) {
		Thread watchdog = new Thread(() -> {
			try {
				while (in.read() != -1) {
					// the parent writes nothing; only the end of the stream matters
				}
			}
			catch (IOException ex) {
				// treated as end of stream
			}
			logger.warn("Parent process gone; halting");
			Runtime.getRuntime().halt(137);
		}, "tandem-parent-watchdog");
		watchdog.setDaemon(true);
		watchdog.start();
	}

}
