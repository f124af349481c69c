package dev.tandem.sample;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import dev.tandem.test.EmbeddedKafkaCluster;
import dev.tandem.test.EmbeddedKafkaClusters;

/**
 * One embedded 3-broker KRaft cluster in its own JVM, for the chaos suite: writes its bootstrap
 * servers to a file, then obeys commands on standard input, one a line, answering {@code ok} or
 * {@code error <message>}: {@code create <topic> <partitions>}, {@code stop <broker>},
 * {@code restart <broker>}, {@code leader <topic> <partition>}, {@code brokers},
 * {@code move <topic>}, {@code quit}.
 * <p>
 * Brokers look for transactions past their {@code transaction.timeout.ms} every second (Kafka's
 * default is every 10 s), so the suite's heuristic-outcome fault does not wait long.
 */
public final class ClusterHost {

	private ClusterHost() {
	}

	public static void main(String[] args) throws Exception {
		String name = args[0];
		Path bootstrapFile = Path.of(args[1]);
		PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
		try (EmbeddedKafkaClusters clusters = EmbeddedKafkaClusters.builder()
			.cluster(name, 3, Map.of("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000"))
			.build()
			.start()) {
			EmbeddedKafkaCluster cluster = clusters.cluster(name);
			Files.writeString(bootstrapFile, cluster.bootstrapServers());
			out.println("ready " + cluster.bootstrapServers());
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String line;
			while ((line = in.readLine()) != null) {
				String[] words = line.trim().split("\\s+");
				try {
					switch (words[0]) {
						case "create" -> cluster.createTopic(words[1], Integer.parseInt(words[2]), (short) 3,
								Map.of("min.insync.replicas", "2"));
						case "stop" -> cluster.stopBroker(Integer.parseInt(words[1]));
						case "restart" -> cluster.restartBroker(Integer.parseInt(words[1]));
						case "move" -> cluster.moveLeadership(words[1]);
						case "leader" -> {
							out.println("ok " + cluster.leader(new org.apache.kafka.common.TopicPartition(words[1],
									Integer.parseInt(words[2]))));
							continue;
						}
						case "brokers" -> {
							out.println("ok " + cluster.brokerIds());
							continue;
						}
						case "quit" -> {
							out.println("ok");
							return;
						}
						default -> throw new IllegalArgumentException("unknown command " + words[0]);
					}
					out.println("ok");
				}
				catch (RuntimeException ex) {
					out.println("error " + String.valueOf(ex.getMessage()).replace('\n', ' '));
				}
			}
		}
	}

}
