package dev.tandem.sample;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.kafka.transaction.KafkaTransactionManager;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The flight router as Spring users write it today, for the chaos suite's best-effort faults: no
 * Tandem. Per poll of east's input, Spring's chained managers: a {@link KafkaTransactionManager}
 * for east (the records routed to east and the consumed offsets), one for west, and a
 * {@link DataSourceTransactionManager} for the rows ({@link FlightLedger#TABLE}), begun in that
 * order and committed in the reverse one (the database first, then west, then east with the
 * offsets), as Spring Data's deprecated {@code ChainedTransactionManager} does. A crash between
 * two commits leaves one without the others. The same records, headers and rows as
 * {@link FlightRouterApplication}.
 * <p>
 * Arguments ({@code --name=value}): {@code east}, {@code west} (bootstrap servers),
 * {@code input}, {@code output}, {@code group}, {@code run-id}, {@code incarnation},
 * {@code instance} (transactional ids), {@code database-url}, and for a fault {@code halt-at-step}
 * ({@code AFTER_DATABASE_COMMIT}: after the database committed, before west;
 * {@code MID_COMMIT}: after west, before east) with {@code halt-at-transaction} (1-based): the JVM
 * halts there (as {@code kill -9}) after logging {@code HALT at <step> of transaction <id>}.
 */
public final class BestEffortRouter {

	private static final ObjectMapper JSON = JsonMapper.builder().build();

	private BestEffortRouter() {
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> options = new HashMap<>();
		for (String arg : args) {
			int equals = arg.indexOf('=');
			options.put(arg.substring(2, equals), arg.substring(equals + 1));
		}
		String haltStep = options.getOrDefault("halt-at-step", "");
		int haltAt = Integer.parseInt(options.getOrDefault("halt-at-transaction", "0"));
		String runId = options.get("run-id");
		String incarnation = options.getOrDefault("incarnation", "");
		String output = options.get("output");
		Regions regions = Regions.load();

		DefaultKafkaProducerFactory<String, String> eastFactory = factory(options.get("east"),
				options.get("instance") + ".east.");
		DefaultKafkaProducerFactory<String, String> westFactory = factory(options.get("west"),
				options.get("instance") + ".west.");
		KafkaTransactionManager<String, String> east = new KafkaTransactionManager<>(eastFactory);
		KafkaTransactionManager<String, String> west = new KafkaTransactionManager<>(westFactory);
		KafkaTemplate<String, String> eastTemplate = new KafkaTemplate<>(eastFactory);
		KafkaTemplate<String, String> westTemplate = new KafkaTemplate<>(westFactory);
		SingleConnectionDataSource dataSource = new SingleConnectionDataSource(options.get("database-url"), true);
		DataSourceTransactionManager database = new DataSourceTransactionManager(dataSource);
		JdbcTemplate jdbc = new JdbcTemplate(dataSource);

		// Each factory's first transactional producer is initialized now, so that a restart fences the
		// killed run's producers at once: their open transactions abort (east's holds the group's offsets,
		// whose fetch waits for it) instead of pinning the partitions until transaction.timeout.ms.
		eastFactory.createProducer().close();
		westFactory.createProducer().close();
		Map<String, Object> consumerConfig = new HashMap<>();
		consumerConfig.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, options.get("east"));
		consumerConfig.put(ConsumerConfig.GROUP_ID_CONFIG, options.get("group"));
		consumerConfig.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
		consumerConfig.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
		consumerConfig.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
		consumerConfig.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 20);
		// as the Tandem router in the suite: static membership, so a restarted router gets its partitions at once
		consumerConfig.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, options.get("instance"));
		consumerConfig.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6000);
		int transactions = 0;
		try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerConfig, new StringDeserializer(),
				new StringDeserializer())) {
			consumer.subscribe(List.of(options.get("input")));
			while (true) {
				ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
				if (records.isEmpty()) {
					continue;
				}
				transactions++;
				String transactionId = "best-effort-" + incarnation + "-" + transactions;
				DefaultTransactionDefinition definition = new DefaultTransactionDefinition();
				TransactionStatus eastStatus = east.getTransaction(definition);
				TransactionStatus westStatus = west.getTransaction(definition);
				TransactionStatus databaseStatus = database.getTransaction(definition);
				Map<String, List<ProducerRecord<String, String>>> byCluster = new LinkedHashMap<>();
				Map<Integer, long[]> consumed = new java.util.TreeMap<>();
				Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
				List<Object[]> rows = new ArrayList<>();
				for (ConsumerRecord<String, String> record : records) {
					offsets.put(new TopicPartition(record.topic(), record.partition()),
							new OffsetAndMetadata(record.offset() + 1));
					long[] range = consumed.computeIfAbsent(record.partition(),
							(p) -> new long[] { record.offset(), record.offset() });
					range[0] = Math.min(range[0], record.offset());
					range[1] = Math.max(range[1], record.offset());
					ObjectNode flight = (ObjectNode) JSON.readTree(record.value());
					if (!runId.equals(flight.path("runId").asString(""))) {
						continue;
					}
					String cluster = regions.clusterOf(flight.get("origin").asString());
					flight.put("region", cluster);
					flight.put("src", record.partition() + ":" + record.offset());
					byCluster.computeIfAbsent(cluster, (c) -> new ArrayList<>())
						.add(new ProducerRecord<>(output, record.key(), JSON.writeValueAsString(flight)));
					rows.add(new Object[] { runId, flight.path("seq").asLong(-1), cluster, transactionId, incarnation });
				}
				byte[] counts = byCluster.entrySet().stream().map((e) -> e.getKey() + "=" + e.getValue().size())
					.collect(java.util.stream.Collectors.joining(",")).getBytes(StandardCharsets.UTF_8);
				byte[] input = consumed.entrySet().stream()
					.map((e) -> e.getKey() + ":" + e.getValue()[0] + "-" + e.getValue()[1])
					.collect(java.util.stream.Collectors.joining(",")).getBytes(StandardCharsets.UTF_8);
				byCluster.forEach((cluster, routed) -> {
					KafkaTemplate<String, String> template = Regions.WEST.equals(cluster) ? westTemplate : eastTemplate;
					for (ProducerRecord<String, String> record : routed) {
						record.headers().add(FlightRouterApplication.TRANSACTION_HEADER,
								transactionId.getBytes(StandardCharsets.UTF_8))
							.add(FlightRouterApplication.RECORDS_HEADER, counts)
							.add(FlightRouterApplication.INPUT_HEADER, input)
							.add(FlightRouterApplication.INCARNATION_HEADER, incarnation.getBytes(StandardCharsets.UTF_8));
						template.send(record);
					}
				});
				if (!rows.isEmpty()) {
					jdbc.batchUpdate("INSERT INTO " + FlightLedger.TABLE
							+ " (run_id, seq, cluster, transaction_id, incarnation) VALUES (?, ?, ?, ?, ?)", rows);
				}
				eastTemplate.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
				database.commit(databaseStatus);
				halt("AFTER_DATABASE_COMMIT", haltStep, haltAt, transactions, transactionId);
				west.commit(westStatus);
				halt("MID_COMMIT", haltStep, haltAt, transactions, transactionId);
				east.commit(eastStatus);
			}
		}
	}

	private static void halt(String step, String haltStep, int haltAt, int transaction, String transactionId) {
		if (step.equals(haltStep) && transaction == haltAt) {
			System.out.println("HALT at " + step + " of transaction " + transactionId);
			System.out.flush();
			Runtime.getRuntime().halt(137);
		}
	}

	private static DefaultKafkaProducerFactory<String, String> factory(String bootstrapServers, String prefix) {
		Map<String, Object> config = new HashMap<>();
		config.put("bootstrap.servers", bootstrapServers);
		DefaultKafkaProducerFactory<String, String> factory = new DefaultKafkaProducerFactory<>(config,
				new StringSerializer(), new StringSerializer());
		factory.setTransactionIdPrefix(prefix);
		return factory;
	}

}
