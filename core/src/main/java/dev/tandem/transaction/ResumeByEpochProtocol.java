package dev.tandem.transaction;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.errors.InvalidPidMappingException;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.tandem.clients.BoundedAdmin;
import dev.tandem.transaction.Decision.ParticipantRecord;
import dev.tandem.transaction.internals.ProducerInternals;
import dev.tandem.transaction.internals.ProducerInternals.ProducerIdentity;

/**
 * Completes a prepared participant by resuming its producer id and epoch in a fresh producer and
 * calling {@code commitTransaction()} (the technique of Flink's Kafka connector), before any
 * {@code initTransactions()} on that transactional id, which would abort it. The resumed producer
 * runs the transaction protocol the participant used (V1 or V2, KIP-890) as its decision recorded
 * it; only a decision that did not record it has the cluster's {@code transaction.version} feature
 * read at recovery time (a cluster whose feature changed since would be resumed wrongly: FLINK-40689).
 * <p>
 * Thread-safe: every call uses its own producer.
 *
 * @since 0.1.0
 */
public class ResumeByEpochProtocol implements ParticipantProtocol {

	private static final Logger logger = LoggerFactory.getLogger(ResumeByEpochProtocol.class);

	@Override
	public boolean commitPrepared(ParticipantRecord participant, Map<String, Object> producerConfig,
			Duration timeout) {
		// what the transaction used, as its decision recorded it; the cluster's feature only for older decisions
		boolean transactionV2 = participant.transactionVersionKnown()
				? participant.transactionVersion() == ParticipantRecord.TRANSACTION_V2
				: transactionV2(producerConfig, timeout);
		Map<String, Object> config = new HashMap<>(producerConfig);
		config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, participant.transactionalId());
		config.put(ProducerConfig.CLIENT_ID_CONFIG, participant.transactionalId() + "-recovery");
		config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout.toMillis());
		KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config, new ByteArraySerializer(),
				new ByteArraySerializer());
		try {
			ProducerInternals.resume(producer, new ProducerIdentity(participant.producerId(),
					participant.producerEpoch(), transactionV2));
			producer.commitTransaction();
			logger.info("Committed resumed transaction of {} on cluster '{}' (producerId={}, epoch={}, transactions {})",
					participant.transactionalId(), participant.cluster(), participant.producerId(),
					participant.producerEpoch(), transactionV2 ? "V2" : "V1");
			producer.close(timeout);
			return true;
		}
		catch (ProducerFencedException | InvalidTxnStateException | InvalidProducerEpochException
				| InvalidPidMappingException ex) {
			logger.info("Broker refused resumed commit of {} on cluster '{}' (producerId={}, epoch={}): {}",
					participant.transactionalId(), participant.cluster(), participant.producerId(),
					participant.producerEpoch(), ex.toString());
			producer.close(Duration.ZERO);
			return false;
		}
		catch (RuntimeException ex) {
			producer.close(Duration.ZERO);
			throw ex;
		}
	}

	private static boolean transactionV2(Map<String, Object> clientConfig, Duration timeout) {
		Admin admin = BoundedAdmin.create(clientConfig, timeout);
		try {
			FeatureMetadata features = admin.describeFeatures().featureMetadata()
				.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
			FinalizedVersionRange range = features.finalizedFeatures().get("transaction.version");
			return range != null && range.maxVersionLevel() >= 2;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new TandemException("Interrupted while reading transaction.version", ex);
		}
		catch (Exception ex) {
			throw new TandemException("Could not read the transaction.version feature of the cluster at "
					+ clientConfig.get(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG), ex);
		}
		finally {
			admin.close(Duration.ofSeconds(1));
		}
	}

}
