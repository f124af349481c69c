package dev.tandem.bench.throughput;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.transaction.CrossClusterProcessor;
import dev.tandem.transaction.DecisionLog;

/**
 * Contender (d), Tandem pipelined: a {@link CrossClusterProcessor} on the source consumer, with
 * {@code depth} transactions in flight, each closed after {@code maxRecords} records or when
 * {@code maxInterval} old, whichever comes first; the handler sends every polled record to the
 * target cluster and the processor adds the source offsets.
 *
 * @since 0.1.0
 */
final class PipelinedCopier extends TandemCopier {

	private static final Logger logger = LoggerFactory.getLogger(PipelinedCopier.class);

	private final int depth;

	private final int maxRecords;

	private final Duration maxInterval;

	private final boolean closeWhenIdle;

	private @Nullable CrossClusterProcessor<byte[], byte[]> processor;

	PipelinedCopier(String name, Copier.Route route, ClientSettings settings, Map<String, String> bootstrapServers,
			DecisionLog decisionLog, @Nullable Integer slots, int depth, int maxRecords, Duration maxInterval,
			boolean closeWhenIdle) {
		super(name, route, settings, bootstrapServers, decisionLog, slots);
		this.depth = depth;
		this.maxRecords = maxRecords;
		this.maxInterval = maxInterval;
		this.closeWhenIdle = closeWhenIdle;
	}

	@Override
	void subscribe(CopyProbe probe) {
		String targetCluster = this.route.targetCluster();
		String targetTopic = this.route.targetTopic();
		this.processor = CrossClusterProcessor.<byte[], byte[]>builder(Objects.requireNonNull(this.manager),
				Objects.requireNonNull(this.consumer))
			.subscribe(this.route.sourceTopics())
			.depth(this.depth)
			.maxRecords(this.maxRecords)
			.maxInterval(this.maxInterval)
			.closeWhenIdle(this.closeWhenIdle)
			.handler((records, txn) -> {
				probe.polled();
				for (ConsumerRecord<byte[], byte[]> record : records) {
					txn.send(targetCluster, Copier.copyOf(record, targetTopic));
				}
			})
			.listener(new CrossClusterProcessor.ProcessorListener() {

				@Override
				public void onCommitted(String transactionId, int records, Map<TopicPartition, OffsetAndMetadata> next) {
					probe.completed();
				}

				@Override
				public void onAborted(String transactionId, Throwable cause) {
					logger.warn("Transaction {} aborted: {}", transactionId, cause.toString());
				}

			})
			.build();
	}

	@Override
	void step(CopyProbe probe) {
		Objects.requireNonNull(this.processor).poll(POLL_TIMEOUT);
	}

	@Override
	void closeProcessing() {
		if (this.processor != null) {
			this.processor.close();
		}
	}

}
