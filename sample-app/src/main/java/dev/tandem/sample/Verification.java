package dev.tandem.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

import dev.tandem.test.ReadCommitted;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * Checks the demo's outcome with {@code read_committed} reads of every topic: every input
 * flight of this run appears exactly once, on the cluster of its region, and the committed
 * source offsets equal the input's end offsets. Cross-checks the counts with {@code kcat}
 * (librdkafka, a client that is not Kafka's Java client) when it is installed.
 */
final class Verification {

	private static final ObjectMapper JSON = JsonMapper.builder().build();

	private final Map<String, String> bootstrapServers;

	private final String runId;

	private final String inputTopic;

	private final String outputTopic;

	private final List<String> problems = new ArrayList<>();

	private final Map<String, Object> facts = new LinkedHashMap<>();

	Verification(Map<String, String> bootstrapServers, String runId) {
		this(bootstrapServers, runId, FlightRouterApplication.INPUT, FlightRouterApplication.OUTPUT);
	}

	Verification(Map<String, String> bootstrapServers, String runId, String inputTopic, String outputTopic) {
		this.bootstrapServers = bootstrapServers;
		this.runId = runId;
		this.inputTopic = inputTopic;
		this.outputTopic = outputTopic;
	}

	/**
	 * Runs every check.
	 * @param regions the routing table
	 * @param loaded number of flights loaded by this run
	 * @param endOffsets end offsets of the input after loading
	 * @param group the pipeline's consumer group
	 * @return whether every check passed
	 */
	boolean verify(Regions regions, int loaded, Map<TopicPartition, Long> endOffsets, String group) {
		List<JsonNode> input = readRun(Regions.EAST, this.inputTopic);
		this.facts.put("records in (flights on east, read_committed)", input.size());
		check(input.size() == loaded, "input has " + input.size() + " records of this run, loaded " + loaded);

		Map<Long, String> expected = new HashMap<>();
		for (JsonNode flight : input) {
			expected.put(flight.get("seq").asLong(), regions.clusterOf(flight.get("origin").asString()));
		}
		Map<Long, Integer> seen = new HashMap<>();
		int misrouted = 0;
		for (String cluster : List.of(Regions.EAST, Regions.WEST)) {
			List<JsonNode> output = readRun(cluster, this.outputTopic);
			this.facts.put(this.outputTopic + " on " + cluster + " (read_committed)", output.size());
			long expectedHere = expected.values().stream().filter(cluster::equals).count();
			this.facts.put(this.outputTopic + " expected on " + cluster, expectedHere);
			for (JsonNode flight : output) {
				long seq = flight.get("seq").asLong();
				seen.merge(seq, 1, Integer::sum);
				if (!cluster.equals(expected.get(seq))) {
					misrouted++;
				}
			}
			Long kcat = kcatCount(cluster, this.outputTopic);
			if (kcat != null) {
				this.facts.put(this.outputTopic + " on " + cluster + " (kcat, read_committed)", kcat);
				check(kcat == output.size(), "kcat counts " + kcat + " on " + cluster + ", the Java client "
						+ output.size());
			}
		}
		long duplicates = seen.values().stream().filter((n) -> n > 1).mapToLong((n) -> n - 1).sum();
		long lost = expected.keySet().stream().filter((seq) -> !seen.containsKey(seq)).count();
		long unexpected = seen.keySet().stream().filter((seq) -> !expected.containsKey(seq)).count();
		this.facts.put("duplicates", duplicates);
		this.facts.put("lost", lost);
		this.facts.put("misrouted", misrouted);
		check(duplicates == 0, duplicates + " duplicated record(s)");
		check(lost == 0, lost + " lost record(s)");
		check(misrouted == 0, misrouted + " record(s) on the wrong cluster");
		check(unexpected == 0, unexpected + " output record(s) with no input");

		Map<TopicPartition, OffsetAndMetadata> offsets = committedOffsets(Regions.EAST, group);
		long committedTotal = 0;
		long endTotal = 0;
		for (Map.Entry<TopicPartition, Long> end : endOffsets.entrySet()) {
			OffsetAndMetadata offset = offsets.get(end.getKey());
			long committed = (offset != null) ? offset.offset() : -1;
			committedTotal += Math.max(committed, 0);
			endTotal += end.getValue();
			check(committed == end.getValue(), "committed offset of " + end.getKey() + " on east is " + committed
					+ ", input ends at " + end.getValue());
		}
		this.facts.put("committed source offsets on east (sum)", committedTotal);
		this.facts.put("input end offsets on east (sum)", endTotal);
		check(committedOffsets(Regions.WEST, group).isEmpty(), "consumer offsets leaked to west");
		return this.problems.isEmpty();
	}

	Map<String, Object> facts() {
		return this.facts;
	}

	List<String> problems() {
		return this.problems;
	}

	private void check(boolean ok, String problem) {
		if (!ok) {
			this.problems.add(problem);
		}
	}

	private List<JsonNode> readRun(String cluster, String topic) {
		List<JsonNode> result = new ArrayList<>();
		for (ConsumerRecord<byte[], byte[]> record : ReadCommitted.records(this.bootstrapServers.get(cluster), topic,
				Duration.ofMinutes(2))) {
			JsonNode value = JSON.readTree(record.value());
			if (this.runId.equals(value.path("runId").asString(""))) {
				result.add(value);
			}
		}
		return result;
	}

	private Map<TopicPartition, OffsetAndMetadata> committedOffsets(String cluster, String group) {
		try (Admin admin = Admin.create(Map.of("bootstrap.servers", this.bootstrapServers.get(cluster)))) {
			return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not read offsets of group " + group + " on " + cluster, ex);
		}
	}

	/**
	 * Counts this run's records with kcat, or returns null when kcat is not installed.
	 */
	private @Nullable Long kcatCount(String cluster, String topic) {
		List<String> command = List.of("kcat", "-C", "-b", this.bootstrapServers.get(cluster), "-t", topic, "-e", "-q",
				"-X", "isolation.level=read_committed", "-f", "%s\\n");
		Process process;
		try {
			process = new ProcessBuilder(command).redirectErrorStream(false).start();
		}
		catch (IOException ex) {
			return null;
		}
		String marker = "\"runId\":\"" + this.runId + "\"";
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
			long count = reader.lines().filter((line) -> line.contains(marker)).count();
			if (!process.waitFor(2, TimeUnit.MINUTES) || process.exitValue() != 0) {
				process.destroyForcibly();
				this.problems.add("kcat failed on " + cluster + " (exit " + (process.isAlive() ? "timeout" : process.exitValue()) + ")");
				return null;
			}
			return count;
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
