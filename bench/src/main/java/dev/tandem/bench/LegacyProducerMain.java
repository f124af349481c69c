package dev.tandem.bench;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Entry point of the separate JVM that runs a pre-KIP-951 kafka-clients (3.6.x) producer
 * with its default settings; started by {@link LegacyProducer}. Arguments: bootstrap servers,
 * topic, partitions, rate per second, flights file, and optionally a client id and producer
 * properties as {@code key=value} arguments (such as {@code acks=1}). Prints {@code READY}, then one line
 * {@code <sentAtMs> <latencyMicros> <0|1 failed>} per record on standard output, and stops
 * (flushing every record) when standard input says {@code STOP} or closes.
 *
 * @author Tandem
 * @since 0.1.0
 */
public final class LegacyProducerMain {

	private LegacyProducerMain() {
	}

	/**
	 * Run the legacy producer.
	 * @param args bootstrap servers, topic, partitions, rate, flights file[, client id[,
	 * key=value...]]
	 * @throws Exception on any failure (the parent sees the process end)
	 */
	public static void main(String[] args) throws Exception {
		String bootstrapServers = args[0];
		String topic = args[1];
		int partitions = Integer.parseInt(args[2]);
		int rate = Integer.parseInt(args[3]);
		FlightRecords records = FlightRecords.read(Path.of(args[4]));
		PrintWriter out = new PrintWriter(
				new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.US_ASCII), 1 << 16));
		Map<String, Object> properties = new HashMap<>();
		properties.put("bootstrap.servers", bootstrapServers);
		String clientId = (args.length > 5) ? args[5] : "legacy";
		properties.put("client.id", clientId);
		for (int i = 6; i < args.length; i++) {
			int equals = args[i].indexOf('=');
			properties.put(args[i].substring(0, equals), args[i].substring(equals + 1));
		}
		ProducerLoop loop = new ProducerLoop(clientId, properties, topic, partitions, rate, records,
				(sentAtMs, latencyMicros, failed) -> {
					synchronized (out) {
						out.print(sentAtMs);
						out.print(' ');
						out.print(latencyMicros);
						out.print(failed ? " 1\n" : " 0\n");
					}
				});
		Thread flusher = new Thread(() -> {
			while (!Thread.currentThread().isInterrupted()) {
				synchronized (out) {
					out.flush();
				}
				try {
					Thread.sleep(100);
				}
				catch (InterruptedException ex) {
					return;
				}
			}
		}, "legacy-flusher");
		flusher.setDaemon(true);
		synchronized (out) {
			out.print("READY " + org.apache.kafka.common.utils.AppInfoParser.getVersion() + "\n");
			out.flush();
		}
		loop.start();
		flusher.start();
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
		String line;
		while ((line = in.readLine()) != null && !line.trim().equals("STOP")) {
			// wait for STOP
		}
		loop.close();
		flusher.interrupt();
		synchronized (out) {
			out.print("DONE\n");
			out.flush();
		}
	}

}
