package dev.tandem.bench.throughput;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.jspecify.annotations.Nullable;

import dev.tandem.transaction.CrossClusterTransaction;
import dev.tandem.transaction.CrossClusterTransactionManager;
import dev.tandem.transaction.CrossClusterTransactionManagerBuilder;
import dev.tandem.transaction.DecisionLog;

/**
 * Contender (c), Tandem sequential, the core API one transaction at a time: per poll,
 * {@code manager.begin()}, send every record to the target cluster,
 * {@code sendOffsets(consumer, offsets)} (committed on the source cluster), {@code commit()}.
 * Also the base of the pipelined contender, which shares the manager's set-up.
 *
 * @since 0.1.0
 */
class TandemCopier extends LoopCopier {

	/** The source cluster's name in the manager. */
	static final String SOURCE = "east";

	final Copier.Route route;

	private final ClientSettings settings;

	private final Map<String, String> bootstrapServers;

	private final DecisionLog decisionLog;

	private final @Nullable Integer slots;

	private final String instanceId;

	private final Map<String, List<Producer<?, ?>>> producers = new LinkedHashMap<>();

	private Map<String, TransactionTimes> times = Map.of();

	@Nullable CrossClusterTransactionManager manager;

	@Nullable KafkaConsumer<byte[], byte[]> consumer;

	TandemCopier(String name, Copier.Route route, ClientSettings settings, Map<String, String> bootstrapServers,
			DecisionLog decisionLog, @Nullable Integer slots) {
		super(name);
		this.route = route;
		this.settings = settings;
		this.bootstrapServers = bootstrapServers;
		this.decisionLog = decisionLog;
		this.slots = slots;
		this.instanceId = route.groupId();
	}

	@Override
	void open(CopyProbe probe) {
		CrossClusterTransactionManagerBuilder builder = CrossClusterTransactionManager.builder()
			.idPrefix("tbench")
			.instanceId(this.instanceId)
			.decisionLog(this.decisionLog)
			.producerCreated((cluster, producer) -> {
				synchronized (this.producers) {
					this.producers.computeIfAbsent(cluster, (c) -> new ArrayList<>()).add(producer);
				}
			});
		if (this.slots != null) {
			builder.slots(this.slots);
		}
		this.bootstrapServers.forEach((cluster, servers) -> {
			Map<String, Object> config = this.settings.shared();
			config.put("bootstrap.servers", servers);
			builder.cluster(cluster, config);
		});
		CrossClusterTransactionManager manager = builder.build();
		manager.start();
		this.manager = manager;
		Map<String, Object> overrides = this.settings.consumer(this.bootstrapServers.get(SOURCE), this.route.groupId());
		overrides.remove("bootstrap.servers");
		this.consumer = manager.createConsumer(SOURCE, overrides, new ByteArrayDeserializer(),
				new ByteArrayDeserializer());
		subscribe(probe);
	}

	void subscribe(CopyProbe probe) {
		Objects.requireNonNull(this.consumer).subscribe(this.route.sourceTopics());
	}

	@Override
	void step(CopyProbe probe) {
		CrossClusterTransactionManager manager = Objects.requireNonNull(this.manager);
		KafkaConsumer<byte[], byte[]> consumer = Objects.requireNonNull(this.consumer);
		ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL_TIMEOUT);
		if (records.isEmpty()) {
			return;
		}
		probe.polled();
		CrossClusterTransaction txn = manager.begin();
		try {
			for (ConsumerRecord<byte[], byte[]> record : records) {
				txn.send(this.route.targetCluster(), Copier.copyOf(record, this.route.targetTopic()));
			}
			txn.sendOffsets(consumer, nextOffsets(records));
		}
		catch (RuntimeException ex) {
			txn.abort();
			throw ex;
		}
		txn.commit();
		probe.completed();
	}

	@Override
	void finish() throws Exception {
		try {
			closeProcessing();
		}
		finally {
			Map<String, TransactionTimes> read = new LinkedHashMap<>();
			synchronized (this.producers) {
				this.producers.forEach((cluster, list) -> read.put(cluster, TransactionTimes.of(list)));
			}
			this.times = read;
			if (this.consumer != null) {
				if (this.manager != null) {
					this.manager.unregisterConsumer(this.consumer);
				}
				this.consumer.close();
			}
			if (this.manager != null) {
				this.manager.close();
			}
		}
	}

	/**
	 * Finishes what is open before the clients close (the pipelined contender commits and drains).
	 */
	void closeProcessing() throws Exception {
	}

	@Override
	public Map<String, TransactionTimes> transactionTimes() {
		return this.times;
	}

}
