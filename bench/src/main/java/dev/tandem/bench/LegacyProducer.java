package dev.tandem.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Parent side of the pre-KIP-951 producer: starts {@link LegacyProducerMain} in a separate
 * JVM whose class path is this JVM's without any Kafka jar, plus the legacy kafka-clients
 * jar, and feeds its output into a {@link LatencyLog}.
 *
 * @author Tandem
 * @since 0.1.0
 */
final class LegacyProducer implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(LegacyProducer.class);

	private final Process process;

	private final Thread reader;

	private final CountDownLatch ready = new CountDownLatch(1);

	private final CountDownLatch done = new CountDownLatch(1);

	private volatile String version = "unknown";

	LegacyProducer(Path legacyJar, String clientId, Map<String, String> properties, String bootstrapServers,
			String topic, int partitions, int rate, Path data, LatencyLog log) throws IOException {
		List<String> classPath = new ArrayList<>();
		classPath.add(legacyJar.toString());
		for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
			String name = Path.of(entry).getFileName().toString();
			if (!entry.contains("org" + File.separator + "apache" + File.separator + "kafka")
					&& !name.startsWith("kafka")) {
				classPath.add(entry);
			}
		}
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx256m", "-cp", String.join(File.pathSeparator, classPath), LegacyProducerMain.class.getName(),
				bootstrapServers, topic, Integer.toString(partitions), Integer.toString(rate), data.toString(), clientId));
		properties.forEach((key, value) -> command.add(key + "=" + value));
		this.process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
		this.reader = new Thread(() -> read(log), "legacy-producer-reader");
		this.reader.setDaemon(true);
		this.reader.start();
	}

	private void read(LatencyLog log) {
		try (BufferedReader in = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.US_ASCII))) {
			String line;
			while ((line = in.readLine()) != null) {
				if (line.startsWith("READY")) {
					this.version = line.substring(5).trim();
					this.ready.countDown();
				}
				else if (line.equals("DONE")) {
					this.done.countDown();
				}
				else {
					String[] fields = line.split(" ");
					if (fields.length == 3) {
						log.add(Long.parseLong(fields[0]), Long.parseLong(fields[1]), fields[2].equals("1"));
					}
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			logger.warn("Lost the legacy producer's output", ex);
		}
		finally {
			this.ready.countDown();
			this.done.countDown();
		}
	}

	/**
	 * Wait until the legacy producer runs.
	 * @return the kafka-clients version it reported
	 */
	String awaitReady() throws InterruptedException {
		if (!this.ready.await(60, TimeUnit.SECONDS) || !this.process.isAlive()) {
			throw new IllegalStateException("The legacy producer JVM did not start");
		}
		return this.version;
	}

	@Override
	public void close() throws Exception {
		try (OutputStream in = this.process.getOutputStream()) {
			in.write("STOP\n".getBytes(StandardCharsets.US_ASCII));
			in.flush();
		}
		catch (IOException ex) {
			// already gone
		}
		if (!this.done.await(60, TimeUnit.SECONDS)) {
			logger.warn("Legacy producer did not finish; destroying it");
		}
		this.process.waitFor(10, TimeUnit.SECONDS);
		this.process.destroy();
		this.reader.join(10_000);
	}

}
